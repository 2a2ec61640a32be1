"""Pictures of an analysis: timeline, runs chart and block demand (PNG or SVG).
matplotlib is imported only inside :func:`write_plots`. The first chart goes to ``path``,
the others beside it as ``<stem>-<chart>[-<plan>][-rank<R>]<suffix>`` (``out-runs.png``;
a rank part only when the analysis holds several ranks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from overlap_check.model import Capture, Occurrence, PlanResult, PlanRun, Report
from overlap_check.model.errors import UsageError
from overlap_check.report.plots.select import CHART_KINDS, ChartKind, Selection, charts

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["CHART_KINDS", "ChartKind", "output_paths", "picture_format", "write_plots"]


def write_plots(
    report: Report,
    captures: Sequence[Capture],
    path: str | Path,
    *,
    plan: str | None = None,
    rank: int | None = None,
    run: int | None = None,
    occurrence: int | None = None,
    kinds: Sequence[ChartKind] = CHART_KINDS,
    measure: Callable[[PlanResult, PlanRun, Capture, int], Occurrence] | None = None,
) -> list[Path]:
    """Draw the charts of ``report`` (kernels from ``captures``); return the files written.
    UsageError for a bad suffix or a choice (select.py) the report does not hold."""
    from overlap_check.model.extras import require

    require("matplotlib", "plot", "drawing pictures")
    from overlap_check.report.plots import canvas

    target = Path(path)
    picture_format(target)
    unknown = [k for k in kinds if k not in CHART_KINDS]
    if unknown:
        raise UsageError(f"unknown chart kind {unknown[0]!r}", hint="timeline, runs or demand")
    selection = Selection(plan, rank, run, occurrence, tuple(kinds), measure)
    chosen = charts(report, captures, selection)
    from overlap_check.report.plots.demand import draw_demand
    from overlap_check.report.plots.runs import draw_runs
    from overlap_check.report.plots.timeline import draw_timeline

    # a chart's view is of its kind's class (select.charts)
    draw: dict[str, Callable[[Any], Figure]] = {"timeline": draw_timeline, "runs": draw_runs}
    draw["demand"] = draw_demand
    files = output_paths(target, [c.slug for c in chosen])
    return [canvas.save(draw[c.kind](c.view), file) for c, file in zip(chosen, files, strict=True)]


SUFFIXES = (".png", ".svg")


def picture_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        what = f"cannot tell the picture format from {path.name!r}"
        raise UsageError(what, path=path, hint="name the file *.png or *.svg")
    return suffix[1:]


def output_paths(path: Path, slugs: Sequence[str]) -> list[Path]:
    """The file of each chart; a repeated slug (plan names unlike in punctuation) gets ``-2``."""
    paths: list[Path] = []
    seen: dict[str, int] = {}
    for i, slug in enumerate(slugs):
        if i == 0:
            paths.append(path)
            continue
        seen[slug] = seen.get(slug, 0) + 1
        unique = slug if seen[slug] == 1 else f"{slug}-{seen[slug]}"
        paths.append(path.with_name(f"{path.stem}-{unique}{path.suffix}"))
    return paths
