"""``--format github``: GitHub Actions workflow commands (annotations).

``::error`` for each failing check, ``::warning`` for provisional or partial
results and report notes, ``::notice`` for passes; errors first, because GitHub
shows only the first few annotations of each kind per step (the step summary,
$GITHUB_STEP_SUMMARY, has everything). The last line is a plain verdict line.
"""

from __future__ import annotations

from overlap_check.model import Report
from overlap_check.report.cases import Case, ci_cases


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as @actions/core does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (``title=``): data escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, title: str, message: str) -> str:
    return f"::{kind} title={escape_property(title)}::{escape_data(message)}"


def _level(case: Case) -> str:
    if case.status == "failed":
        return "error"
    return "warning" if case.warning else "notice"


def render(report: Report) -> str:
    """One workflow command per check, then the verdict line."""
    order = {"error": 0, "warning": 1, "notice": 2}
    lines = []
    for case in sorted(ci_cases(report), key=lambda case: order[_level(case)]):
        body = "\n".join([case.message, *case.failures, *case.details[:1]])
        lines.append(command(_level(case), f"overlap-check: {case.name}", body))
    # notes after the checks' errors and warnings, before the notices
    notes = [command("warning", "overlap-check", note) for note in report.notes]
    first_notice = next(
        (i for i, line in enumerate(lines) if line.startswith("::notice")), len(lines)
    )
    lines[first_notice:first_notice] = notes
    reasons = f" ({'; '.join(report.gate_reasons)})" if report.gate_reasons else ""
    lines.append(f"overlap-check: {report.verdict}{reasons}")
    return "\n".join(lines) + "\n"
