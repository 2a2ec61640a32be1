"""``overlap_check.profile()``: narrow the capture window of ``overlap-check run``.

Under ``overlap-check run`` the payload (``inject/sitecustomize.py``) registers itself as
``sys.modules["_overlap_check_payload"]`` and ``profile()`` hands the block to it. Window
``auto`` (default): the first block discards the process-wide capture and captures only
itself; ``explicit``: only the first block is captured; ``process``: blocks are ignored.
Only a process's *first* block is captured, so each leaves one result dir per run (docs/
run.md). Outside ``run`` it does nothing and never imports torch_npu. Usable as ``with
overlap_check.profile():`` or as a decorator.
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
