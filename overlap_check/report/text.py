"""The plain-text report: verdict and reasons first, then plans, stream pairs, ranks and runs."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from overlap_check.model import PlanResult, PlanRun, Report, RunInfo

WINDOW = "window overlap_pct = overlap / min(side window, dominator window), median over warm runs"
BUSY = (
    "busy-time overlap_pct = |busy(main) ∩ busy(side)| / min(busy(main), busy(side)), warm median"
)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _us(ns: float) -> str:
    return f"{ns / 1000:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]
    return [
        (indent + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))).rstrip()
        for row in (header, *rows)
    ]


def _worst(plan: PlanResult) -> str:
    worst = [(o, r) for r in plan.per_run if r.warm for o in r.worst if o.overlap_pct is not None]
    if not worst:
        return "-"
    occ, run = min(worst, key=lambda item: item[0].overlap_pct or 0.0)
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


def _plans(report: Report) -> list[str]:
    rows = [
        [
            plan.name,
            str(plan.rank),
            _pct(plan.overlap_pct) + (" (provisional)" if plan.provisional else ""),
            _pct(plan.busy_overlap_pct),
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
        "verdict",
        "used",
        "judged/occ",
        "worst occurrence",
    ]
    lines = ["Plans (" + WINDOW + "; busy_pct: busy-time figure)", *_table(header, rows), ""]
    for plan in report.plans:
        lines.append(f"  {plan.name}, rank {plan.rank}: {plan.diagnosis}")
        lines.append(
            f"    streams: side {plan.side_stream}, main {plan.main_stream}; "
            f"per {_samples(plan)[:-1]}: {_per_run(plan.per_run)}"
        )
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


def _pairs(report: Report) -> list[str]:
    if not report.stream_pairs:
        return ["Stream pairs: none (fewer than two compute streams)"]
    rows = [
        [
            str(p.rank),
            str(p.main),
            str(p.side),
            _us(p.overlap_ns),
            _pct(p.overlap_pct) + (" (provisional)" if p.provisional else ""),
            p.verdict,
        ]
        for p in report.stream_pairs
    ]
    return [
        "Stream pairs (" + BUSY + ")",
        *_table(["rank", "main", "side", "overlap_us", "overlap_pct", "verdict"], rows),
    ]


def _ranks(report: Report) -> list[str]:
    rows = [
        [
            str(r.rank),
            str(r.main_stream),
            f"{r.parallelism:.3f}",
            _us(r.concurrent_ns),
            _us(r.wall_ns),
        ]
        for r in report.ranks
    ]
    header = ["rank", "main", "parallelism", "concurrent_us (>= 2 streams)", "wall_us"]
    return [
        "Ranks (warm medians; parallelism = kernel time / wall span, ~1.0 is serial)",
        *_table(header, rows),
    ]


def _streams(run: RunInfo) -> str:
    return " ".join(f"{s.stream_id}:{s.kernels}/{_us(s.busy_ns)}" for s in run.streams) or "-"


def _runs(report: Report) -> list[str]:
    rows = [
        [
            str(r.rank),
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
    title = (
        f"Runs (first {report.warmup} {unit} of each rank are cold, unless fewer runs: see notes)"
    )
    return [title, *_table(header, rows)]


def _cores_section(report: Report) -> list[str]:
    if report.cores is None:
        return []
    try:
        module = importlib.import_module("overlap_check.report.text_cores")
    except ModuleNotFoundError as err:
        if err.name != "overlap_check.report.text_cores":
            raise
        return []
    origins = {(run.rank, run.index): run.origin_ns for run in report.runs}
    return ["", str(module.render_cores(report.cores, origins)).rstrip("\n")]


def render(report: Report) -> str:
    """The whole text report, ending with a newline."""
    status = "PASS" if report.verdict == "pass" else "FAIL"
    lines = [f"overlap-check {report.tool_version}: {status} (exit {report.exit_code})"]
    if report.gate_reasons:
        lines.append("Gate failed because:")
        lines += [f"  - {reason}" for reason in report.gate_reasons]
    if report.worst_rank is not None:
        lines.append(f"Worst rank: {report.worst_rank}")
    lines.append("")
    if report.plans:
        lines += [*_plans(report), ""]
    lines += [*_pairs(report), "", *_ranks(report), "", *_runs(report)]
    if report.baseline:
        lines += ["", "Baseline"]
        rows = [
            [d.plan, str(d.rank), _pct(d.base), _pct(d.head), _pct(d.delta), d.status]
            for d in report.baseline
        ]
        lines += _table(["plan", "rank", "base", "head", "delta", "status"], rows)
    lines += _cores_section(report)
    if report.notes:
        lines += ["", "Notes:", *[f"  - {note}" for note in report.notes]]
    return "\n".join(lines) + "\n"
