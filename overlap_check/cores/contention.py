"""Contention (failure mode 3c) of one run (the core kinds it sums: kinds.py).

Wherever at least two compute streams are busy, the blocks demanded per core kind
by all kernels running then are summed (aicore = AI_CORE + MIX_AIC Block Num;
vectorcore = AI_VECTOR_CORE Block Num + MIX_AIC Mix Block Num + MIX_AIV Block Num),
each kernel's demand capped at the device's cores; time where a sum exceeds the
cores is over the limit (see :mod:`overlap_check.cores.rules`, which adds the runs up).

One stable sort of all kernel bounds gives every running sum (no per-kernel loop):
a million kernels take a fraction of the time reading them does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.cores.kinds import (
    AI_CORE,
    AI_VECTOR_CORE,
    AIC_DEMAND,
    AIV_DEMAND,
    MIX_AIC,
    C,
    core_code,
)
from overlap_check.intervals import I64, Steps, sweeps
from overlap_check.model import ContentionInterval
from overlap_check.table import is_compute

MAX_CONTENTION = 100  # contention intervals kept, worst first (all are counted)
MAX_NAMES = 20  # kernel names listed per contention interval


def _merged_bounds(starts: I64, ends: I64) -> tuple[I64, I64]:
    """One stream's kernels (by start) merged into busy intervals: the kernel that opens
    each interval, and one kernel whose end closes it (the first with the largest end)."""
    running_end = np.maximum.accumulate(ends)
    opens = np.empty(starts.size, dtype=bool)
    opens[0] = True
    opens[1:] = starts[1:] > running_end[:-1]  # touching kernels join, as intervals.merge
    first = np.flatnonzero(opens)
    group = np.cumsum(opens) - 1
    closing = np.flatnonzero(ends == np.maximum.reduceat(ends, first)[group])
    carrier = closing[np.concatenate([[True], group[closing][1:] != group[closing][:-1]])]
    return first, carrier


@dataclass(frozen=True)
class _Segments:
    """Time between consecutive distinct kernel bounds (intervals.sweeps' segments), whether
    at least two streams are busy on each, and the summed weights on each."""

    start: I64
    end: I64
    two_busy: npt.NDArray[np.bool_]
    sums: list[I64]


def _segments(
    starts: I64, ends: I64, streams: I64, ids: list[int], weights: list[I64]
) -> _Segments:
    # Busy streams: +1 where a stream's merged busy interval opens, -1 where it closes,
    # placed on kernel bounds (merged bounds are kernel bounds, so no new segments): one
    # more sum of the same sweep as the weights.
    opening = np.zeros(starts.size, dtype=np.int8)  # each kernel opens or closes at most once
    closing = np.zeros(starts.size, dtype=np.int8)
    for sid in ids:
        rows = np.flatnonzero(streams == sid)
        first, carrier = _merged_bounds(starts[rows], ends[rows])
        opening[rows[first]] += 1
        closing[rows[carrier]] -= 1
    steps: list[Steps] = [(opening, closing), *((w, None) for w in weights)]
    seg_start, seg_end, (busy, *sums) = sweeps(starts, ends, steps)
    return _Segments(start=seg_start, end=seg_end, two_busy=busy >= 2, sums=sums)


def _distinct(values: I64) -> I64:
    """Sorted distinct values of a small array."""
    ordered = np.sort(values)
    if ordered.size == 0:
        return ordered
    first: I64 = ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])]
    return first


def _worst(values: I64, n: int) -> I64:
    """Positions of the ``n`` largest values, largest first (ties: lowest position first),
    without sorting them all: a run can hold a million over-limit intervals."""
    if values.size > n:
        cut = np.partition(values, values.size - n)[values.size - n]
        keep = np.flatnonzero(values >= cut)  # every value that can be among the n largest
    else:
        keep = np.arange(values.size)
    chosen: I64 = keep[np.argsort(-values[keep], kind="stable")[:n]]
    return chosen


@dataclass(frozen=True)
class RunContention:
    """The contention sweep of one run; its intervals carry run 0 (the caller numbers runs)."""

    intervals: tuple[ContentionInterval, ...]
    count: int
    over_ns: dict[str, int]
    any_over_ns: int


def _names_of(names: pl.Series, selections: list[I64]) -> list[tuple[str, ...]]:
    """Distinct kernel names (first MAX_NAMES, in start order) of each selection, in one pass."""
    if not selections:
        return []
    group = np.repeat(np.arange(len(selections)), [s.size for s in selections])
    picked = pl.DataFrame({"g": group, "name": names.gather(np.concatenate(selections))})
    listed = (
        picked.unique(maintain_order=True)
        .group_by("g", maintain_order=True)
        .agg(pl.col("name").head(MAX_NAMES))
    )
    found = dict(
        zip(listed.get_column("g").to_list(), listed.get_column("name").to_list(), strict=True)
    )
    return [tuple(found.get(i, ())) for i in range(len(selections))]


def run_contention(kernels: pl.DataFrame, cores: tuple[int, int]) -> RunContention:
    """Over-limit time and intervals of one run, against (aicore, vectorcore) device cores."""
    maxima = {"aicore": cores[0], "vectorcore": cores[1]}
    # Lazily, so that only these columns of the compute rows are copied.
    k = (
        kernels.lazy()
        .filter(
            is_compute(kernels.columns)
            & pl.col("start_ns").is_not_null()
            & pl.col("end_ns").is_not_null()
        )
        .with_columns(core_code(kernels))
        .select(
            "name",
            "stream_id",
            "start_ns",
            "end_ns",
            pl.min_horizontal(AIC_DEMAND.fill_null(0), pl.lit(max(cores[0], 0))).alias("aicore"),
            pl.min_horizontal(AIV_DEMAND.fill_null(0), pl.lit(max(cores[1], 0))).alias(
                "vectorcore"
            ),
        )
        .collect()
    )
    if not k.get_column("start_ns").is_sorted():  # kernel tables come in time order
        k = k.sort("start_ns", maintain_order=True)
    empty = RunContention((), 0, {"aicore": 0, "vectorcore": 0}, 0)
    ids = k.get_column("stream_id").unique().sort().to_list()
    if len(ids) < 2:  # one stream alone is never contention
        return empty
    starts = k.get_column("start_ns").to_numpy().astype(np.int64, copy=False)
    ends = k.get_column("end_ns").to_numpy().astype(np.int64, copy=False)
    streams = k.get_column("stream_id").to_numpy().astype(np.int64, copy=False)
    weights = {kind: k.get_column(kind).to_numpy().astype(np.int64, copy=False) for kind in maxima}
    segments = _segments(starts, ends, streams, ids, list(weights.values()))
    seg_s, seg_e = segments.start, segments.end
    length = seg_e - seg_s
    two_busy = segments.two_busy
    over_any = np.zeros(seg_s.size, dtype=bool)
    intervals: list[ContentionInterval] = []
    count = 0
    over_ns: dict[str, int] = {}
    max_dur = int((ends - starts).max())
    for (kind, maximum), demand in zip(maxima.items(), segments.sums, strict=True):
        over = two_busy & (demand > maximum) if maximum > 0 else np.zeros(seg_s.size, dtype=bool)
        over_any |= over
        over_ns[kind] = int(length[over].sum())
        idx = np.flatnonzero(over)
        if idx.size == 0:
            continue
        first = np.flatnonzero(np.concatenate([[True], np.diff(idx) != 1]))
        last = np.concatenate([first[1:], [idx.size]]) - 1
        peak = np.maximum.reduceat(demand[idx], first)
        excess = np.add.reduceat((demand[idx] - maximum) * length[idx], first)
        count += first.size
        worst = _worst(excess, MAX_CONTENTION)
        spans: list[tuple[int, int, int, int, I64]] = []
        for g in worst:  # at most MAX_CONTENTION intervals per run and kind
            a = int(seg_s[idx[first[g]]])
            b = int(seg_e[idx[last[g]]])
            lo = int(np.searchsorted(starts, a - max_dur, side="left"))
            hi = int(np.searchsorted(starts, b, side="left"))
            sel = lo + np.flatnonzero((ends[lo:hi] > a) & (weights[kind][lo:hi] > 0))
            spans.append((a, b, int(peak[g]), int(excess[g]), sel))
        names = _names_of(k.get_column("name"), [s[4] for s in spans])
        intervals += [
            ContentionInterval(
                run=0,
                rank=None,
                start_ns=a,
                duration_ns=b - a,
                kind=kind,  # type: ignore[arg-type]
                demand=demand_peak,
                maximum=maximum,
                kernels=kernel_names,
                streams=tuple(int(s) for s in _distinct(streams[sel])),
                excess_block_ns=block_ns,
            )
            for (a, b, demand_peak, block_ns, sel), kernel_names in zip(spans, names, strict=True)
        ]
    return RunContention(tuple(intervals), count, over_ns, int(length[over_any].sum()))


def observed_maxima(kernels: pl.DataFrame) -> tuple[int, int]:
    """One capture's largest Block Num per core kind (none: 0), matching core kinds in
    upper case without stripping; devices.observed_cores takes the largest over captures."""
    core = core_code(kernels, strip=False)
    row = (
        kernels.select("block_num", "mix_block_num", core)
        .select(
            pl.when(C.is_in([AI_CORE, MIX_AIC])).then(pl.col("block_num")).max().alias("aic"),
            pl.max_horizontal(
                pl.when(C == AI_VECTOR_CORE).then(pl.col("block_num")).max(),
                pl.when(C == MIX_AIC).then(pl.col("mix_block_num")).max(),
            ).alias("aiv"),
        )
        .row(0)
    )
    return int(row[0] or 0), int(row[1] or 0)
