"""``--format github``: GitHub Actions annotations, then a verdict line (docs/ci.md). Errors
come first: GitHub shows only the first few annotations of each kind per step."""

from __future__ import annotations

from overlap_check.model import PlanResult, Report
from overlap_check.report.cases import ci_cases, with_rank
from overlap_check.report.workflow_commands import command, escape_data

_COMMAND = {"failed": "error", "warning": "warning", "passed": "notice"}  # by Case.level


def _plans_by_case(report: Report) -> dict[tuple[str, str], PlanResult]:
    found: dict[tuple[str, str], PlanResult] = {}
    for plan in report.plans:
        found[("plan", with_rank(plan.name, plan.rank))] = plan
        found[("cores", with_rank(f"core limits: {plan.name}", plan.rank))] = plan
        found[("baseline", "baseline: " + with_rank(plan.name, plan.rank))] = plan
    return found


def render(report: Report) -> str:
    plans = _plans_by_case(report)
    lines = []
    for case in sorted(ci_cases(report), key=lambda case: list(_COMMAND).index(case.level)):
        evidence = [f"evidence: {case.evidence}"] if case.evidence else []
        # a missing wait shows whether it fails the gate (in failures) or was accepted
        accepted = [f for f in case.findings if not any(f in x for x in case.failures)]
        findings = [f"finding: {f}" for f in accepted]
        body = "\n".join([case.message, *evidence, *case.failures, *findings, *case.details[:1]])
        plan = plans.get((case.group, case.name))
        file = plan.config_file if plan is not None else None
        line = plan.config_line if plan is not None and file is not None else None
        title = f"overlap-check: {case.name}"
        lines.append(command(_COMMAND[case.level], body, file=file, line=line, title=title))
    # notes after the checks' errors and warnings, before the notices
    notes = [command("warning", note, title="overlap-check") for note in report.notes]
    at = next((i for i, line in enumerate(lines) if line.startswith("::notice")), len(lines))
    lines[at:at] = notes
    reasons = f" ({'; '.join(report.gate_reasons)})" if report.gate_reasons else ""
    # a plain line, but printed among commands: a reason naming a plan must not start one
    lines.append(escape_data(f"overlap-check: {report.verdict}{reasons}"))
    return "\n".join(lines) + "\n"
