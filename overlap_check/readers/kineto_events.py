"""The events of a PyTorch profiler (Kineto) trace as msgspec decodes them: only the keys
the readers use, times kept as their raw decimal text (docs/formats.md).
"""

from __future__ import annotations

from typing import Any

import msgspec


class Args(msgspec.Struct, gc=False):
    device: Any = None
    stream: Any = None
    correlation: Any = None
    grid: Any = None


class Event(msgspec.Struct, gc=False):
    ph: Any = None
    cat: Any = None
    name: Any = None
    pid: Any = None
    tid: Any = None
    ts: msgspec.Raw = msgspec.Raw()
    dur: msgspec.Raw = msgspec.Raw()
    args: Args | None = None


def raw_text(raw: msgspec.Raw) -> str | None:
    """A ``ts`` / ``dur`` as its JSON text, quotes kept; None when absent."""
    text = bytes(raw).decode("utf-8", "replace")
    return text or None
