"""Communication against compute for the whole device, per step: busy, hidden and exposed
time, the measure of the profiler's step_trace_time.csv, which :func:`profiler_difference`
sets beside ours (docs/method.md, "Communication (no plan)")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from overlap_check.model import ProfilerStepTime
from overlap_check.model.intervals import grouped_union_length
from overlap_check.model.table import compute_kernels

# a step whose figures differ from the profiler's by more than this share of its
# Communication gets a note in the report
PROFILER_TOLERANCE = 0.01


@dataclass(frozen=True)
class CommFigure:
    """One step of one capture (step None: the whole capture)."""

    step: int | None
    busy_ns: int
    hidden_ns: int
    compute_ns: int

    @property
    def exposed_ns(self) -> int:
        return self.busy_ns - self.hidden_ns


@dataclass(frozen=True)
class CaptureCommunication:
    whole: CommFigure  # the whole capture, every row whatever its step
    steps: tuple[CommFigure, ...]  # per value of the step column (null steps: step None)


def _figures(comm: pl.DataFrame, compute: pl.DataFrame, groups: int) -> tuple[np.ndarray, ...]:
    """Per group (column ``g``): busy, compute and union-of-both lengths."""

    def union(frame: pl.DataFrame) -> np.ndarray:
        return grouped_union_length(
            frame["start_ns"].to_numpy(), frame["end_ns"].to_numpy(), frame["g"].to_numpy(), groups
        )

    both = pl.concat([comm, compute])
    return union(comm), union(compute), union(both)


def capture_communication(kernels: pl.DataFrame) -> CaptureCommunication | None:
    """The communication figures of one capture's kernel table; None: no communication row."""
    columns = ["step", "start_ns", "end_ns"]
    comm = kernels.filter(pl.col("is_communication").fill_null(False)).select(columns)
    if comm.is_empty():
        return None
    compute = compute_kernels(kernels, [*columns, "stream_id", "is_communication"]).select(columns)
    steps = pl.concat([comm["step"], compute["step"]]).unique().sort(nulls_last=True)
    codes = pl.DataFrame({"step": steps, "g": pl.int_range(steps.len(), eager=True)})

    def coded(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.join(codes, on="step", how="left", nulls_equal=True).with_columns(
            pl.col("g").cast(pl.Int64)
        )

    busy, comp, both = _figures(coded(comm), coded(compute), steps.len())
    per_step = tuple(
        CommFigure(step, int(b), int(b + c - u), int(c))
        for step, b, c, u in zip(steps.to_list(), busy, comp, both, strict=True)
        if b > 0
    )
    whole = _figures(
        comm.with_columns(g=pl.lit(0, pl.Int64)), compute.with_columns(g=pl.lit(0, pl.Int64)), 1
    )
    b, c, u = (int(x[0]) for x in whole)
    return CaptureCommunication(CommFigure(None, b, b + c - u, c), per_step)


def profiler_difference(figure: CommFigure, profiler: ProfilerStepTime) -> float | None:
    """The largest gap between our busy / hidden / exposed and the profiler's Communication /
    Overlapped / Not Overlapped, as a share of its Communication (None: nothing to compare;
    1.0 when the profiler saw no communication and we did)."""
    pairs = [
        (figure.busy_ns, profiler.communication_ns),
        (figure.hidden_ns, profiler.overlapped_ns),
        (figure.exposed_ns, profiler.not_overlapped_ns),
    ]
    gaps = [abs(ours - theirs) for ours, theirs in pairs if theirs is not None]
    if not gaps:
        return None
    scale = profiler.communication_ns
    if scale is None and None not in (profiler.overlapped_ns, profiler.not_overlapped_ns):
        scale = (profiler.overlapped_ns or 0) + (profiler.not_overlapped_ns or 0)
    if not scale:
        return 0.0 if max(gaps) == 0 else 1.0
    return max(gaps) / scale
