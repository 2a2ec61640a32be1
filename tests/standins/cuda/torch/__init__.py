"""A stand-in for ``torch`` (no GPU needed): only what ``run --profiler torch`` uses.

Put ``tests/standins`` on PYTHONPATH to use it. ``torch.profiler`` follows the
documented API (profile, schedule, tensorboard_trace_handler, ProfilerActivity) and
writes generator output (``synth.kineto``) when a trace is ready;
``torch.optim.optimizer.register_optimizer_step_post_hook`` is served too. Every call
is appended as a JSON line to the file named by ``FAKE_TORCH_LOG``.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

__version__ = "2.5.0.fake"


def record(call: str, **fields: Any) -> None:
    """Append one call to $FAKE_TORCH_LOG (no-op when unset)."""
    path = os.environ.get("FAKE_TORCH_LOG")
    if not path:
        return
    entry = {"call": call, "pid": os.getpid(), "time_ns": time.time_ns(), **fields}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry, default=str) + "\n")
