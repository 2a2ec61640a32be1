"""The block demand chart: per core kind, the blocks each stream demands, stacked, under
the device maximum, the time above it shaded."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from overlap_check.report.plots import canvas
from overlap_check.report.plots.views import (
    TimelineView,
    block_demand,
    clip,
    demand_steps,
    lane_order,
)
from overlap_check.report.text_cores import device_text

KINDS = (("aicore", "AI Core (cube) blocks"), ("vectorcore", "AI Vector blocks"))
FILL: dict[str, Any] = {"alpha": 0.85, "linewidth": 0, "zorder": 3}  # a stream's blocks
EXCESS: dict[str, Any] = {"color": canvas.BARRIER, "alpha": 0.35, "linewidth": 0, "zorder": 4}
EXCESS["hatch"] = "xx"  # the blocks above the device maximum


def draw_demand(view: TimelineView) -> Figure:
    demand = block_demand(view.kernels, view.device)
    in_view = clip(demand, view.start_ns, view.end_ns)
    streams = [int(s) for s in in_view["stream_id"].unique().to_list()]
    streams = lane_order(streams, view.main_stream, view.side_stream)
    height_in = 6.0
    figure = canvas.new_figure(14.0, height_in)
    figure.subplots_adjust(
        left=0.11, right=0.985, top=1 - 0.8 / height_in, bottom=1.05 / height_in, hspace=0.35
    )
    axes = figure.subplots(2, 1, sharex=True)
    to_x = canvas.TimeScale(view.start_ns, view.end_ns)
    palette = canvas.STREAM_COLOURS
    colours = {s: palette[i % len(palette)] for i, s in enumerate(streams)}
    over_any = False
    for ax, (kind, label) in zip(axes, KINDS, strict=True):
        over_any |= _panel(ax, view, in_view, kind, colours, to_x)
        ax.set_ylabel(label, fontsize=9)
    axes[-1].set_xlim(0, to_x.span)
    to_x.label_axis(axes[-1])
    canvas.title(figure, view.title, None, height_in)
    device = view.device
    source = "device cores unknown: no maximum drawn"
    if device is not None:
        source = f"device {device_text(device)}, from {device.source}"
    what = "blocks demanded by the kernels running at each instant, stacked by stream"
    subtitle = f"{what} (each kernel capped at the device's cores); {source}"
    axes[0].set_title(subtitle, fontsize=9, loc="left", color="#444444")
    _legend(figure, view, colours, over_any)
    return figure


def _panel(
    ax: Axes,
    view: TimelineView,
    demand: pl.DataFrame,
    kind: str,
    colours: dict[int, str],  # by stream, in lane order
    to_x: canvas.TimeScale,
) -> bool:
    cores: int | None = None if view.device is None else getattr(view.device, kind)
    maximum = cores or None  # the kind's device cores; None (no line) where unknown (0)
    edges, levels = demand_steps(demand, kind, list(colours), view.start_ns, view.end_ns)
    x = to_x(edges)
    xs = np.repeat(x, 2)[1:-1]  # step fill: each segment's value at both of its edges
    base = np.zeros(max(edges.size - 1, 0), dtype=np.int64)
    for row, colour in enumerate(colours.values()):
        top = base + levels[row]
        ax.fill_between(xs, np.repeat(base, 2), np.repeat(top, 2), color=colour, **FILL)
        base = top
    canvas.shade_windows(ax, view.side_window, view.dom_window, to_x)
    peak = int(base.max()) if base.size else 0
    above = False
    if maximum is not None:
        ax.axhline(maximum, color=canvas.BARRIER, linestyle="--", linewidth=1.2, zorder=4)
        guess = " (guess)" if view.device is not None and view.device.source == "observed" else ""
        box = {"facecolor": "white", "edgecolor": "none", "pad": 1, "alpha": 0.85}
        style: dict[str, Any] = {"ha": "right", "va": "bottom", "fontsize": 8, "zorder": 6}
        text = f"device max {maximum}{guess}"
        axis = ax.get_yaxis_transform()
        ax.text(0.995, maximum, text, transform=axis, color=canvas.BARRIER, bbox=box, **style)
        over = base > maximum
        if over.any():
            above = True  # shade the time where the streams together ask for more
            where = np.repeat(over, 2)
            ax.fill_between(xs, maximum, np.repeat(base, 2), where=where, **EXCESS)
    ax.set_ylim(0, max(peak, maximum or 0, 1) * 1.15)
    ax.grid(axis="y", color="#e6e6e6", linewidth=0.6, zorder=0)
    canvas.hide_spines(ax, "top", "right")
    if peak == 0:
        text = "no blocks demanded in this range (no block counts, or none of this core kind)"
        canvas.note(ax, 0.5, 0.5, text, transform=ax.transAxes, fontsize=9)
    return above


def _legend(figure: Figure, view: TimelineView, colours: dict[int, str], over: bool) -> None:
    label = {s: canvas.stream_label(s, view.main_stream, view.side_stream) for s in colours}
    handles = [Patch(color=c, label=label[s]) for s, c in colours.items()]
    if over:
        over_max = "above device max"
        handles.append(Patch(color=canvas.BARRIER, alpha=0.35, hatch="xx", label=over_max))
    canvas.legend(figure, handles + canvas.window_handles(view.side_window, view.dom_window))
