"""Which occurrence a timeline shows, and the barriers marked on it (no matplotlib here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from overlap_check.model import BarrierCandidate, Occurrence, PlanResult, PlanRun
from overlap_check.model.errors import UsageError
from overlap_check.model.table import compute_kernels


def pick_occurrence(
    result: PlanResult, run: int | None, occurrence: int | None
) -> tuple[PlanRun, Occurrence | None] | None:
    """The chosen plan run and occurrence, else the deciding one (None: none recorded); one
    the report did not record is ``(plan_run, None)``, for the caller to measure."""
    runs = list(result.per_run)
    if run is not None:
        runs = [r for r in runs if r.run == run]  # with --per step: every step of it
        if not runs:
            known = ", ".join(str(r.run) for r in result.per_run) or "none"
            raise UsageError(f"plan {result.name!r} has no run {run}", hint=f"runs: {known}")
    if occurrence is not None:  # a warm run first, as below
        for plan_run in sorted(runs, key=lambda r: not r.warm):
            for occ in (*plan_run.worst, *plan_run.unpaired, *plan_run.layers):
                if occ.index == occurrence:
                    return plan_run, occ
        in_range = [r for r in runs if 0 < occurrence <= r.occurrences]
        if not in_range:
            most = max((r.occurrences for r in runs), default=0)
            hint = f"occurrences per run: at most {most}"
            raise UsageError(f"plan {result.name!r} has no occurrence {occurrence}", hint=hint)
        return min(in_range, key=lambda r: not r.warm), None  # the first warm run, else the first
    deciding = replace(result, per_run=tuple(runs)).deciding_occurrence()
    if deciding is not None:
        return deciding
    pool = [r for r in runs if r.warm and r.worst] or [r for r in runs if r.worst]
    candidates = [(r, o) for r in pool for o in r.worst]
    if not candidates:  # nothing judged anywhere: an unjudged occurrence, warm runs first
        ordered = [r for r in runs if r.warm] + [r for r in runs if not r.warm]
        candidates = [(r, o) for r in ordered for o in r.unpaired]
    return candidates[0] if candidates else None


def barrier_marks(
    kernels: pl.DataFrame,
    candidates: Sequence[BarrierCandidate],
    side: tuple[int, int] | None,
    dom: tuple[int, int] | None,
    run: int,
    occurrence: int,
) -> tuple[BarrierCandidate, ...]:
    """This occurrence's own instances of the barrier candidates (the report names each
    once), between the side window's end and the dominator's start."""
    if not candidates or side is None or dom is None or side[1] > dom[0]:
        return ()
    compute = compute_kernels(kernels)
    keys = pl.DataFrame(
        [(c.name, c.stream_id) for c in candidates],
        schema={"name": pl.String, "stream_id": pl.Int64},
        orient="row",
    ).unique()
    between = compute.filter(pl.col("start_ns").is_between(side[1], dom[0]))
    rows = between.join(keys, on=["name", "stream_id"]).sort("start_ns")
    marks = []
    for row in rows.iter_rows(named=True):  # a handful: barriers between two windows
        start = row["start_ns"]
        earlier = (pl.col("stream_id") == row["stream_id"]) & (pl.col("start_ns") < start)
        before = compute.filter(earlier)["end_ns"].max()
        gap = start - before if isinstance(before, int) else 0
        first = next(c for c in candidates if c.name == row["name"])
        found = {"start_ns": start, "gap_ns": max(gap, 0), "after_side_end_ns": start - side[1]}
        marks.append(replace(first, run=run, occurrence=occurrence, **found))
    return tuple(marks)
