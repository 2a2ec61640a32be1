"""The runs chart: per run and rank, the figure the verdict bands apply to, against them;
cold runs hollow and grey, each rank's warm median a dashed line."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from overlap_check.model import Thresholds
from overlap_check.report.plots import canvas
from overlap_check.report.plots.views import RunSeries, RunsView

PANEL_HEIGHT_IN = 2.6


def draw_runs(view: RunsView) -> Figure:
    panels = view.panels
    n = max(len(panels), 1)
    height_in = 1.6 + PANEL_HEIGHT_IN * n
    figure = canvas.new_figure(11.0, height_in)
    figure.subplots_adjust(
        left=0.08, right=0.80, top=1 - 0.75 / height_in, bottom=0.95 / height_in, hspace=0.55
    )
    axes = figure.subplots(n, 1, squeeze=False)[:, 0]
    points = [p for panel in panels for s in panel.series for p in s.points]
    runs_max = max((p.run for p in points), default=1)
    ticks = {p.run: p.label for p in points if p.label}
    for ax, panel in zip(axes, panels, strict=False):
        notes = _bands(ax, view.thresholds)
        for colour_index, series in enumerate(panel.series):
            colour = canvas.STREAM_COLOURS[colour_index % len(canvas.STREAM_COLOURS)]
            _series(ax, series, colour, offset=_offset(colour_index, len(panel.series)))
            if series.median is not None:
                verdict = f", {series.verdict}" if series.verdict else ""
                text = f"{series.label} median {series.median:.2f}{verdict}"
                notes.append((series.median, text, colour, "bold"))
            elif series.verdict is not None:  # not-split / no-evidence: no median to draw
                notes.append((0.5, f"{series.label}: {series.verdict}", colour, "bold"))
        _right_notes(ax, notes)
        ax.set_title(panel.title, fontsize=10, loc="left")
        _axes_style(ax, runs_max, view.unit, ticks, view.figure)
    if not panels:
        nothing = "no plan or stream pair to chart"
        canvas.note(axes[0], 0.5, 0.5, nothing, transform=axes[0].transAxes)
        _axes_style(axes[0], 1, view.unit, {}, view.figure)
    canvas.title(figure, view.title, None, height_in, x=0.08)
    _legend(figure)
    return figure


def _offset(index: int, count: int) -> float:
    """A small shift per rank, so that equal points of ranks stay visible."""
    if count <= 1:
        return 0.0
    return (index - (count - 1) / 2) * min(0.08, 0.4 / count)


def _bands(ax: Axes, thresholds: Thresholds) -> list[tuple[float, str, str, str]]:
    real, fake = thresholds.real, thresholds.fake
    ax.axhspan(real, 1.05, color=canvas.BANDS["real"], alpha=0.10, linewidth=0)
    ax.axhspan(fake, real, color=canvas.BANDS["partial"], alpha=0.12, linewidth=0)
    ax.axhspan(-0.05, fake, color=canvas.BANDS["fake"], alpha=0.12, linewidth=0)
    names = [((real + 1.0) / 2, f"real ≥ {real:g}"), ((fake + real) / 2, "partial")]
    return [(y, text, "#555555", "normal") for y, text in [*names, (fake / 2, f"fake ≤ {fake:g}")]]


def spread(values: list[float], gap: float, lo: float, hi: float) -> list[float]:
    """Positions near ``values``, at least ``gap`` apart, inside [lo, hi] where possible."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    placed = [min(max(values[i], lo), hi) for i in order]
    for k in range(1, len(placed)):  # push up
        placed[k] = max(placed[k], placed[k - 1] + gap)
    overflow = placed[-1] - hi if placed else 0.0
    if overflow > 0:  # then shift everything down, keeping the gaps
        for k in range(len(placed) - 1, -1, -1):
            nxt = placed[k + 1] - gap if k + 1 < len(placed) else hi
            placed[k] = min(placed[k], nxt)
    at = dict(zip(order, placed, strict=True))  # each value's place, by its index
    return [at[i] for i in range(len(values))]


def _right_notes(ax: Axes, notes: list[tuple[float, str, str, str]]) -> None:
    ys = spread([n[0] for n in notes], gap=0.11, lo=-0.03, hi=1.03)
    style: dict[str, Any] = {"transform": ax.get_yaxis_transform(), "fontsize": 8, "va": "center"}
    for y, (_, text, colour, weight) in zip(ys, notes, strict=True):
        ax.text(1.01, y, text, color=colour, fontweight=weight, **style)


def _series(ax: Axes, series: RunSeries, colour: str, offset: float) -> None:
    runs = np.array([p.run for p in series.points], dtype=float) + offset
    values = np.array([np.nan if p.value is None else p.value for p in series.points], dtype=float)
    warm = np.array([p.warm for p in series.points], dtype=bool)
    ax.plot(runs, values, color=colour, linewidth=0.8, alpha=0.5, zorder=2)
    ax.scatter(runs[warm], values[warm], s=36, color=colour, zorder=4, label=series.label)
    cold: dict[str, Any] = {"facecolors": "white", "edgecolors": canvas.COLD, "linewidths": 1.2}
    ax.scatter(runs[~warm], values[~warm], s=36, zorder=4, **cold)
    missing = np.isnan(values)
    if missing.any():  # a run without a judged occurrence: say so at the bottom
        ax.scatter(runs[missing], np.zeros(missing.sum()), marker="x", color=colour, zorder=4)
    if series.median is not None:
        ax.axhline(series.median, color=colour, linestyle="--", linewidth=1.2, zorder=3)


def _axes_style(ax: Axes, runs_max: int, unit: str, ticks: dict[int, str], figure: str) -> None:
    ax.set_xlim(0.5, runs_max + 0.5)
    ax.set_ylim(-0.05, 1.05)
    step = max(1, -(-runs_max // 30))  # at most about 30 ticks
    positions = list(range(1, runs_max + 1, step))
    if ticks:  # samples: "run·step" under each tick
        ax.set_xticks(positions, [ticks.get(x, str(x)) for x in positions], fontsize=8)
    else:
        ax.set_xticks(positions)
    ax.set_xlabel(unit, fontsize=9)
    ax.set_ylabel(figure, fontsize=9)
    canvas.hide_spines(ax, "top", "right")


def _legend(figure: Figure) -> None:
    grey = "#555555"
    cold: dict[str, Any] = {"markerfacecolor": "white", "markeredgecolor": canvas.COLD}
    handles: list[Line2D | Patch] = [
        Line2D([], [], marker="o", linestyle="", color=grey, label="warm run (judged)"),
        Line2D([], [], marker="o", linestyle="", label="cold run (discarded)", **cold),
        Line2D([], [], marker="x", linestyle="", color=grey, label="no judged occurrence"),
        Line2D([], [], linestyle="--", color=grey, label="warm-run median"),
    ]
    handles += [Patch(color=c, alpha=0.3, label=f"{name} band") for name, c in canvas.BANDS.items()]
    canvas.legend(figure, handles)
