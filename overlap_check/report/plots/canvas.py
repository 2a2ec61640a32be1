"""Figures without pyplot (no global state, no GUI backend): the Agg / SVG canvases."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from overlap_check.model.errors import UsageError
from overlap_check.report.output_file import write_atomically
from overlap_check.report.plots import picture_format
from overlap_check.report.plots.views import format_duration as format_duration  # re-exported
from overlap_check.report.text_cores import exact_us as exact_us  # re-exported

DPI = 100

# One palette for every chart (colour-blind safe Tableau 10 tones).
SIDE = "#f28e2b"
DOMINATOR = "#4e79a7"
OVERLAP = "#59a14f"
BARRIER = "#e15759"
OTHER = "#bab0ac"
COMMUNICATION = "#b07aa1"
COLD = "#9d9d9d"
BANDS = {"real": OVERLAP, "partial": "#edc948", "fake": BARRIER}  # in legend order
STREAM_COLOURS = ("#4e79a7", "#f28e2b", "#76b7b2", "#b07aa1", "#9c755f", "#ff9da7", "#bab0ac")
VERDICT_COLOURS = {"real": OVERLAP, "partial": "#d4a017", "no-evidence": COLD}
VERDICT_COLOURS |= dict.fromkeys(("fake", "not-split"), BARRIER)


def title(
    figure: Figure, text: str, verdict: str | None, height_in: float, *, x: float = 0.11
) -> None:
    y = 1 - 0.22 / height_in
    bold: dict[str, Any] = {"fontsize": 12, "fontweight": "bold", "va": "center"}
    figure.text(x, y, text, ha="left", **bold)
    if verdict is not None:
        colour = VERDICT_COLOURS.get(verdict, COLD)
        badge = {"facecolor": colour, "edgecolor": "none", "boxstyle": "round,pad=0.35"}
        figure.text(0.985, y, verdict.upper(), color="white", ha="right", bbox=badge, **bold)


def shade_windows(
    ax: Axes, side: tuple[int, int] | None, dom: tuple[int, int] | None, to_x: TimeScale
) -> None:
    for window, colour in ((side, SIDE), (dom, DOMINATOR)):
        if window is not None:
            lo, hi = to_x(np.array(window))
            ax.axvspan(lo, hi, color=colour, alpha=0.09, zorder=1, linewidth=0)


def stream_label(stream: int, main: int | None, side: int | None) -> str:
    role = " (main)" if stream == main else " (side)" if stream == side else ""
    return f"stream {stream}{role}"


def window_handles(side: tuple[int, int] | None, dom: tuple[int, int] | None) -> list[Patch]:
    shaded = [(side, SIDE, "side window"), (dom, DOMINATOR, "dominator window")]
    return [Patch(color=c, alpha=0.25, label=name) for w, c, name in shaded if w is not None]


def legend(figure: Figure, handles: list[Any], **where: Any) -> None:
    style: dict[str, Any] = {"loc": "lower center", "fontsize": 8, "frameon": False, **where}
    figure.legend(handles=handles, ncol=len(handles), **style)


def note(ax: Axes, x: float, y: float, text: str, **style: Any) -> None:
    ax.text(x, y, text, ha="center", va="center", color="#777777", **style)


def hide_spines(ax: Axes, *spines: str) -> None:
    for spine in spines:
        ax.spines[spine].set_visible(False)


class TimeScale:
    """Capture-clock ns -> float time from the view start (int64 differences taken first)."""

    def __init__(self, start_ns: int, end_ns: int) -> None:
        self.start_ns = start_ns
        width = max(end_ns - start_ns, 1)
        units = (("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000))
        # the first unit in which the view is under 20 000 long (seconds at most)
        self.unit, self.divisor = next((u, d) for u, d in units if width < 20_000 * d or u == "s")
        self.span = width / self.divisor

    def __call__(self, ns: npt.ArrayLike) -> npt.NDArray[np.float64]:
        return (np.asarray(ns, dtype=np.int64) - self.start_ns) / self.divisor

    def label_axis(self, ax: Axes) -> None:
        ax.ticklabel_format(axis="x", style="plain", useOffset=False)
        where = f"capture clock: {exact_us(self.start_ns)} µs"
        ax.set_xlabel(f"{self.unit} from the start of this view  ({where})", fontsize=9)


def new_figure(width_in: float, height_in: float) -> Figure:
    return Figure(figsize=(width_in, height_in), dpi=DPI)


def save(figure: Figure, path: Path) -> Path:
    fmt = picture_format(path)
    # Reproducible files: no creation date, so regenerated docs images do not churn.
    svg: dict[str, str | None] = {"Date": None, "Creator": "overlap-check"}
    metadata = svg if fmt == "svg" else {"Software": "overlap-check"}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Figure.savefig picks the Agg canvas for png and the SVG canvas for svg.
        # A fixed hash salt keeps SVG element ids stable between runs.
        picture = io.BytesIO()
        with matplotlib.rc_context({"svg.hashsalt": "overlap-check"}):
            figure.savefig(picture, format=fmt, dpi=DPI, metadata=metadata)
        write_atomically(path, picture.getvalue())
    except OSError as err:  # a read-only place, a file where a dir should be, a full disk
        raise UsageError(f"cannot write the picture: {err.strerror or err}", path=path) from err
    return path
