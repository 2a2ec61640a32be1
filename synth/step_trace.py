"""step_trace_time.csv, consistent with the trace's Overlap Analysis (docs/formats.md).

Per step: Computing / Communication / Communication(Not Overlapped) / Free are
sums of the Overlap Analysis intervals falling in the step (µs as Python floats,
summed event by event so the values carry float noise like real files);
Overlapped = Communication - Not Overlapped; Bubble 0; Stage = span of device
activity; Preparing = first device task - ProfilerStep start.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from synth.overlap_analysis import overlap_sets
from synth.rows import Frames

_BASE = (
    "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
    "Communication(Not Overlapped and Exclude Receive)"
)


def header(version: str) -> str:
    if version == "2023":
        return _BASE
    return ("Device_id," if version == "2026" else "") + _BASE + ",Preparing"


def _clipped_sum_us(intervals: tuple[np.ndarray, np.ndarray], lo: int, hi: int) -> float:
    starts = np.clip(intervals[0], lo, hi)
    ends = np.clip(intervals[1], lo, hi)
    total = 0.0
    for length in (ends - starts).tolist():
        if length > 0:
            total += length / 1000
    return total


def _row(frames: Frames, step: str, lo: int, hi: int, step_start: int | None) -> list[str]:
    sets = overlap_sets(frames)
    computing = _clipped_sum_us(sets.computing, lo, hi)
    communication = _clipped_sum_us(sets.communication, lo, hi)
    not_overlapped = _clipped_sum_us(sets.not_overlapped, lo, hi)
    free = _clipped_sum_us(sets.free, lo, hi)
    k = frames.kernels
    inside = k.filter((k["start_ns"] >= lo) & (k["start_ns"] < hi))
    starts = inside.get_column("start_ns").to_numpy()
    ends = starts + inside.get_column("dur_ns").to_numpy()
    first = int(starts.min()) if inside.height else lo
    last = int(ends.max()) if inside.height else lo
    preparing = (first - step_start) / 1000 if step_start is not None else 0.0
    values = [
        computing,
        not_overlapped,
        communication - not_overlapped,
        communication,
        free,
        (last - first) / 1000,
    ]
    return [step, *(repr(v) for v in values), "0", repr(not_overlapped), repr(preparing)]


def write_step_trace(
    path: Path,
    frames: Frames,
    steps: tuple[tuple[int, int, int], ...],
    version: str,
    device: int,
    crlf: bool,
) -> None:
    rows = []
    if steps:
        for step, start, end in steps:
            rows.append(_row(frames, str(step), start, end, start))
    else:
        rows.append(_row(frames, "", -(2**62), 2**62, None))
    eol = "\r\n" if crlf else "\n"
    lines = [header(version)]
    for row in rows:
        if version == "2023":
            row = row[:-1]
        if version == "2026":
            row = [str(device), *row]
        lines.append(",".join(row))
    path.write_bytes((eol.join(lines) + eol).encode())
