"""What each chart shows (a frozen *view*: kernels, time range, marks), without matplotlib;
the drawing modules only turn views into artists."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.model import (
    BarrierCandidate,
    DeviceCores,
    SideKind,
    Thresholds,
    Verdict,
    intervals,
)
from overlap_check.model.core_kinds import AIC_DEMAND, AIV_DEMAND, core_code
from overlap_check.model.table import compute_kernels

# Margin around an occurrence's windows, as a fraction of their hull, so that the
# idle gap before a barrier and the kernels around the windows stay in view.
WINDOW_MARGIN = 0.15
# Without a plan the stream-level view aims at about this many kernels.
STREAM_VIEW_KERNELS = 400

COMMUNICATION_LANE = -1  # lane key of communication rows (they have no Stream ID)


@dataclass(frozen=True)
class TimelineView:
    """One range of a capture's timeline (the whole kernel table) and the plan's marks."""

    kernels: pl.DataFrame
    start_ns: int
    end_ns: int
    title: str
    subtitle: str = ""
    main_stream: int | None = None
    side_stream: int | None = None
    side_window: tuple[int, int] | None = None
    dom_window: tuple[int, int] | None = None
    side_pattern: str | None = None  # regex of the side ops (colours them)
    dominator_pattern: str | None = None  # regex of the dominator (colours it)
    dominator_name: str | None = None  # exact name, when the regex is not known
    barriers: tuple[BarrierCandidate, ...] = ()
    overlap_pct: float | None = None
    verdict: Verdict | None = None
    device: DeviceCores | None = None  # the capture's own cores (info.json), if read
    # communication / copy: the side ops are the plan's tasks (selection.side_expr of
    # side_pattern and side_stream), drawn hatched on their own lanes
    side_kind: SideKind = "compute"


@dataclass(frozen=True)
class RunPoint:
    run: int  # x position: the run, or with --per step the sample's position
    warm: bool
    value: float | None  # the chart's figure (RunsView.figure) for this sample
    label: str | None = None  # tick label of a sample ("1·50": run 1, step 50)


@dataclass(frozen=True)
class RunSeries:
    label: str  # "rank 0"
    points: tuple[RunPoint, ...]
    median: float | None
    verdict: Verdict | None = None


@dataclass(frozen=True)
class RunsPanel:
    title: str  # plan name or "stream 3 vs 2"
    series: tuple[RunSeries, ...]


@dataclass(frozen=True)
class RunsView:
    title: str
    panels: tuple[RunsPanel, ...]
    thresholds: Thresholds
    unit: str = "run"  # the x axis: "run", or "sample (a step of a run)" with --per step
    # the figure the verdict bands were applied to: a plan's hidden_pct, a pair's overlap_pct
    figure: str = "overlap_pct"


def short_names(names: pl.Series) -> pl.Series:
    """Bar labels: ``aclnnGroupedMatmul_GroupedMatmul_X`` -> ``GroupedMatmul``,
    ``hcom_allReduce__868_0_1`` -> ``hcom_allReduce``."""
    short: pl.Series = (
        names.cast(pl.String)
        .str.replace(r"^.*/", "")
        .str.replace(r"^aclnn([A-Za-z0-9]+)_.*$", "$1")
        .str.replace(r"^aclnn", "")
        .str.replace(r"(_+\d+)+$", "")
        .str.replace(r"^(.{28}).+$", "$1…")
    )
    return short


def format_duration(ns: float) -> str:
    """A duration for a label: ``850 ns``, ``167.5 µs``, ``1.107 ms`` (4 significant digits)."""
    if abs(ns) < 1_000:
        return f"{ns:.0f} ns"
    if abs(ns) < 1_000_000:
        return f"{ns / 1_000:.4g} µs"
    return f"{ns / 1_000_000:.4g} ms"


def short_name(name: str) -> str:
    label = short_names(pl.Series([name]))[0]
    return str(label) if label else name


def occurrence_range(
    windows: Sequence[tuple[int, int] | None],
    marks: Sequence[int] = (),
    margin: float = WINDOW_MARGIN,
) -> tuple[int, int] | None:
    edges = [v for w in windows if w is not None for v in w] + list(marks)
    if not edges:
        return None
    lo, hi = min(edges), max(edges)
    pad = max(int((hi - lo) * margin), 1_000)  # at least 1 us, so a zero-length window shows
    return lo - pad, hi + pad


def lane_order(streams: list[int], main: int | None, side: int | None) -> list[int]:
    first = [s for s in (main, side) if s is not None and s in streams]
    return first + sorted(s for s in set(streams) if s not in first)


def clip(kernels: pl.DataFrame, start_ns: int, end_ns: int) -> pl.DataFrame:
    """Kernels that intersect ``[start_ns, end_ns]`` (zero-length kernels inside count)."""
    return kernels.filter((pl.col("end_ns") >= start_ns) & (pl.col("start_ns") <= end_ns))


def idle_gaps(
    kernels: pl.DataFrame, stream: int, start_ns: int, end_ns: int, min_gap_ns: int
) -> tuple[np.ndarray, np.ndarray]:
    """One stream's gaps of at least ``min_gap_ns`` between two of its kernels in the range."""
    rows = clip(compute_kernels(kernels).filter(pl.col("stream_id") == stream), start_ns, end_ns)
    busy_s, busy_e = intervals.merge(rows["start_ns"].to_numpy(), rows["end_ns"].to_numpy())
    if busy_s.size < 2:
        return busy_s[:0], busy_e[:0]
    gap_s, gap_e = busy_e[:-1], busy_s[1:]
    keep = (gap_e - gap_s) >= min_gap_ns
    return gap_s[keep], gap_e[keep]


def concurrent_segments(
    kernels: pl.DataFrame, start_ns: int, end_ns: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Merged stretches of ``[start_ns, end_ns]`` with at least two compute streams busy."""
    rows = clip(compute_kernels(kernels), start_ns, end_ns)
    if rows.height == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    seg_s, seg_e, level = _stream_levels(rows)
    keep = level >= 2
    cs, ce = intervals.clip(seg_s[keep], seg_e[keep], start_ns, end_ns)
    nonempty = ce > cs
    return intervals.merge(cs[nonempty], ce[nonempty])


def _stream_levels(
    rows: pl.DataFrame,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """How many compute streams are busy on each segment (each stream merged first)."""
    starts, ends, streams = (rows[c].to_numpy() for c in ("start_ns", "end_ns", "stream_id"))
    merged_s, merged_e, _ = intervals.grouped_merge(starts, ends, streams)
    return intervals.sweep(merged_s, merged_e)


def busiest_window(kernels: pl.DataFrame, width_ns: int) -> tuple[int, int]:
    """The range of ``width_ns`` with the most time of >= 2 compute streams busy."""
    rows = compute_kernels(kernels)
    if rows.height == 0:
        return 0, max(width_ns, 1)
    first = int(rows["start_ns"].min())  # type: ignore[arg-type]
    last = int(rows["end_ns"].max())  # type: ignore[arg-type]
    if last - first <= width_ns:
        return first, last
    seg_s, seg_e, level = _stream_levels(rows)
    concurrent = level >= 2
    if not concurrent.any():
        starts = np.sort(rows["start_ns"].to_numpy())
        counts = np.searchsorted(starts, starts + width_ns, side="right") - np.arange(starts.size)
        begin = int(starts[int(np.argmax(counts))])
        return begin, begin + width_ns
    cs, ce = seg_s[concurrent], seg_e[concurrent]
    # Centre each candidate on a concurrent stretch's start, a little before it.
    begins = np.clip(cs - width_ns // 10, first, last - width_ns)
    inside = intervals.covered_length(cs, ce, begins, begins + width_ns)
    begin = int(begins[int(np.argmax(inside))])
    return begin, begin + width_ns


def stream_view_width(kernels: pl.DataFrame) -> int:
    rows = compute_kernels(kernels)
    if rows.height == 0:
        return 1_000
    span = int(rows["end_ns"].max()) - int(rows["start_ns"].min())  # type: ignore[arg-type]
    return max(span * STREAM_VIEW_KERNELS // max(rows.height, STREAM_VIEW_KERNELS), 1)


def block_demand(kernels: pl.DataFrame, device: DeviceCores | None = None) -> pl.DataFrame:
    """Each compute kernel's block demand, capped at the cores: 256 blocks on 48 run in waves."""
    aic, aiv = AIC_DEMAND.fill_null(0), AIV_DEMAND.fill_null(0)
    if device is not None:  # capped at the cores where known (0: unknown, not capped)
        if device.aicore > 0:
            aic = pl.min_horizontal(aic, pl.lit(device.aicore))
        if device.vectorcore > 0:
            aiv = pl.min_horizontal(aiv, pl.lit(device.vectorcore))
    rows = compute_kernels(kernels)
    return rows.with_columns(core_code(rows)).select(
        "stream_id",
        "start_ns",
        "end_ns",
        aic.cast(pl.Int64).alias("aicore"),
        aiv.cast(pl.Int64).alias("vectorcore"),
    )


def demand_steps(
    demand: pl.DataFrame, kind: str, streams: list[int], start_ns: int, end_ns: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(edges, levels)``: n+1 times, and per stream the ``kind`` blocks on each segment."""
    rows = clip(demand, start_ns, end_ns).with_columns(
        pl.col("start_ns").clip(start_ns, end_ns), pl.col("end_ns").clip(start_ns, end_ns)
    )
    times = [np.array([start_ns, end_ns]), rows["start_ns"].to_numpy(), rows["end_ns"].to_numpy()]
    edges = np.unique(np.concatenate(times).astype(np.int64))
    levels = np.zeros((len(streams), max(edges.size - 1, 0)), dtype=np.int64)
    for row, stream in enumerate(streams):  # a handful of streams, no loop over kernels
        part = rows.filter(pl.col("stream_id") == stream)
        starts, ends, blocks = (part[c].to_numpy() for c in ("start_ns", "end_ns", kind))
        levels[row] = intervals.covered_sums(edges[:-1], edges[1:], starts, ends, blocks)
    return edges, levels
