"""The checks a CI report lists (docs/ci.md), shared by the Markdown, JUnit and GitHub
renderers. A plan or pair fails where the gate marked it (``gate_failures``): the cases
never decide it again; a ``gate`` case carries a failure no other case shows."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from overlap_check.model import (
    BaselineDelta,
    CoresResult,
    Occurrence,
    PlanResult,
    Report,
    StreamPair,
    Thresholds,
)
from overlap_check.model.verdicts import CAUSE_KINDS, decided_text, describe, figure_text
from overlap_check.report.text_cores import blocks_of, device_text

Status = Literal["passed", "failed", "provisional"]


@dataclass(frozen=True)
class Case:
    group: Literal["plan", "streams", "cores", "baseline", "gate"]
    name: str  # "moe-shared-expert rank 0", "stream 3 vs 2 rank 1", "core limits rank 0"
    status: Status  # provisional: passed, but on fewer runs than min_runs
    message: str  # one line: the verdict and its figure
    failures: tuple[str, ...] = ()  # why it failed, one line each
    details: tuple[str, ...] = ()  # diagnosis, worst occurrence, baseline, per-run figures
    warning: bool = False  # passed but worth a look: partial, provisional, core warnings
    evidence: str = ""  # a plan's line of the evidence summary (gain.with_summary); "" none
    # a plan's signs of a missing wait (PlanResult.findings): every format shows them,
    # failing or (--allow-missing-wait) as a warning
    findings: tuple[str, ...] = ()

    @property
    def level(self) -> Literal["failed", "warning", "passed"]:
        return "failed" if self.status == "failed" else "warning" if self.warning else "passed"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def with_rank(name: str, rank: int | None) -> str:
    return name if rank is None else f"{name} rank {rank}"


def baseline_of(report: Report, name: str, rank: int | None) -> BaselineDelta | None:
    return next((d for d in report.baseline or () if d.plan == name and d.rank == rank), None)


def evidence_of(report: Report, plan: PlanResult) -> str:
    """The plan's line of the evidence summary; "" when JSON from before it has none."""
    if len(report.evidence_summary) != len(report.plans):
        return ""
    summary = zip(report.plans, report.evidence_summary, strict=True)
    lines = {(p.name, p.rank): line for p, line in summary}
    return lines.get((plan.name, plan.rank), "")


def deciding_occurrence(plan: PlanResult) -> tuple[int, Occurrence] | None:
    """(run, occurrence) the verdict's figure names, when a warm run holds it."""
    found = plan.deciding_occurrence()
    if found is None or not found[0].warm:
        return None
    return found[0].run, found[1]


def diagnosis_lines(plan: PlanResult) -> list[tuple[str, str]]:
    """(label, text) of the diagnosis' measured causes (largest first) and fix steps."""
    found = plan.diagnosed
    if found is None:
        return []
    causes = [e.text for e in found.evidence if e.kind in CAUSE_KINDS]
    fix = [(f"fix ({found.path or 'path unknown'})", step) for step in found.fix]
    return [(f"cause {n}", text) for n, text in enumerate(causes, start=1)] + fix


def occurrence_text(occ: Occurrence, thresholds: Thresholds) -> str:
    figure = figure_text(occ.hidden_pct, thresholds)
    return f"{figure} ({occ.verdict})" if occ.verdict else figure


def _judged(
    judged: PlanResult | StreamPair, name: str, message: str, details: list[str], report: Report
) -> Case:
    """A plan's or pair's case: failed where the gate marked it or its baseline regressed."""
    group: Literal["plan", "streams"] = "plan" if isinstance(judged, PlanResult) else "streams"
    figure = "hidden_pct" if group == "plan" else "overlap_pct"
    if judged.per_run:
        shown = [
            f"{r.run}{'' if r.warm else ' (cold)'}: "
            + figure_text(getattr(r, figure), report.thresholds)
            for r in judged.per_run
        ]
        details.append(f"per run ({figure}): " + ", ".join(shown))
    failures, provisional = judged.gate_failures, judged.provisional
    if provisional:
        message += f" [provisional: {report.provisional_text}]"
    delta = baseline_of(report, name, judged.rank)
    line = "" if delta is None else "baseline: " + describe(delta, report.baseline_tolerance or 0.0)
    if delta is not None and delta.status == "regressed":
        failures = (*failures, line)
    elif line:
        details.append(line)
    status: Status = "failed" if failures else ("provisional" if provisional else "passed")
    warning = not failures and (provisional or judged.verdict == "partial")
    return Case(
        group, with_rank(name, judged.rank), status, message, failures, tuple(details), warning
    )


def plan_case(plan: PlanResult, report: Report) -> Case:
    # the bands apply to hidden_pct (plan.decided_by); the recipes' window figure follows
    thresholds = report.thresholds
    message = (
        f"{plan.verdict}: {decided_text(plan, thresholds)} (median of "
        f"{plan.runs_used} warm run(s) of {len(plan.per_run)}; real >= "
        f"{thresholds.real:g}, fake <= {thresholds.fake:g}); "
        f"window overlap_pct {pct(plan.overlap_pct)}"
    )
    details = [plan.diagnosis] if plan.diagnosis else []
    details += plan.findings
    deciding = deciding_occurrence(plan)
    if deciding is not None:  # a warm run holds it
        run, occ = deciding
        details.append(
            f"deciding occurrence: run {run}, #{occ.index}: hidden_pct "
            f"{occurrence_text(occ, thresholds)}, overlap_pct {pct(occ.overlap_pct)}"
        )
    case = _judged(plan, plan.name, message, details, report)
    warning = case.warning or (bool(plan.findings) and not case.failures)
    return replace(
        case, evidence=evidence_of(report, plan), findings=plan.findings, warning=warning
    )


def pair_case(pair: StreamPair, report: Report) -> Case:
    warm = sum(run.warm for run in pair.per_run)
    message = (
        f"{pair.verdict}: busy-time overlap_pct {figure_text(pair.overlap_pct, report.thresholds)}"
        f" of stream {pair.side} "
        f"with main stream {pair.main} (median of {warm} warm run(s) of {len(pair.per_run)})"
    )
    return _judged(pair, f"stream {pair.side} vs {pair.main}", message, [], report)


def within_text(cores: CoresResult) -> str:
    exempt = f"({cores.exempt_kernels} exempt)"
    return f"{cores.checked_kernels} kernel(s) within limit_core_num {exempt}"


def contention_text(cores: CoresResult) -> str:
    count = max(cores.contention_count, len(cores.contention))
    over = f"{cores.over_limit_ns / 1000:.3f} µs in all"
    return f"{count} interval(s) where main + side block demand exceeds the device cores ({over})"


def core_cases(report: Report) -> list[Case]:
    cores = report.cores
    if cores is None:
        return []
    notes = list(cores.notes)
    if cores.device is not None:
        notes.insert(0, f"device: {device_text(cores.device)} ({cores.device.source})")
    warnings = [w.message or f"{w.name}: {w.accelerator_core}" for w in cores.warnings]
    if cores.contention:
        notes.append("contention: " + contention_text(cores))
    groups: dict[tuple[str | None, int | None], list[str]] = {}
    for v in cores.violations:
        line = v.message or (
            f"run {v.run}: {v.name} on stream {v.stream_id} ({v.accelerator_core}) uses "
            f"{blocks_of(v)} blocks, {v.kind} limit {v.limit}"
        )
        groups.setdefault((v.plan, v.rank), []).append(line)
    unlisted = max(cores.violation_count - len(cores.violations), 0)
    more = [f"... and {unlisted} more violation(s) not listed"] if unlisted else []
    cases = []
    for (plan, rank), lines in groups.items():
        name = with_rank("core limits" + (f": {plan}" if plan else ""), rank)
        over = f"{len(lines)} violation(s) of limit_core_num (a kernel per core kind)"
        cases.append(Case("cores", name, "failed", over, tuple(lines), (*more, *notes, *warnings)))
    if not groups and (cores.checked_kernels or cores.limits):
        message, details = within_text(cores), (*notes, *warnings)
        cases.append(Case("cores", "core limits", "passed", message, (), details, bool(warnings)))
    return cases


def ci_cases(report: Report) -> tuple[Case, ...]:
    cases = [plan_case(plan, report) for plan in report.plans]
    if not report.plans:
        cases += [pair_case(pair, report) for pair in report.stream_pairs]
    cases += core_cases(report)
    tolerance = report.baseline_tolerance or 0.0
    for delta in report.baseline or ():
        if delta.status == "missing-in-head":
            name, why = "baseline: " + with_rank(delta.plan, delta.rank), describe(delta, tolerance)
            missing = "in the baseline, not in this report"
            cases.append(Case("baseline", name, "failed", missing, (why,)))
    if report.verdict == "fail" and not any(case.status == "failed" for case in cases):
        reasons = report.gate_reasons or ("the gate failed",)
        cases.append(Case("gate", "gate", "failed", reasons[0], tuple(reasons)))
    return tuple(cases)
