"""Core limits: which cores a device has, which limits govern a kernel, and whether the
kernels kept to them alone (rules) and together (contention).

- ``device``: the device's cores (info.json, config, the SoC table, a ``.ini``);
- ``rules``: the per-kernel rules of one run, the configured limits, the runs added up;
- ``contention``: the contention sweep of one run.

The names the rest of the package uses are importable from here.
"""

from overlap_check.measure.cores.contention import (
    Above,
    ContentionEvidence,
    RunContention,
    contention_at,
    contention_evidence,
    observed_maxima,
)
from overlap_check.measure.cores.device import resolve_device, sweep_cores
from overlap_check.measure.cores.rules import (
    Limits,
    RunRules,
    combine_cores,
    configured_limits,
    run_rules,
)

__all__ = [
    "Above",
    "ContentionEvidence",
    "Limits",
    "RunContention",
    "RunRules",
    "combine_cores",
    "configured_limits",
    "contention_at",
    "contention_evidence",
    "observed_maxima",
    "resolve_device",
    "run_rules",
    "sweep_cores",
]
