"""overlap-check: is an Ascend multi-stream plan really parallel? The profiler timeline says.

Library entry points (imported lazily so that ``overlap-check --help`` stays instant):

- :func:`load` — read profiler output into :class:`~overlap_check.model.Capture` objects.
- :func:`check` — analyse captures into a :class:`~overlap_check.model.Report`.
- :func:`profile` — narrow the capture window of ``overlap-check run`` (no-op otherwise)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
# polars' allocator (jemalloc, on Linux) handing freed pages back after 0.1 s, not 0.5-1 s:
# set by the console entry unless the user set it; read as polars loads (docs/architecture.md)
ALLOCATOR = ("_RJEM_MALLOC_CONF", "dirty_decay_ms:100,muzzy_decay_ms:0")
# unset, or polars' own defaults (2.x, 1.x) that a parent process importing polars passes on
_POLARS_DECAY = "dirty_decay_ms:500,muzzy_decay_ms:"
UNSET_ALLOCATOR = ("", f"{_POLARS_DECAY}1000", f"{_POLARS_DECAY}-1")


def allocator_is_ours() -> bool:
    """This process runs with ALLOCATOR (polars appends the setting to its own defaults)."""
    return os.environ.get(ALLOCATOR[0], "").endswith(ALLOCATOR[1])


if TYPE_CHECKING:
    from overlap_check.judge.pipeline import check
    from overlap_check.readers import load
    from overlap_check.runner.api import profile

__all__ = ["__version__", "check", "load", "profile"]


def __getattr__(name: str) -> Any:
    if name == "load":
        from overlap_check.readers import load

        return load
    if name == "check":
        from overlap_check.judge.pipeline import check

        return check
    if name == "profile":
        from overlap_check.runner.api import profile

        return profile
    raise AttributeError(f"module 'overlap_check' has no attribute {name!r}")
