"""Core limits: which cores a device has (``device``), the per-kernel rules of one run and
the runs added up (``rules``), the contention sweep of one run (``contention``). The names
the rest of the package uses are importable from here."""

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
