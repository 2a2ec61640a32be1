"""``overlap_check.profile()``: narrow the capture window of ``overlap-check run``.

Under ``run`` the payload (``inject/sitecustomize.py``) registers itself as
``sys.modules["_overlap_check_payload"]`` and ``profile()`` hands the block to it (the window
modes: docs/run.md). Outside ``run`` it does nothing and never imports torch_npu."""

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
