"""The timeline chart: one lane per stream, the plan's windows and their overlap. The
kernels in view are one PolyCollection, so hundreds draw as fast as ten."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from overlap_check.model import Plan, intervals
from overlap_check.model.selection import side_expr
from overlap_check.report.plots import canvas
from overlap_check.report.plots.views import (
    COMMUNICATION_LANE,
    TimelineView,
    clip,
    concurrent_segments,
    idle_gaps,
    lane_order,
    short_name,
    short_names,
)

LANE_HEIGHT = 0.72
WINDOW_HEIGHT = 0.5
LABEL_FONT_PT = 7.0
CHAR_WIDTH_PT = 0.6 * LABEL_FONT_PT  # average glyph width of the label font
MIN_GAP_FRACTION = 0.01  # idle gaps shorter than this share of the view are not marked
SIDE_TASK_HATCH = "//"  # a communication or copy plan's side tasks
SIDE_TASK_EDGE = "#8a4a0e"  # a darker side colour: the hatch lines take the edge colour
SIDE_TASKS = "side tasks"  # their collection's label (tests find it by it)
TASK_BARS: dict[str, Any] = {"edgecolors": SIDE_TASK_EDGE, "hatch": SIDE_TASK_HATCH}
TASK_BARS["linewidths"] = 0.6  # side tasks: hatched, a darker edge
BAR_LABEL: dict[str, Any] = {"ha": "center", "va": "center", "color": "white", "clip_on": True}
ROW_TEXT: dict[str, Any] = {"va": "center", "fontsize": 8, "zorder": 4}  # window rows' figures


def bar_vertices(
    x0: npt.NDArray[np.float64],
    x1: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    height: float,
) -> Any:
    """(n, 4, 2) rectangle corners; Any: the stubs name a sequence, an array is faster."""
    top, bottom = y - height / 2, y + height / 2
    corners = ((x0, top), (x1, top), (x1, bottom), (x0, bottom))
    return np.stack([np.stack(corner, 1) for corner in corners], axis=1)


def kernel_roles(view: TimelineView, rows: pl.DataFrame) -> pl.Series:
    """Each kernel's role (ROLES), side tasks by the engine's own selection."""
    side: pl.Expr = pl.lit(False)
    task: pl.Expr = pl.lit(False)
    if view.side_kind != "compute":
        plan = Plan(
            "view", side=view.side_pattern, side_stream=view.side_stream, side_kind=view.side_kind
        )
        task = side_expr(plan, rows)
    elif view.side_pattern is not None:
        side = pl.col("name").str.contains(view.side_pattern)
    elif view.side_stream is not None and view.side_window is not None:
        lo, hi = view.side_window
        on_side = pl.col("stream_id") == view.side_stream
        side = on_side & (pl.col("start_ns") >= lo) & (pl.col("end_ns") <= hi)
    on_main = (
        pl.col("stream_id") == view.main_stream if view.main_stream is not None else pl.lit(True)
    )
    dominator: pl.Expr = pl.lit(False)
    if view.dominator_pattern is not None:
        dominator = on_main & pl.col("name").str.contains(view.dominator_pattern)
    elif view.dominator_name is not None:
        dominator = on_main & (pl.col("name") == view.dominator_name)
    barrier: pl.Expr = pl.lit(False)
    if view.barriers:
        keys = pl.DataFrame(
            [(b.start_ns, b.stream_id) for b in view.barriers],
            schema={"start_ns": pl.Int64, "stream_id": pl.Int64},
            orient="row",
        )
        barrier = pl.struct("start_ns", "stream_id").is_in(keys.to_struct().implode())
    comm = pl.col("is_communication") | pl.col("stream_id").is_null()
    # the first test that holds names the role
    first = pl.when(task).then(pl.lit("side-task")).when(comm).then(pl.lit("communication"))
    marked = first.when(barrier).then(pl.lit("barrier")).when(side).then(pl.lit("side"))
    role = marked.when(dominator).then(pl.lit("dominator")).otherwise(pl.lit("other"))
    return rows.select(role.alias("role"))["role"]


ROLES = {  # role -> its colour and legend entry, in legend order
    "side": (canvas.SIDE, "side operators"),
    "side-task": (canvas.SIDE, "side {} tasks"),  # the plan's side_kind
    "dominator": (canvas.DOMINATOR, "dominator"),
    "barrier": (canvas.BARRIER, "barrier candidate"),
    "communication": (canvas.COMMUNICATION, "communication"),
    "other": (canvas.OTHER, "other kernels"),
}


def draw_timeline(view: TimelineView) -> Figure:
    rows = clip(view.kernels, view.start_ns, view.end_ns)
    lane_key = rows["stream_id"].fill_null(COMMUNICATION_LANE).to_numpy()
    streams = [int(s) for s in np.unique(lane_key) if s != COMMUNICATION_LANE]
    # The plan's own streams keep their lanes even when empty: an empty side lane
    # is the evidence when the side ops stayed on the main stream (not split).
    streams += [s for s in (view.main_stream, view.side_stream) if s is not None]
    lanes = lane_order(list(dict.fromkeys(streams)), view.main_stream, view.side_stream)
    if (lane_key == COMMUNICATION_LANE).any():
        lanes.append(COMMUNICATION_LANE)
    has_windows = view.side_window is not None or view.dom_window is not None
    # Plan view: side / dominator / overlap rows. Stream view: one "concurrent" row.
    top_rows = ["side window", "dominator window", "overlap"] if has_windows else ["concurrent"]
    window_rows = len(top_rows)
    n_rows = window_rows + max(len(lanes), 1)

    height_in = 1.9 + 0.5 * n_rows
    figure = canvas.new_figure(14.0, height_in)
    figure.subplots_adjust(left=0.11, right=0.985, top=1 - 0.8 / height_in, bottom=1.05 / height_in)
    ax = figure.add_subplot()
    to_x = canvas.TimeScale(view.start_ns, view.end_ns)
    span = to_x.span
    ax.set_xlim(0, span)
    ax.set_ylim(n_rows - 0.5, -0.5)  # first row on top
    lane_y = {lane: window_rows + i for i, lane in enumerate(lanes)}

    if has_windows:
        _window_rows(ax, view, to_x)
    concurrent_ns = 0 if has_windows else _concurrent_row(ax, view, to_x)

    # Kernels: one collection. Zero-length kernels get a hairline so they show.
    x0 = to_x(rows["start_ns"].to_numpy())
    x1 = np.maximum(to_x(rows["end_ns"].to_numpy()), x0 + span * 4e-4)
    lane_of = lane_index(np.asarray(lanes, dtype=np.int64), lane_key)
    y = window_rows + lane_of.astype(float)
    task = np.zeros(rows.height, dtype=bool)  # a communication or copy plan's side tasks
    if has_windows or view.side_pattern is not None:
        roles = kernel_roles(view, rows).to_list() if rows.height else []
        colours = [ROLES[r][0] for r in roles]
        task = np.asarray([r == "side-task" for r in roles], dtype=bool).reshape(rows.height)
    else:  # no plan: colour by stream, as the demand chart does
        roles = ["communication"] if (lane_key == COMMUNICATION_LANE).any() else []
        palette = np.array([_stream_colour(i, lane) for i, lane in enumerate(lanes)], dtype=object)
        colours = palette[lane_of].tolist()
    plain = [c for c, t in zip(colours, task, strict=True) if not t]
    bars = bar_vertices(x0[~task], x1[~task], y[~task], LANE_HEIGHT)
    ax.add_collection(
        PolyCollection(bars, facecolors=plain, edgecolors="white", linewidths=0.3, zorder=3)
    )
    # A communication or copy plan's side tasks: their own hatched collection, so they
    # stand apart from compute and from the other communication on the same lane.
    if task.any():
        bars = bar_vertices(x0[task], x1[task], y[task], LANE_HEIGHT)
        ax.add_collection(
            PolyCollection(bars, facecolors=canvas.SIDE, zorder=3, label=SIDE_TASKS, **TASK_BARS)
        )
    _label_bars(ax, rows, x0, x1, y, span)
    idle_shown = False
    if view.main_stream is not None and view.main_stream in lane_y:
        idle_shown = _mark_idle_gaps(ax, view, lane_y[view.main_stream], to_x, span)
    _mark_barriers(ax, view, lane_y, to_x)

    labels = top_rows + [_lane_label(lane, view) for lane in lanes]
    ax.set_yticks(range(len(labels)), labels, fontsize=9)
    ax.tick_params(axis="y", length=0)
    for tick in ax.get_yticklabels()[:window_rows]:
        tick.set_fontstyle("italic")
        tick.set_color("#555555")
    to_x.label_axis(ax)
    ax.grid(axis="x", color="#e6e6e6", linewidth=0.6, zorder=0)
    ax.set_axisbelow(True)
    canvas.hide_spines(ax, "top", "right", "left")
    canvas.title(figure, view.title, view.verdict, height_in)
    if view.subtitle:
        ax.set_title(view.subtitle, fontsize=9, loc="left", color="#444444")
    share = concurrent_ns / max(view.end_ns - view.start_ns, 1)
    concurrent = f"≥ 2 streams busy: {canvas.format_duration(concurrent_ns)} ({share:.0%})"
    concurrent = concurrent if concurrent_ns else "no time with ≥ 2 streams busy"
    _legend(figure, view, set(roles), lanes, idle_shown, concurrent)
    if rows.height == 0:
        canvas.note(ax, span / 2, n_rows / 2 - 0.5, "no kernels in this range")
    return figure


def _lane_label(lane: int, view: TimelineView) -> str:
    if lane == COMMUNICATION_LANE:
        return "communication"
    return canvas.stream_label(lane, view.main_stream, view.side_stream)


def lane_index(lanes: npt.NDArray[np.int64], keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64)
    sorter = np.argsort(lanes)
    return sorter[np.searchsorted(lanes, keys, sorter=sorter)].astype(np.int64)


def _stream_colour(index: int, lane: int) -> str:
    if lane == COMMUNICATION_LANE:
        return canvas.COMMUNICATION
    return canvas.STREAM_COLOURS[index % len(canvas.STREAM_COLOURS)]


def _concurrent_row(ax: Axes, view: TimelineView, to_x: canvas.TimeScale) -> int:
    """The time with >= 2 compute streams busy, as bars and shading; its total."""
    seg_s, seg_e = concurrent_segments(view.kernels, view.start_ns, view.end_ns)
    lo, hi = to_x(seg_s), to_x(seg_e)
    bottom, top = ax.get_ylim()
    # the row's bars, then the same stretches shaded down through every lane
    for y, height, alpha, z in (
        (0.0, WINDOW_HEIGHT, None, 3),
        ((bottom + top) / 2, abs(bottom - top), 0.12, 1),
    ):
        bars = bar_vertices(lo, hi, np.full(lo.size, y), height)
        ax.add_collection(
            PolyCollection(bars, facecolors=canvas.OVERLAP, alpha=alpha, linewidths=0, zorder=z)
        )
    return int((seg_e - seg_s).sum())


def _overlap(view: TimelineView) -> tuple[int, int] | None:
    if view.side_window is None or view.dom_window is None:
        return None
    both = intervals.window_overlap(view.side_window, view.dom_window)
    start = max(view.side_window[0], view.dom_window[0])
    return (start, start + both) if both > 0 else None


def _window_rows(ax: Axes, view: TimelineView, to_x: canvas.TimeScale) -> None:
    canvas.shade_windows(ax, view.side_window, view.dom_window, to_x)
    overlap = _overlap(view)
    if overlap is not None:
        lo, hi = to_x(np.array(overlap))
        ax.axvspan(lo, hi, color=canvas.OVERLAP, alpha=0.16, zorder=1, linewidth=0)
    pct = "" if view.overlap_pct is None else f" = overlap_pct {view.overlap_pct:.2f}"
    bars = [
        (0, view.side_window, canvas.SIDE, "side"),
        (1, view.dom_window, canvas.DOMINATOR, "dominator"),
    ]
    bars += [(2, overlap, canvas.OVERLAP, "")] if overlap is not None else []
    for row, window, colour, name in bars:
        if window is None:
            where = ax.get_yaxis_transform()
            text = f"no {name} operators in this occurrence"
            ax.text(0.005, row, text, va="center", fontsize=8, color="#777777", transform=where)
            continue
        lo, hi = to_x(np.array(window))
        ax.barh(row, hi - lo, left=lo, height=WINDOW_HEIGHT, color=colour, zorder=3)
        text = f"  {canvas.format_duration(window[1] - window[0])}{pct if row == 2 else ''}"
        ax.text(hi, row, text, color="#333333", **ROW_TEXT)
    if overlap is not None or view.side_window is None or view.dom_window is None:
        return
    first_end = min(view.side_window[1], view.dom_window[1])
    last_start = max(view.side_window[0], view.dom_window[0])
    lo, hi = to_x(np.array([first_end, last_start]))
    ax.plot([lo, hi], [2, 2], color=canvas.BARRIER, linewidth=2, zorder=3, solid_capstyle="butt")
    # Right-aligned to the gap: a barrier annotation, if any, extends to the right.
    text = f"no overlap: windows {canvas.format_duration(last_start - first_end)} apart{pct}  "
    ax.text(lo, 2, text, ha="right", color=canvas.BARRIER, **ROW_TEXT)


def _width_pt(ax: Axes) -> float:
    return float(ax.get_position().width * ax.figure.get_figwidth() * 72)  # type: ignore[union-attr]


def _label_bars(
    ax: Axes, rows: pl.DataFrame, x0: np.ndarray, x1: np.ndarray, y: np.ndarray, span: float
) -> None:
    """Short names inside bars wide enough for them."""
    if rows.height == 0:
        return
    bar_pt = (x1 - x0) / span * _width_pt(ax)
    names = short_names(rows["name"])
    room = np.floor((bar_pt - 4) / CHAR_WIDTH_PT).astype(np.int64)  # characters that fit
    fits = np.flatnonzero(room >= np.minimum(names.str.len_chars().to_numpy(), 4))
    for i in fits:  # bounded by the axes width, not by the number of kernels
        name, fits_in = str(names[int(i)]), int(room[i])
        text = name if len(name) <= fits_in else name[: max(fits_in - 1, 1)] + "…"
        ax.text((x0[i] + x1[i]) / 2, y[i], text, fontsize=LABEL_FONT_PT, zorder=5, **BAR_LABEL)


def _mark_idle_gaps(
    ax: Axes, view: TimelineView, lane: int, to_x: canvas.TimeScale, span: float
) -> bool:
    """Hatch the main stream's idle gaps; True when any was drawn."""
    assert view.main_stream is not None
    min_gap = max(int((view.end_ns - view.start_ns) * MIN_GAP_FRACTION), 1)
    gap_s, gap_e = idle_gaps(view.kernels, view.main_stream, view.start_ns, view.end_ns, min_gap)
    if gap_s.size == 0:
        return False
    lo, hi = to_x(gap_s), to_x(gap_e)
    holes = bar_vertices(lo, hi, np.full(lo.size, float(lane)), LANE_HEIGHT * 0.8)
    idle: dict[str, Any] = {"edgecolors": canvas.BARRIER, "hatch": "////", "alpha": 0.55}
    ax.add_collection(PolyCollection(holes, facecolors="none", linewidths=0.6, zorder=2, **idle))
    width_pt = _width_pt(ax)
    box = {"facecolor": "white", "edgecolor": "none", "pad": 0.5}
    style: dict[str, Any] = {"ha": "center", "va": "top", "color": canvas.BARRIER, "zorder": 5}
    for a, b, ns in zip(lo, hi, gap_e - gap_s, strict=True):
        text = f"idle {canvas.format_duration(int(ns))}"
        if (b - a) / span * width_pt >= len(text) * CHAR_WIDTH_PT + 4:
            y = lane + LANE_HEIGHT / 2 + 0.02
            ax.text((a + b) / 2, y, text, fontsize=LABEL_FONT_PT, bbox=box, **style)
    return True


def _mark_barriers(
    ax: Axes, view: TimelineView, lane_y: dict[int, int], to_x: canvas.TimeScale
) -> None:
    shown = [b for b in view.barriers if view.start_ns <= b.start_ns <= view.end_ns][:5]
    arrow = {"arrowstyle": "-|>", "color": canvas.BARRIER, "linewidth": 1.2}
    box = {"facecolor": "white", "edgecolor": canvas.BARRIER, "boxstyle": "round,pad=0.2"}
    note: dict[str, Any] = {"textcoords": "offset points", "ha": "left", "va": "bottom"}
    note |= {"fontsize": 8, "color": canvas.BARRIER, "fontweight": "bold", "zorder": 6}
    for barrier in shown:
        y = lane_y.get(barrier.stream_id)
        if y is None:
            continue
        idle = f"idle {canvas.format_duration(barrier.gap_ns)} before"
        text = f"barrier? {short_name(barrier.name)}\n{idle}"
        xy = (float(to_x(barrier.start_ns)), y - LANE_HEIGHT / 2)
        bbox = {**box, "linewidth": 0.6}
        ax.annotate(text, xy=xy, xytext=(6, 14), arrowprops=arrow, bbox=bbox, **note)


def _legend(
    figure: Figure,
    view: TimelineView,
    roles: set[str],
    lanes: list[int],
    idle_shown: bool,
    concurrent: str,
) -> None:
    handles = []
    for r in (r for r in ROLES if r in roles):
        colour, name = ROLES[r]
        edge, hatch = (SIDE_TASK_EDGE, SIDE_TASK_HATCH) if r == "side-task" else (colour, None)
        label = name.format(view.side_kind)
        handles.append(Patch(facecolor=colour, edgecolor=edge, hatch=hatch, label=label))
    handles += canvas.window_handles(view.side_window, view.dom_window)
    if _overlap(view) is not None:
        handles.append(Patch(color=canvas.OVERLAP, alpha=0.4, label="overlap"))
    if view.side_window is None and view.dom_window is None and view.side_pattern is None:
        shown = [(i, lane) for i, lane in enumerate(lanes) if lane != COMMUNICATION_LANE]
        by_stream = [
            Patch(color=_stream_colour(i, lane), label=f"stream {lane}") for i, lane in shown
        ]
        handles = [*by_stream, *handles, Patch(color=canvas.OVERLAP, label=concurrent)]
    if idle_shown:
        idle = "idle on main stream"
        handles.append(Patch(facecolor="none", edgecolor=canvas.BARRIER, hatch="////", label=idle))
    canvas.legend(figure, handles, bbox_to_anchor=(0.5, 0.0))
