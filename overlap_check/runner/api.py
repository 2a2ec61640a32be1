"""``overlap_check.profile()``: narrow the capture window of ``overlap-check run``.

Under ``overlap-check run --profiler torch_npu`` the payload (our
``sitecustomize``) is loaded in the workload and registers itself as
``sys.modules["_overlap_check_payload"]``. ``profile()`` hands the block to it:

- window ``auto`` (default): the first block entered in a process stops and
  deletes the process-wide capture (model loading and the like) and captures
  only the block; the process-wide capture is not restarted afterwards.
- window ``explicit`` (``run --window explicit``): there is no process-wide
  capture at all; only the first block is captured.
- window ``process``: blocks are ignored; the whole process is captured.

In every mode only the *first* block of a process is captured (later blocks,
and blocks nested in it, run unprofiled), so each process leaves one result
directory per run. Outside ``run`` (no payload) it does nothing and never
imports torch_npu. Usable as ``with overlap_check.profile():`` or as a
decorator ``@overlap_check.profile()``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

PAYLOAD_MODULE = "_overlap_check_payload"


@contextlib.contextmanager
def profile() -> Iterator[None]:
    """Profile only this block when running under ``overlap-check run``; else a no-op."""
    payload = sys.modules.get(PAYLOAD_MODULE)
    if payload is None:
        yield
        return
    opened = bool(payload.window_enter())
    try:
        yield
    finally:
        payload.window_exit(opened)


def under_run() -> bool:
    """True when this process was started by ``overlap-check run`` with the payload."""
    return PAYLOAD_MODULE in sys.modules
