"""Which charts a Report asks for, and the views they draw (no matplotlib here). Defaults:
per plan result, the timeline of its worst warm occurrence and its block demand (where the
captures have block counts: not CUDA); without plans, per rank, one warm run's busiest
overlap region. One runs chart for all."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from overlap_check.model import (
    Capture,
    DeviceCores,
    Occurrence,
    PlanResult,
    PlanRun,
    Report,
    RunInfo,
    StreamPair,
    StreamPairRun,
    Thresholds,
)
from overlap_check.model.errors import UsageError
from overlap_check.model.verdicts import decided_text, figure_text
from overlap_check.report.plots.picking import barrier_marks, pick_occurrence
from overlap_check.report.plots.views import (
    RunPoint,
    RunSeries,
    RunsPanel,
    RunsView,
    TimelineView,
    busiest_window,
    format_duration,
    occurrence_range,
    stream_view_width,
)

ChartKind = Literal["timeline", "runs", "demand"]
CHART_KINDS: tuple[ChartKind, ...] = ("timeline", "runs", "demand")
ByRun = dict[tuple[int | None, int], tuple[RunInfo, Capture]]  # (rank, run) -> run, capture
BLOCKS = ("block_num", "mix_block_num")  # a demand chart needs them: a CUDA trace has none
_VERDICT_RANK = {"no-evidence": 0, "not-split": 1, "fake": 2, "partial": 3, "real": 4}


@dataclass(frozen=True)
class Chart:
    kind: ChartKind
    slug: str  # file-name part: "timeline-moe-shared-expert-rank0"
    view: TimelineView | RunsView  # a demand chart draws its timeline's view (demand_view)


@dataclass(frozen=True)
class Selection:
    plan: str | None = None
    rank: int | None = None
    run: int | None = None
    occurrence: int | None = None
    kinds: tuple[ChartKind, ...] = CHART_KINDS
    # measures an occurrence the report's layer table does not list (cli/plot gives
    # measure.occurrence.measure_occurrence; the plots never measure themselves)
    measure: Callable[[PlanResult, PlanRun, Capture, int], Occurrence] | None = None


def charts(report: Report, captures: Sequence[Capture], selection: Selection) -> list[Chart]:
    if not report.runs:
        raise UsageError("the report lists no run to draw")
    plans = _chosen_plans(report, selection)
    # The demand charts share the timelines' ranges; the runs chart alone needs neither.
    wanted = {"timeline", "demand"} & set(selection.kinds)
    timelines = _timelines(report, captures, plans, selection) if wanted else []
    out: list[Chart] = []
    if "timeline" in selection.kinds:
        out.extend(Chart("timeline", slug, view) for slug, view in timelines)
    if "runs" in selection.kinds:
        out.append(Chart("runs", "runs", runs_view(report, plans, selection)))
    blocks = any(c.kernels[n].null_count() < c.kernels.height for c in captures for n in BLOCKS)
    if selection.kinds == ("demand",) and not blocks:  # asked for alone: say why there is none
        what = "no block counts (Block Num / Mix Block Num) in the captures: no demand chart"
        raise UsageError(what, hint="a CUDA (Kineto) trace has none: draw the timeline")
    if "demand" in selection.kinds and blocks:  # else two empty panels
        device = report.cores.device if report.cores is not None else None
        for slug, view in timelines:
            demand = demand_view(view, device or view.device)
            out.append(Chart("demand", slug.replace("timeline", "demand", 1), demand))
    return out


def _timelines(
    report: Report, captures: Sequence[Capture], plans: list[PlanResult], selection: Selection
) -> list[tuple[str, TimelineView]]:
    by_run = _captures_by_run(report, captures)
    multi_rank = len({r.rank for r in report.runs}) > 1
    if plans:
        views = [(p.name, p.rank, plan_timeline(report, p, by_run, selection)) for p in plans]
    else:
        ranks = _chosen_ranks(report, selection)
        views = [("streams", r, stream_timeline(report, r, by_run, selection)) for r in ranks]
    return [(_slug(name, rank, multi_rank), view) for name, rank, view in views]


def _slug(name: str, rank: int | None, multi_rank: bool) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "plan"
    suffix = f"-rank{rank}" if multi_rank and rank is not None else ""
    return f"timeline-{safe}{suffix}"


def _chosen_plans(report: Report, selection: Selection) -> list[PlanResult]:
    plans, wanted = list(report.plans), selection.plan
    if wanted is not None:
        plans = [p for p in plans if p.name == wanted]
        if not plans:
            known = ", ".join(sorted({p.name for p in report.plans})) or "none"
            raise UsageError(f"no plan named {wanted!r} in this analysis", hint=f"plans: {known}")
    if selection.rank is not None and report.plans:
        plans = [p for p in plans if p.rank == selection.rank]
        if not plans:
            raise _no_rank(report, f"no plan result for rank {selection.rank}")
    return plans


def _chosen_ranks(report: Report, selection: Selection) -> list[int | None]:
    ranks = list(dict.fromkeys(r.rank for r in report.runs))
    if selection.rank is None:
        return ranks
    if selection.rank not in ranks:
        raise _no_rank(report, f"no run of rank {selection.rank}")
    return [selection.rank]


def _no_rank(report: Report, message: str) -> UsageError:
    known = ", ".join(str(r) for r in dict.fromkeys(r.rank for r in report.runs)) or "none"
    return UsageError(message, hint=f"ranks: {known}")


def _captures_by_run(report: Report, captures: Sequence[Capture]) -> ByRun:
    """(rank, run) -> the run and its capture, by path, else by order within the rank."""
    by_path: dict[tuple[int | None, str], list[Capture]] = {}
    by_rank: dict[int | None, list[Capture]] = {}
    for capture in captures:
        by_path.setdefault((capture.rank, capture.path), []).append(capture)
        by_rank.setdefault(capture.rank, []).append(capture)
    found: ByRun = {}
    for info in report.runs:
        same_path = by_path.get((info.rank, info.path))
        if same_path:
            found[(info.rank, info.index)] = (info, same_path.pop(0))
            continue
        in_rank = by_rank.get(info.rank, [])
        if 0 < info.index <= len(in_rank):
            found[(info.rank, info.index)] = (info, in_rank[info.index - 1])
    return found


def _lookup(
    by_run: ByRun, rank: int | None, run: int, *, copies: bool = False
) -> tuple[RunInfo, Capture]:
    from overlap_check.model.table import without_copies

    try:
        info, capture = by_run[(rank, run)]
    except KeyError:
        runs = ", ".join(str(k[1]) for k in by_run if k[0] == rank) or "none"
        where = f" of rank {rank}" if rank is not None else ""
        raise UsageError(f"no capture for run {run}{where}", hint=f"runs: {runs}") from None
    # pictures show kernels and communication: copy tasks are a copy plan's only
    if copies:
        return info, capture
    return info, replace(capture, kernels=without_copies(capture.kernels))


def _window(start: int | None, end: int | None) -> tuple[int, int] | None:
    return (start, end) if start is not None and end is not None else None


def plan_timeline(
    report: Report, result: PlanResult, by_run: ByRun, selection: Selection
) -> TimelineView:
    chosen = pick_occurrence(result, selection.run, selection.occurrence)
    plan_line = _plan_line(result, report.thresholds)
    if chosen is None:  # nothing recorded (not split, no evidence): show the streams instead
        run = selection.run or _default_run(report, result.rank)
        view = stream_timeline(report, result.rank, by_run, Selection(run=run))
        title = f"{result.name}{_rank_text(result.rank)} · run {run}: no occurrence to show"
        subtitle = f"{plan_line}. {result.diagnosis}".strip()
        return replace(view, title=title, subtitle=subtitle, verdict=result.verdict)
    plan_run, recorded = chosen
    info, capture = _lookup(by_run, result.rank, plan_run.run, copies=result.side_kind == "copy")
    occ = recorded
    if occ is None:
        assert selection.occurrence is not None
        if selection.measure is None:
            where = f"occurrence {selection.occurrence} of run {plan_run.run}"
            hint = "`overlap-check plot` measures it from the capture"
            raise UsageError(f"{where} is not in the report's layer table", hint=hint)
        occ = selection.measure(result, plan_run, capture, selection.occurrence)
    side = _window(occ.side_start_ns, occ.side_end_ns)
    dom = _window(occ.dom_start_ns, occ.dom_end_ns)
    barriers = barrier_marks(
        capture.kernels, result.barrier_candidates, side, dom, plan_run.run, occ.index
    )
    view_range = occurrence_range([side, dom], [b.start_ns for b in barriers])
    if view_range is None:  # an occurrence without windows: fall back to the whole run
        view_range = busiest_window(capture.kernels, stream_view_width(capture.kernels))
    thresholds = report.thresholds
    # hidden_pct decides: it comes first, with the occurrence's band as the report gave it
    # (occurrences measured afresh for a chosen index carry neither: "not judged")
    band = occ.verdict or "not banded"
    hidden = (
        "not judged"
        if occ.hidden_pct is None
        else f"{figure_text(occ.hidden_pct, thresholds)} ({band}{_hidden_text(result, occ)})"
    )
    window = "n/a" if occ.overlap_pct is None else f"{occ.overlap_pct:.2f}"
    sample = plan_run.sample or f"run {info.index}"  # "run 3 step 50" with --per step
    title = (
        f"{result.name}{_rank_text(result.rank)} · {sample}"
        f" ({'warm' if plan_run.warm else 'cold'}) · occurrence {occ.index} of "
        f"{plan_run.occurrences} · hidden_pct {hidden}"
    )
    if selection.occurrence is not None:
        which = "chosen"
    elif occ.hidden_pct is None and occ.overlap_pct is None:
        which = "first unjudged"  # no run has a judged occurrence
    else:
        which = "deciding warm" if plan_run.warm else "deciding"
    status = f" ({occ.status})" if occ.status != "ok" else ""
    subtitle = (
        f"{which} occurrence{status}: hidden_pct {hidden}; "
        f"window overlap_pct {window} · {plan_line}"
    )
    return TimelineView(
        capture.kernels,
        *view_range,
        title,
        subtitle,
        main_stream=result.main_stream,
        side_stream=result.side_stream,
        side_window=side,
        dom_window=dom,
        side_pattern=result.side,
        dominator_pattern=result.dominator,
        dominator_name=occ.dominator,
        barriers=barriers,
        overlap_pct=occ.overlap_pct,
        verdict=result.verdict,
        device=capture.device_cores,
        side_kind=result.side_kind,
    )


def _hidden_text(result: PlanResult, occ: Occurrence) -> str:
    """A communication or copy plan's hidden time for this occurrence ("" for compute)."""
    busy, hidden = occ.side_busy_ns, occ.hidden_ns
    if result.side_kind == "compute" or busy is None or hidden is None:
        return ""
    under = f"{format_duration(hidden)} of {format_duration(busy)} {result.side_kind}"
    return f"; {under} under compute"


def _plan_line(result: PlanResult, thresholds: Thresholds) -> str:
    provisional = ", provisional" if result.provisional else ""
    if result.placement:  # 3a: say where the side ops went, it is what the picture shows
        return f"plan: {result.verdict}{provisional} ({result.placement[0]})"
    if result.hidden_pct is None:
        return f"plan: {result.verdict}{provisional}"
    runs = f"{result.runs_used} warm run{'s' if result.runs_used != 1 else ''}"
    return f"plan {result.verdict}{provisional} ({decided_text(result, thresholds)}; {runs})"


def _rank_text(rank: int | None) -> str:
    return f" · rank {rank}" if rank is not None else ""


def _default_run(report: Report, rank: int | None) -> int:
    """The rank's first warm run, else its first run."""
    runs = sorted((r for r in report.runs if r.rank == rank), key=lambda r: not r.warm)
    if not runs:
        raise UsageError("the report lists no run to draw")
    return runs[0].index


def stream_timeline(
    report: Report, rank: int | None, by_run: ByRun, selection: Selection
) -> TimelineView:
    """A window of one run's streams around its busiest overlap region (no plan)."""
    run = selection.run if selection.run is not None else _default_run(report, rank)
    info, capture = _lookup(by_run, rank, run)
    start, end = busiest_window(capture.kernels, stream_view_width(capture.kernels))
    pairs = [p for p in report.stream_pairs if p.rank == rank]
    main = next((r.main_stream for r in report.ranks if r.rank == rank), None)
    if main is None and pairs:
        main = pairs[0].main
    side = pairs[0].side if pairs else None
    figures = "; ".join(_pair_text(p, info.index, report.thresholds) for p in pairs)
    verdict = min((p.verdict for p in pairs), key=lambda v: _VERDICT_RANK[v], default=None)
    warm = "warm" if info.warm else "cold"
    title = f"streams{_rank_text(rank)} · run {info.index} ({warm}) · busiest overlap region"
    figures = figures or "no pair of compute streams"
    subtitle = f"stream-level (interval-set) overlap_pct, this run: {figures}"
    kernels, device = capture.kernels, capture.device_cores
    return TimelineView(
        kernels, start, end, title, subtitle, main, side, verdict=verdict, device=device
    )


def _pair_text(pair: StreamPair, run: int, thresholds: Thresholds) -> str:
    this = next((r for r in pair.per_run if r.run == run), None)
    figure = f"{this.overlap_pct:.2f}" if this is not None else "n/a"
    median = figure_text(pair.overlap_pct, thresholds)
    return f"stream {pair.side} vs {pair.main}: {figure} (warm median {median}, {pair.verdict})"


def runs_view(report: Report, plans: Sequence[PlanResult], selection: Selection) -> RunsView:
    """A panel per plan (or per stream pair without plans), a series per rank in each."""
    results: Sequence[PlanResult | StreamPair] = plans
    title, figure = "hidden_pct per run, by plan and rank", "hidden_pct"
    if not plans:
        ranks = set(_chosen_ranks(report, selection))
        results = [p for p in report.stream_pairs if p.rank in ranks]
        title, figure = "stream-level overlap_pct per run, by rank", "overlap_pct"
    panels: dict[str, list[RunSeries]] = {}
    for r in results:
        panel = (
            f"plan {r.name} (side work hidden under the main path)"
            if isinstance(r, PlanResult)
            else f"stream {r.side} vs main stream {r.main} (interval-set definition)"
        )
        label = f"rank {r.rank}" if r.rank is not None else "all runs"
        series = RunSeries(label, _points(r.per_run, figure), getattr(r, figure), r.verdict)
        panels.setdefault(panel, []).append(series)
    shown = tuple(RunsPanel(name, tuple(series)) for name, series in panels.items())
    unit = "sample (run·step)" if report.per == "step" else "run"
    return RunsView(title, shown, report.thresholds, unit, figure)


def _points(per_run: Sequence[PlanRun | StreamPairRun], figure: str) -> tuple[RunPoint, ...]:
    if not any(r.sample for r in per_run):
        return tuple(RunPoint(r.run, r.warm, getattr(r, figure)) for r in per_run)
    return tuple(
        RunPoint(i, r.warm, getattr(r, figure), _sample_tick(r.sample))
        for i, r in enumerate(per_run, start=1)
    )


def _sample_tick(sample: str | None) -> str | None:
    match = re.fullmatch(r"run (\d+) step (-?\d+)", sample or "")
    return f"{match.group(1)}·{match.group(2)}" if match else sample


def demand_view(timeline: TimelineView, device: DeviceCores | None) -> TimelineView:
    title = timeline.title.split(" · hidden_pct")[0].split(" · busiest")[0]
    return replace(timeline, title=f"{title} · block demand", device=device)
