"""``--format markdown``: a compact summary for a pull request or $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from overlap_check.model import BaselineDelta, CoreViolation, PlanResult, Report, StreamPair
from overlap_check.model.errors import InputError
from overlap_check.model.verdicts import describe, figure_text
from overlap_check.report.cases import (
    Case,
    baseline_of,
    ci_cases,
    contention_text,
    deciding_occurrence,
    diagnosis_lines,
    occurrence_text,
    pair_case,
    pct,
    plan_case,
    within_text,
)
from overlap_check.report.escape import displayed, markdown
from overlap_check.report.text_cores import blocks_of, device_text

STEP_SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"
STEP_SUMMARY_SWITCH = "OVERLAP_CHECK_STEP_SUMMARY"  # "0": do not write the step summary
MAX_ROWS = 20  # core-limit violations listed; the JSON report has them all
_ICON = {"failed": "❌", "warning": "⚠️", "passed": "✅"}


def cell(text: object) -> str:
    return markdown(str(text))


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return lines


def _change(delta: BaselineDelta | None) -> str:
    if delta is None:
        return "—"
    if delta.status == "missing-in-base":
        return "new"
    change = f"{delta.delta:+.3f} " if delta.delta is not None else ""
    mark = {"regressed": " ❌", "improved": " ⬆️"}.get(delta.status, "")
    return f"{change}({pct(delta.base)} → {pct(delta.head)}){mark}"


def _verdict_cell(case: Case, verdict: str, provisional: bool) -> str:
    return f"{_ICON[case.level]} {verdict}" + (" (provisional)" if provisional else "")


def _judged_sections(report: Report) -> list[str]:
    """A table per rank of its plans and their notes (without plans: its stream pairs)."""
    lines: list[str] = []
    judged: Sequence[PlanResult | StreamPair] = report.plans or report.stream_pairs
    for rank in dict.fromkeys(j.rank for j in judged):
        rows, notes = [], []
        for j in (j for j in judged if j.rank == rank):
            name, row, last = (
                _plan_row(j, report) if isinstance(j, PlanResult) else _pair_row(j, report)
            )
            if report.baseline is not None:
                row.append(_change(baseline_of(report, name, j.rank)))
            rows.append(row + last)
            if isinstance(j, PlanResult):
                notes += [f"- **{cell(j.name)}**: {cell(j.diagnosis)}"] if j.diagnosis else []
                notes += [f"  - {label}: {cell(text)}" for label, text in diagnosis_lines(j)]
                notes += [f"- **{cell(j.name)}**: {cell(finding)}" for finding in j.findings]
        if report.plans:
            header = ["plan", "hidden_pct", "verdict", "overlap_pct", "runs used"]
            last_header, title = ["deciding occurrence"], "Plans"
        else:
            header = ["streams", "overlap_pct (busy time)", "verdict", "runs used"]
            last_header, title = [], "Stream pairs"
        header += ["vs baseline"] * (report.baseline is not None) + last_header
        where = "all ranks" if rank is None else f"rank {rank}"
        lines += ["", f"### {title}, {where}", "", *_table(header, rows)]
        lines += ["", *notes] if notes else []
    return lines


def _plan_row(plan: PlanResult, report: Report) -> tuple[str, list[object], list[object]]:
    """The plan's baseline name, its cells before the baseline column and after it."""
    deciding = deciding_occurrence(plan)
    worst = "—"
    if deciding:
        run, occ = deciding
        worst = f"{occurrence_text(occ, report.thresholds)} (run {run}, #{occ.index})"
    capped = " (capped)" if plan.diagnosed is not None and plan.diagnosed.capped else ""
    hidden = figure_text(plan.hidden_pct, report.thresholds) + capped
    verdict = _verdict_cell(plan_case(plan, report), plan.verdict, plan.provisional)
    used = f"{plan.runs_used} of {len(plan.per_run)}"
    return plan.name, [plan.name, hidden, verdict, pct(plan.overlap_pct), used], [worst]


def _pair_row(pair: StreamPair, report: Report) -> tuple[str, list[object], list[object]]:
    name = f"stream {pair.side} vs {pair.main}"
    verdict = _verdict_cell(pair_case(pair, report), pair.verdict, pair.provisional)
    used = f"{sum(run.warm for run in pair.per_run)} of {len(pair.per_run)}"
    figure = figure_text(pair.overlap_pct, report.thresholds)
    return name, [f"{name} (main)", figure, verdict, used], []


def _core_section(report: Report) -> list[str]:
    cores = report.cores
    if cores is None:
        return []
    lines = ["", "### Core limits", ""]
    if (device := cores.device) is not None:
        lines.append(f"Device: {device_text(device)} ({device.source}).")
    total = max(cores.violation_count, len(cores.violations))
    if not total and not (cores.checked_kernels or cores.limits):
        lines.append("No core limits configured (limit_core_num, ge_aicore_num or a graph dump).")
    elif not total:
        lines.append(f"✅ {within_text(cores)}.")
    else:
        lines += [f"❌ {total} violation(s) of limit_core_num (a kernel per core kind).", ""]
        header = ["run", "rank", "plan", "kernel", "stream", "core", "blocks", "limit"]
        lines += _table(header, [_violation_cells(v) for v in cores.violations[:MAX_ROWS]])
        if total > MAX_ROWS:
            lines.append(f"\n… and {total - MAX_ROWS} more (see the JSON report).")
    warnings = max(cores.warning_count, len(cores.warnings))
    if warnings:
        lines.append(f"\n⚠️ {warnings} kernel(s) reported, not judged (MIX_AIV or non-Ascend C).")
    if cores.contention:
        lines.append(f"\n{contention_text(cores)}.")
    return lines


def _rank_cell(rank: int | None) -> object:
    return "—" if rank is None else rank


def _violation_cells(v: CoreViolation) -> list[object]:
    cells = [v.run, _rank_cell(v.rank), v.plan or "—", v.name, v.stream_id, v.accelerator_core]
    return [*cells, blocks_of(v), f"{v.kind} {v.limit}"]


def _communication_section(report: Report) -> list[str]:
    if not report.communication:
        return []
    from overlap_check.report import text as comm

    explanation, header, steps = comm.step_table(report)
    ranks = _table(comm.RANK_HEADER, comm.rank_cells(report))
    lines = ["", "### Communication", "", f"{comm.COMMUNICATION}.", "", *ranks, ""]
    return [*lines, f"{explanation}.", "", *_table(header, steps)]


def _baseline_section(report: Report) -> list[str]:
    """The baseline figures missing from this report (the tables show the others)."""
    tolerance = report.baseline_tolerance or 0.0
    deltas = report.baseline or ()
    missing = [f"❌ {describe(d, tolerance)}" for d in deltas if d.status == "missing-in-head"]
    return _items(f"### Baseline (tolerance {tolerance:.3f})", missing)


def _items(title: str, items: Sequence[str]) -> list[str]:
    return ["", title, "", *[f"- {cell(item)}" for item in items]] if items else []


def render(report: Report) -> str:
    passed = report.verdict == "pass"
    lines = [f"## overlap-check: {'✅ pass' if passed else '❌ fail'}"]
    if report.provisional:
        more = "the result may change with more runs or a repaired capture."
        lines += ["", f"> ⚠️ **Provisional**: {cell(report.provisional_text)}; {more}"]
    lines += _items("**Why the gate failed:**", report.gate_reasons)
    lines += _items("**Evidence:**", report.evidence_summary)
    lines += _judged_sections(report)
    lines += _communication_section(report)
    lines += _core_section(report)
    lines += _baseline_section(report)
    gate_cases = [case for case in ci_cases(report) if case.group == "gate"]
    if gate_cases and not report.gate_reasons:
        lines += ["", f"❌ {cell(gate_cases[0].message)}"]
    lines += _items("**Notes:**", report.notes)
    lines += [
        "",
        f"<sub>overlap-check {cell(report.tool_version)}: median over warm {report.per}s "
        f"(the first {report.warmup} discarded where a rank has more, {report.min_runs} asked "
        "for); "
        f"real ≥ {report.thresholds.real}, fake ≤ {report.thresholds.fake}; "
        f"fail on: {report.fail_on}{', strict' if report.strict else ''}.</sub>",
    ]
    return "\n".join(lines) + "\n"


def append_step_summary(report: Report, environ: Mapping[str, str]) -> None:
    """Append the Markdown summary to the step summary file, if any (docs/ci.md)."""
    if (target := step_summary_target(environ)) is not None:
        append_markdown(render(displayed(report)), target)


def step_summary_target(environ: Mapping[str, str]) -> str | None:
    target = environ.get(STEP_SUMMARY_VARIABLE, "").strip()
    switch = environ.get(STEP_SUMMARY_SWITCH, "").strip().lower()
    return target if target and switch not in {"0", "false", "no", "off"} else None


def append_markdown(text: str, target: str) -> None:
    try:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(text + "\n")
    except OSError as err:
        raise InputError(
            f"cannot write the step summary named by {STEP_SUMMARY_VARIABLE}: {err.strerror}",
            path=target,
        ) from err


def render_comparison(
    deltas: Sequence[BaselineDelta], tolerance: float, base: str, head: str
) -> str:
    failed = [d for d in deltas if d.status in ("regressed", "missing-in-head")]
    lines = [
        f"## overlap-check compare: {'❌ fail' if failed else '✅ pass'}",
        "",
        f"Baseline {cell(base)} vs {cell(head)}, tolerance {tolerance:.3f} "
        "(absolute drop of a plan's hidden_pct, or a stream pair's overlap_pct).",
        "",
    ]
    rows = []
    for d in deltas:
        change = "—" if d.delta is None else f"{d.delta:+.3f}"
        status = ("❌ " if d in failed else "") + d.status
        rows.append((d.plan, _rank_cell(d.rank), pct(d.base), pct(d.head), change, status))
    lines += _table(["plan", "rank", "base", "head", "change", "status"], rows)
    return "\n".join(lines) + "\n"
