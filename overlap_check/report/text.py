"""The plain-text report: verdict and reasons first, then plans, stream pairs, ranks and runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from overlap_check.model import PlanResult, PlanRun, Report, RunInfo, rank_text
from overlap_check.report.color import BASELINE_STYLE, VERDICT_STYLE, bold, paint
from overlap_check.report.text_table import Painter, table

WINDOW = "window overlap_pct = overlap / min(side window, dominator window), median over warm runs"
HIDDEN = "hidden_pct: side busy time under other streams' compute, warm median (decides)"
BUSY = (
    "busy-time overlap_pct = |busy(main) ∩ busy(side)| / min(busy(main), busy(side)), warm median"
)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _known(value: int | None) -> str:
    """A stream id as the report prints it: ``-`` when unknown, as for ranks."""
    return "-" if value is None else str(value)


def _us(ns: float) -> str:
    return f"{ns / 1000:.3f}"


def _heading(title: str, explanation: str, color: bool) -> str:
    """A section title in bold, its explanation (in parentheses) plain."""
    return bold(title, color) + (f" ({explanation})" if explanation else "")


def _judged(color: bool) -> Painter:
    """Paints a figure's "(provisional)" mark: the figure stands on fewer runs than asked."""
    mark = " (provisional)"
    return lambda cell: cell.replace(mark, " " + paint(mark[1:], "yellow", color))


def _styled(styles: Mapping[str, str], color: bool) -> Painter:
    return lambda cell: paint(cell, styles.get(cell), color)


def _worst(plan: PlanResult) -> str:
    worst = plan.worst_occurrence()
    if worst is None or not worst[0].warm:
        return "-"
    run, occ = worst
    where = run.sample or f"run {run.run}"
    return f"#{occ.index} ({where}): {_pct(occ.overlap_pct)}"


def _samples(plan: PlanResult) -> str:
    return "runs" if not plan.per_run or plan.per_run[0].sample is None else "steps"


def _per_run(runs: Sequence[PlanRun]) -> str:
    parts = []
    for r in runs:
        name = r.sample or f"run {r.run}"
        parts.append(f"{name}{'' if r.warm else ' (cold)'} {_pct(r.overlap_pct)}")
    return ", ".join(parts)


def _occurrence_counts(plan: PlanResult) -> str:
    warm = [r for r in plan.per_run if r.warm] or list(plan.per_run)
    if not warm:
        return "-"
    first = warm[0]
    text = f"{first.judged}/{first.occurrences}"
    return (
        text
        if all((r.judged, r.occurrences) == (first.judged, first.occurrences) for r in warm)
        else text + "*"
    )


def _window(start: int | None, end: int | None, origin: int | None) -> str:
    if start is None or end is None or origin is None:
        return "[n/a]"
    return f"[{_us(start - origin)}, {_us(end - origin)}] us"


def _deciding(plan: PlanResult, origins: Mapping[tuple[int | None, int], int | None]) -> str:
    """The recipes' record of the occurrence the verdict's figure names (times from the
    run's first compute kernel)."""
    found = plan.deciding_occurrence()
    if found is None:
        return ""
    run, occ = found
    origin = origins.get((plan.rank, run.run))
    barrier = plan.barrier_candidates[0].name if plan.barrier_candidates else "none"
    return (
        f"#{occ.index} ({run.sample or f'run {run.run}'}): side window "
        f"{_window(occ.side_start_ns, occ.side_end_ns, origin)}, dominator window "
        f"{_window(occ.dom_start_ns, occ.dom_end_ns, origin)} ({occ.dominator}), "
        f"overlap_pct {_pct(occ.overlap_pct)}, hidden_pct {_pct(occ.hidden_pct)}, "
        f"verdict {plan.verdict}, barrier {barrier}"
    )


def _plans(report: Report, color: bool) -> list[str]:
    origins = {(r.rank, r.index): r.origin_ns for r in report.runs}
    rows = [
        [
            plan.name,
            rank_text(plan.rank),
            _pct(plan.overlap_pct) + (" (provisional)" if plan.provisional else ""),
            _pct(plan.busy_overlap_pct),
            _pct(plan.hidden_pct),
            plan.verdict,
            f"{plan.runs_used} of {len(plan.per_run)} {_samples(plan)}",
            _occurrence_counts(plan),
            _worst(plan),
        ]
        for plan in report.plans
    ]
    header = [
        "plan",
        "rank",
        "overlap_pct",
        "busy_pct",
        "hidden_pct",
        "verdict",
        "used",
        "judged/occ",
        "worst occurrence",
    ]
    painters = {2: _judged(color), 5: _styled(VERDICT_STYLE, color)}
    lines = [
        _heading("Plans", WINDOW + "; busy_pct: busy-time figure; " + HIDDEN, color),
        *table(header, rows, paint=painters),
        "",
    ]
    for plan in report.plans:
        lines.append(f"  {plan.name}, rank {rank_text(plan.rank)}: {plan.diagnosis}")
        lines.append(
            f"    streams: side {_known(plan.side_stream)}, main {_known(plan.main_stream)}; "
            f"per {_samples(plan)[:-1]}: {_per_run(plan.per_run)}"
        )
        if plan.side_kind != "compute":
            lines.append(
                f"    side ops: {plan.side_kind} tasks, hidden_pct against compute on any "
                "other stream"
            )
        real, partial, fake = plan.verdict_counts
        if real + partial + fake:
            lines.append(
                f"    warm occurrences by hidden_pct: {real} real, {partial} partial, {fake} fake"
            )
        deciding = _deciding(plan, origins)
        if deciding:
            lines.append(f"    deciding occurrence {deciding}")
        unjudged = _unjudged(plan)
        if unjudged:
            lines.append(f"    not judged (warm runs): {unjudged}")
        for b in plan.barrier_candidates:
            lines.append(
                f"    barrier candidate: {b.name} (stream {b.stream_id}) starts "
                f"{_us(b.after_side_end_ns)} µs after the side window, after a {_us(b.gap_ns)} µs "
                f"idle gap; first op after the side window in {b.occurrences} of "
                f"{plan.fake_occurrences} fake occurrences"
            )
    return lines


def _unjudged(plan: PlanResult) -> str:
    warm = [r for r in plan.per_run if r.warm]
    counts = {
        "dominators with no side op": sum(r.no_side for r in warm),
        "side-op groups after the last dominator": sum(r.no_dominator for r in warm),
        "zero-length windows": sum(r.zero_length for r in warm),
    }
    return ", ".join(f"{n} {what}" for what, n in counts.items() if n)


def _pairs(report: Report, color: bool) -> list[str]:
    if not report.stream_pairs:
        return [bold("Stream pairs", color) + ": none (fewer than two compute streams)"]
    rows = [
        [
            rank_text(p.rank),
            str(p.main),
            str(p.side),
            _us(p.overlap_ns),
            _pct(p.overlap_pct) + (" (provisional)" if p.provisional else ""),
            p.verdict,
        ]
        for p in report.stream_pairs
    ]
    header = ["rank", "main", "side", "overlap_us", "overlap_pct", "verdict"]
    return [
        _heading("Stream pairs", BUSY, color),
        *table(header, rows, paint={4: _judged(color), 5: _styled(VERDICT_STYLE, color)}),
    ]


def _ranks(report: Report, color: bool) -> list[str]:
    rows = [
        [
            rank_text(r.rank),
            _known(r.main_stream),
            f"{r.parallelism:.3f}",
            _us(r.concurrent_ns),
            _us(r.wall_ns),
        ]
        for r in report.ranks
    ]
    header = ["rank", "main", "parallelism", "concurrent_us (>= 2 streams)", "wall_us"]
    explanation = "warm medians; parallelism = kernel time / wall span, ~1.0 is serial"
    helpers = [
        f"  rank {rank_text(r.rank)}: helper stream(s) {', '.join(map(str, r.helper_streams))}"
        " (only AI_CPU/DSA_SQE work or under 1% of the main stream's busy time): not judged"
        for r in report.ranks
        if r.helper_streams
    ]
    return [_heading("Ranks", explanation, color), *table(header, rows), *helpers]


def _streams(run: RunInfo) -> str:
    return " ".join(f"{s.stream_id}:{s.kernels}/{_us(s.busy_ns)}" for s in run.streams) or "-"


def _runs(report: Report, color: bool) -> list[str]:
    rows = [
        [
            rank_text(r.rank),
            str(r.index),
            "warm" if r.warm else "cold",
            r.source,
            r.level or "-",
            _streams(r),
            str(r.skipped_rows),
            r.path,
        ]
        for r in report.runs
    ]
    header = [
        "rank",
        "run",
        "warm",
        "source",
        "level",
        "streams id:kernels/busy_us",
        "skipped",
        "path",
    ]
    unit = "steps" if report.per == "step" else "runs"
    explanation = (
        f"first {report.warmup} {unit} of each rank are cold, unless fewer runs: see notes"
    )
    return [_heading("Runs", explanation, color), *table(header, rows)]


def _cores_section(report: Report, color: bool) -> list[str]:
    if report.cores is None:
        return []
    from overlap_check.report.text_cores import render_cores

    origins = {(run.rank, run.index): run.origin_ns for run in report.runs}
    return ["", render_cores(report.cores, origins, color=color).rstrip("\n")]


def _baseline(report: Report, color: bool) -> list[str]:
    rows = [
        [d.plan, rank_text(d.rank), _pct(d.base), _pct(d.head), _pct(d.delta), d.status]
        for d in report.baseline or ()
    ]
    header = ["plan", "rank", "base", "head", "delta", "status"]
    painters = {5: _styled(BASELINE_STYLE, color)}
    return ["", bold("Baseline", color), *table(header, rows, paint=painters)]


def render(report: Report, *, color: bool = False) -> str:
    """The whole text report, ending with a newline; ``color``: with ANSI colours."""
    status = paint(
        "PASS" if report.verdict == "pass" else "FAIL",
        "bold green" if report.verdict == "pass" else "bold red",
        color,
    )
    lines = [f"overlap-check {report.tool_version}: {status} (exit {report.exit_code})"]
    if report.gate_reasons:
        lines.append(paint("Gate failed because:", "bold red", color))
        lines += [f"  - {reason}" for reason in report.gate_reasons]
    if report.worst_rank is not None:
        lines.append(f"Worst rank: {report.worst_rank}")
    if report.config_path is not None:
        lines.append(f"Config: {report.config_path}")
    lines.append("")
    if report.plans:
        lines += [*_plans(report, color), ""]
    lines += [*_pairs(report, color), "", *_ranks(report, color), "", *_runs(report, color)]
    if report.baseline:
        lines += _baseline(report, color)
    lines += _cores_section(report, color)
    if report.notes:
        lines += ["", bold("Notes:", color), *[f"  - {note}" for note in report.notes]]
    return "\n".join(lines) + "\n"
