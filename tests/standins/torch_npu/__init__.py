"""A stand-in for ``torch_npu`` (no NPU needed): only the profiler API surface.

Put ``tests/standins`` on PYTHONPATH to use it. Every call is appended as a
JSON line to the file named by ``FAKE_TORCH_NPU_LOG``; see ``profiler``.
Like the real package, importing ``torch_npu`` does not import
``torch_npu.profiler``.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

__version__ = "2.6.0.fake"

# Phases the workload announces with phase(); recorded with the profilers active then.
ACTIVE_PROFILERS: list[Any] = []


def record(call: str, **fields: Any) -> None:
    """Append one call to $FAKE_TORCH_NPU_LOG (no-op when unset)."""
    path = os.environ.get("FAKE_TORCH_NPU_LOG")
    if not path:
        return
    entry = {"call": call, "pid": os.getpid(), "time_ns": time.time_ns(), **fields}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, default=str) + "\n")


def phase(name: str) -> None:
    """The workload says what it is doing now (e.g. "load", "generate")."""
    for prof in ACTIVE_PROFILERS:
        prof.phases.append(name)
    record("phase", name=name, profiling=bool(ACTIVE_PROFILERS))


record("import", rank=os.environ.get("RANK"))
