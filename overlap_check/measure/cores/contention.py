"""Contention (failure mode 3c) of one run: block demand per core kind summed wherever two
compute streams are busy, each kernel capped at the device's cores (docs/method.md,
"Core limits and block counts"; the kinds summed: kinds.py).

One stable sort of all kernel bounds gives every running sum, no per-kernel loop. A worker
sweeps before the device cores are decided over all runs (:func:`contention_evidence`);
where the decision can exceed the cores it swept with, it keeps what more cores need
(:class:`Above`), and :func:`contention_at` gives the decided cores' figures from that."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.model import ContentionInterval
from overlap_check.model.core_kinds import (
    AI_CORE,
    AI_VECTOR_CORE,
    AIC_DEMAND,
    AIV_DEMAND,
    MIX_AIC,
    C,
    core_code,
)
from overlap_check.model.intervals import I64, Steps, covered_sums, sweeps, touching
from overlap_check.model.table import i64_column, is_compute

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


def _segments(
    starts: I64, ends: I64, streams: I64, ids: list[int], weights: list[I64]
) -> tuple[I64, I64, npt.NDArray[np.bool_], list[I64]]:
    """Time between consecutive distinct kernel bounds (intervals.sweeps' segments: start,
    end), whether at least two streams are busy on each, and the summed weights on each."""
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
    return seg_start, seg_end, busy >= 2, sums


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
    found = dict(listed.iter_rows())
    return [tuple(found.get(i, ())) for i in range(len(selections))]


KINDS = ("aicore", "vectorcore")  # the order of a (aicore, vectorcore) pair


@dataclass(frozen=True)
class Above:
    """What redoing one run's sweep for more device cores needs, without the kernel table.
    With Block Nums >= 0 a segment over X cores (capped demand above X) is over any fewer
    cores Y >= 1 too (raising the cap by one adds at most one block per kernel above it,
    and it takes two kernels to exceed it), so the segments over the swept cores hold
    those over any more; they are kept with the kernels with a demand that touch them."""

    segments: tuple[tuple[I64, I64], tuple[I64, I64]]  # per kind: starts, ends in order
    starts: I64  # the kernels (in start order) with a demand that touch a kept segment
    ends: I64
    streams: I64
    demands: tuple[I64, I64]  # per kind, uncapped (a missing Block Num: 0)
    names: pl.Series


@dataclass(frozen=True)
class ContentionEvidence:
    """The contention sweep of one run: its figures for the cores it was swept with, and
    (``above``, when the decision over all runs can give more) what more cores need."""

    cores: tuple[int, int]  # (aicore, vectorcore) swept with
    contention: RunContention
    above: Above | None


def _compute_rows(kernels: pl.DataFrame, caps: list[int], uncapped: bool) -> pl.DataFrame:
    """The compute kernels with both bounds, in start order, with each kind's demand
    capped at ``caps`` (and, ``uncapped``, as it is: "<kind>_blocks")."""
    demands = {"aicore": AIC_DEMAND.fill_null(0), "vectorcore": AIV_DEMAND.fill_null(0)}
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
            *(
                pl.min_horizontal(demand, pl.lit(cap)).alias(kind)
                for (kind, demand), cap in zip(demands.items(), caps, strict=True)
            ),
            *(demand.alias(f"{kind}_blocks") for kind, demand in demands.items() if uncapped),
        )
        .collect()
    )
    if not k.get_column("start_ns").is_sorted():  # kernel tables come in time order
        k = k.sort("start_ns", maintain_order=True)
    return k


def _kind_figures(
    kind: str,
    maximum: int,
    over: npt.NDArray[np.bool_],
    segments: tuple[I64, I64, I64, I64],
    kernels: tuple[I64, I64, I64, I64],
    names: pl.Series,
    max_dur: int,
    partition: bool = False,
) -> tuple[int, list[ContentionInterval]]:
    """The over-limit intervals of one kind (how many, and the worst MAX_CONTENTION) from
    segments in time order (``over`` among them; ``segments``: start, end, length, demand)
    and the kernels (start, end, stream, demand capped at ``maximum``; the longest lasts
    ``max_dur``). ``partition``: the segments are all of the sweep's, so that neighbours
    follow one another in time."""
    seg_s, seg_e, length, demand = segments
    starts, ends, streams, weights = kernels
    idx = np.flatnonzero(over)
    if idx.size == 0:
        return 0, []
    # over segments that follow one another in time (one ends where the next starts)
    breaks = np.diff(idx) != 1 if partition else seg_s[idx[1:]] != seg_e[idx[:-1]]
    first = np.flatnonzero(np.concatenate([[True], breaks]))
    last = np.concatenate([first[1:], [idx.size]]) - 1
    peak = np.maximum.reduceat(demand[idx], first)
    excess = np.add.reduceat((demand[idx] - maximum) * length[idx], first)
    spans: list[tuple[int, int, int, int, I64]] = []
    for g in _worst(excess, MAX_CONTENTION):  # at most MAX_CONTENTION intervals per kind
        a = int(seg_s[idx[first[g]]])
        b = int(seg_e[idx[last[g]]])
        lo = int(np.searchsorted(starts, a - max_dur, side="left"))
        hi = int(np.searchsorted(starts, b, side="left"))
        sel = lo + np.flatnonzero((ends[lo:hi] > a) & (weights[lo:hi] > 0))
        spans.append((a, b, int(peak[g]), int(excess[g]), sel))
    named = _names_of(names, [s[4] for s in spans])
    return first.size, [
        ContentionInterval(
            run=0,
            rank=None,
            start_ns=a,
            duration_ns=b - a,
            kind=kind,  # type: ignore[arg-type]
            demand=demand_peak,
            maximum=maximum,
            kernels=kernel_names,
            streams=tuple(int(s) for s in np.unique(streams[sel])),
            excess_block_ns=block_ns,
        )
        for (a, b, demand_peak, block_ns, sel), kernel_names in zip(spans, named, strict=True)
    ]


def contention_evidence(
    kernels: pl.DataFrame, cores: tuple[int, int], *, above: bool = False
) -> ContentionEvidence:
    """The contention sweep of one run against (aicore, vectorcore) device cores; with
    ``above``, also what any more cores need (:func:`contention_at`)."""
    caps = [max(c, 0) for c in cores]
    k = _compute_rows(kernels, caps, above)
    ids = k.get_column("stream_id").unique().sort().to_list()
    if len(ids) < 2:  # one stream alone is never contention
        k, ids = k.clear(), []
    starts, ends = i64_column(k, "start_ns"), i64_column(k, "end_ns")
    streams = i64_column(k, "stream_id")
    weights = [i64_column(k, kind) for kind in KINDS]
    demands = [i64_column(k, f"{kind}_blocks") for kind in KINDS] if above else weights
    negative = above and any(bool((d < 0).any()) for d in demands)
    # a negative Block Num lowers a sum at every cores: left out, the kept segments are a
    # superset of those over more cores (the exact sums are taken again from the kernels)
    kept_by = [np.clip(d, 0, cap) for d, cap in zip(demands, caps, strict=True)] if negative else []
    seg_start, seg_end, two_busy, all_sums = _segments(
        starts, ends, streams, ids, [*weights, *kept_by]
    )
    sums, selecting = all_sums[:2], (all_sums[2:] or all_sums[:2])
    over_any = np.zeros(seg_start.size, dtype=bool)
    length = seg_end - seg_start
    max_dur = int((ends - starts).max()) if starts.size else 0
    intervals: list[ContentionInterval] = []
    count = 0
    over_ns: dict[str, int] = {}
    kept: list[tuple[I64, I64]] = []
    for kind, cap, demand, weight, select in zip(
        KINDS, caps, sums, weights, selecting, strict=True
    ):
        over = two_busy & (demand > cap) if cap > 0 else np.zeros_like(over_any)
        over_any |= over
        over_ns[kind] = int(length[over].sum())
        found, listed = _kind_figures(
            kind, cap, over, (seg_start, seg_end, length, demand),
            (starts, ends, streams, weight), k.get_column("name"), max_dur, partition=True,
        )  # fmt: skip
        count, intervals = count + found, intervals + listed
        if above:
            keep = two_busy & (select > cap) if negative else over
            kept.append((seg_start[keep], seg_end[keep]))
    any_over = int(length[over_any].sum())
    del length
    contention = RunContention(tuple(intervals), count, over_ns, any_over)
    if not above:
        return ContentionEvidence(cores, contention, None)
    del seg_start, seg_end, two_busy, all_sums
    rows = touching(starts, ends, kept) & ((demands[0] != 0) | (demands[1] != 0))
    return ContentionEvidence(
        cores,
        contention,
        Above(
            segments=(kept[0], kept[1]),
            starts=starts[rows],
            ends=ends[rows],
            streams=streams[rows],
            demands=(demands[0][rows], demands[1][rows]),
            names=k.get_column("name").filter(pl.Series(rows)).cast(pl.Categorical),
        ),
    )


def contention_at(evidence: ContentionEvidence, cores: tuple[int, int]) -> RunContention:
    """The run's contention against (aicore, vectorcore) device cores, from its evidence:
    the cores it was swept with, or (with ``above``) more of each kind that it judged."""
    wanted = tuple(max(c, 0) for c in cores)
    swept = tuple(max(c, 0) for c in evidence.cores)
    if wanted == swept:
        return evidence.contention
    above = evidence.above
    if above is None:
        raise ValueError(f"contention swept with {swept} cores only, not {wanted}")
    for kind, want, had in zip(KINDS, wanted, swept, strict=True):
        if want > 0 and not 0 < had <= want:
            raise ValueError(f"{kind} contention swept with {had} cores, not {want}")
    intervals: list[ContentionInterval] = []
    count = 0
    over_ns: dict[str, int] = {}
    over_starts: list[I64] = []
    over_lengths: list[I64] = []
    max_dur = int((above.ends - above.starts).max()) if above.starts.size else 0
    for kind, cap, (seg_s, seg_e), demands in zip(
        KINDS, wanted, above.segments, above.demands, strict=True
    ):
        weights = np.minimum(demands, cap)
        demand = covered_sums(seg_s, seg_e, above.starts, above.ends, weights)
        over = demand > cap if cap > 0 else np.zeros(seg_s.size, dtype=bool)
        length = seg_e - seg_s
        over_ns[kind] = int(length[over].sum())
        over_starts.append(seg_s[over])
        over_lengths.append(length[over])
        found, listed = _kind_figures(
            kind, cap, over, (seg_s, seg_e, length, demand),
            (above.starts, above.ends, above.streams, weights), above.names, max_dur,
        )  # fmt: skip
        count, intervals = count + found, intervals + listed
    # the segments of both kinds part one time line: a start names one segment
    both, at = np.unique(np.concatenate(over_starts), return_index=True)
    any_over = int(np.concatenate(over_lengths)[at].sum()) if both.size else 0
    return RunContention(tuple(intervals), count, over_ns, any_over)


def _recurring_max(values: pl.Expr) -> pl.Expr:
    """The largest value two rows or more have (the largest when none repeats): a count
    only one launch asks for, above every repeated one, is an oversubscribed kernel (256
    logical blocks run in waves on 48 cores), not the device."""
    kept = values.drop_nulls()
    repeated = kept.filter(kept.is_duplicated()).max()
    return pl.coalesce(repeated, kept.max())


def observed_maxima(kernels: pl.DataFrame) -> tuple[int, int]:
    """One capture's guess of the device cores per core kind (none: 0), by
    :func:`_recurring_max` of its Block Num (core kinds matched in upper case)."""
    core = core_code(kernels, strip=False)
    aic = pl.when(C.is_in([AI_CORE, MIX_AIC])).then(pl.col("block_num"))
    aiv = pl.concat_list(
        pl.when(C == AI_VECTOR_CORE).then(pl.col("block_num")),
        pl.when(C == MIX_AIC).then(pl.col("mix_block_num")),
    ).explode()
    row = (
        kernels.select("block_num", "mix_block_num", core)
        .select(_recurring_max(aic).alias("aic"), _recurring_max(aiv).alias("aiv"))
        .row(0)
    )
    return int(row[0] or 0), int(row[1] or 0)
