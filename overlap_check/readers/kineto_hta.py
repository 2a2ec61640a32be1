"""HolisticTraceAnalysis' communication/compute overlap of one Kineto trace, reproduced.

HTA's rules, and how they differ from ours: docs/formats.md, "PyTorch profiler
(Kineto) traces", communication/compute overlap. Its float64 rounding is done on
purpose, so the figure is HTA's own.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from overlap_check.model.intervals import intersection_length, union_length
from overlap_check.readers.kineto_events import Event, raw_text


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text.strip('"'))
    except ValueError:
        return None


def _stream(event: Event) -> Any:
    args = event.args
    stream = args.stream if args is not None else None
    return stream if isinstance(stream, int) and not isinstance(stream, bool) else -1


def _correlation(event: Event) -> int:
    value = event.args.correlation if event.args is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def hta_comm_overlap(events: list[Event]) -> float | None:
    """HTA's ``comp_comm_overlap_pctg`` of one rank's trace (module docstring)."""
    texts = [raw_text(e.ts) for e in events]
    rounded = any(t is None or not t.lstrip("-").isdigit() for t in texts)
    timed = [
        (e, ts, dur)
        for e, t in zip(events, texts, strict=True)
        if e.ph == "X"
        and e.cat is not None
        and e.cat != "Trace"
        and (ts := _float(t)) is not None
        and (dur := _float(raw_text(e.dur))) is not None
    ]
    steps = [
        (e, ts)
        for e, ts, _ in timed
        if isinstance(e.name, str) and e.name.startswith("ProfilerStep") and _stream(e) == -1
    ]
    kept: set[int] | None = None
    if len({e.name for e, _ in steps}) > 1:
        last = max((math.ceil(ts) if rounded else ts) for _, ts in steps)
        kept = {
            _correlation(e)
            for e, ts, _ in timed
            if _stream(e) == -1 and (math.ceil(ts) if rounded else ts) < last
        }
    spans: dict[str, list[tuple[float, float]]] = {"comm": [], "comp": []}
    for e, ts, dur in timed:
        if _stream(e) == -1 or (kept is not None and _correlation(e) not in kept):
            continue
        name = e.name if isinstance(e.name, str) else ""
        if "Memcpy" in name or "Memset" in name:
            continue
        start, end = (math.ceil(ts), math.floor(ts + dur)) if rounded else (ts, ts + dur)
        spans["comm" if "ncclKernel" in name else "comp"].append((start, end))
    if not spans["comm"]:
        return None

    def arrays(key: str) -> tuple[np.ndarray, np.ndarray]:
        pairs = np.array(spans[key] or [(0, 0)], dtype=np.int64).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]

    comm, comp = arrays("comm"), arrays("comp")
    busy = union_length(*comm)
    if busy <= 0:
        return None
    return round(100 * intersection_length(*comm, *comp) / busy, 2)
