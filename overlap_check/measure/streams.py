"""Stream level (no plan): busy-time overlap of each compute stream with the rank's main stream,
parallelism and concurrent time per sample.

The figures: docs/method.md, "Stream level (no plan)". Communication rows never make a stream;
every sample of a rank is paired against the same main stream."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from overlap_check.measure.runs import Sample, spread
from overlap_check.model import (
    RankStreamSummary,
    StreamPair,
    StreamPairRun,
    StreamStat,
    Thresholds,
    intervals,
)
from overlap_check.model.intervals import I64
from overlap_check.model.table import i64_column
from overlap_check.model.verdicts import label

PairFigure = tuple[int, float, int, int]  # overlap_ns, overlap_pct, main busy, side busy


@dataclass(frozen=True)
class StreamSets:
    """Merged busy intervals of each compute stream of one sample."""

    kernels: dict[int, int]  # kernel count per stream
    busy: dict[int, tuple[I64, I64]]  # merged busy intervals per stream
    kernel_ns: int  # sum of kernel durations, all streams
    wall_ns: int  # last kernel end - first kernel start
    concurrent_ns: int  # time with >= 2 streams busy
    origin_ns: int | None = None  # first kernel start

    def busy_ns(self, stream: int) -> int:
        starts, ends = self.busy[stream]
        return int((ends - starts).sum())


def stream_sets(compute: pl.DataFrame) -> StreamSets:
    """Busy sets of a table of compute kernels (no communication rows)."""
    if compute.is_empty():
        return StreamSets({}, {}, 0, 0, 0, None)
    stream = compute.get_column("stream_id").to_numpy()
    starts, ends = i64_column(compute, "start_ns"), i64_column(compute, "end_ns")
    kernels: dict[int, int] = {}
    busy: dict[int, tuple[I64, I64]] = {}
    # One boolean mask per stream (a handful of streams) beats sorting by (stream, start);
    # the kernel table is already in time order, which keeps each merge cheap.
    for sid in compute.get_column("stream_id").unique().sort().to_list():
        mask = stream == sid
        kernels[sid] = int(mask.sum())
        busy[sid] = intervals.merge(starts[mask], ends[mask])
    levels = intervals.time_at_concurrency(list(busy.values()))
    return StreamSets(
        kernels=kernels,
        busy=busy,
        kernel_ns=int((ends - starts).sum()),
        wall_ns=int(ends.max() - starts.min()),
        concurrent_ns=sum(t for k, t in levels.items() if k >= 2),
        origin_ns=int(starts.min()),
    )


def stream_stats(sets: StreamSets) -> tuple[StreamStat, ...]:
    """Per-stream kernel counts and busy time, by Stream ID."""
    return tuple(
        StreamStat(stream_id=sid, kernels=sets.kernels[sid], busy_ns=sets.busy_ns(sid))
        for sid in sorted(sets.kernels)
    )


def choose_main_stream(all_sets: Sequence[StreamSets], forced: int | None) -> int | None:
    """The forced stream, else the one with most busy time over all samples (ties: lowest ID)."""
    if forced is not None:
        return forced
    totals: dict[int, int] = {}
    for sets in all_sets:
        for sid in sets.busy:
            totals[sid] = totals.get(sid, 0) + sets.busy_ns(sid)
    if not totals:
        return None
    return min(totals, key=lambda sid: (-totals[sid], sid))


def pair_figure(sets: StreamSets, main: int, side: int) -> tuple[int, float, int, int] | None:
    """(overlap_ns, overlap_pct, main busy, side busy), or None when a stream is absent or idle."""
    if main not in sets.busy or side not in sets.busy:
        return None
    main_busy = sets.busy_ns(main)
    side_busy = sets.busy_ns(side)
    if min(main_busy, side_busy) == 0:
        return None
    if len(sets.busy) == 2:  # the two streams: time with both busy is already known
        overlap = sets.concurrent_ns
    else:
        overlap = intervals.time_at_concurrency([sets.busy[main], sets.busy[side]]).get(2, 0)
    return overlap, overlap / min(main_busy, side_busy), main_busy, side_busy


def pair_results(
    rank: int | None,
    main: int,
    samples: Sequence[Sample],
    figures: Sequence[Mapping[int, PairFigure | None]],
    thresholds: Thresholds,
    provisional: bool,
) -> tuple[StreamPair, ...]:
    """Each other stream that ran in a warm sample, against the main stream (warm medians).
    ``figures[j]``: sample j's streams, each with its pair_figure (None: none there)."""
    sides = sorted(
        {sid for s, found in zip(samples, figures, strict=True) if s.warm for sid in found} - {main}
    )
    pairs: list[StreamPair] = []
    for side in sides:
        per_run = [
            StreamPairRun(sample.run, sample.warm, *figure, sample.label)
            for sample, found in zip(samples, figures, strict=True)
            if (figure := found.get(side)) is not None
        ]
        warm = [r.warm for r in per_run]
        pct_spread = spread([r.overlap_pct for r in per_run], warm)
        ns_spread = spread([float(r.overlap_ns) for r in per_run], warm)
        if pct_spread.median is None or ns_spread.median is None:
            continue  # the side stream never had busy time in a warm sample
        pairs.append(
            StreamPair(
                rank=rank,
                main=main,
                side=side,
                overlap_ns=ns_spread.median,
                overlap_pct=pct_spread.median,
                verdict=label(pct_spread.median, thresholds),
                provisional=provisional,
                per_run=tuple(per_run),
            )
        )
    return tuple(pairs)


def rank_summary(
    rank: int | None, samples: Sequence[Sample], all_sets: Sequence[StreamSets], main: int | None
) -> RankStreamSummary:
    """Warm medians of parallelism, time at concurrency >= 2 and wall span."""
    warm = [
        sets
        for sample, sets in zip(samples, all_sets, strict=True)
        if sample.warm and sets.wall_ns > 0
    ]

    def median(values: list[float]) -> float:
        return float(statistics.median(values)) if values else 0.0

    return RankStreamSummary(
        rank=rank,
        main_stream=main,
        parallelism=median([s.kernel_ns / s.wall_ns for s in warm]),
        concurrent_ns=median([float(s.concurrent_ns) for s in warm]),
        wall_ns=median([float(s.wall_ns) for s in warm]),
    )
