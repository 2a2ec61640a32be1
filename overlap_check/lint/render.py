"""Lint findings as text, JSON, GitHub workflow annotations, JUnit XML or SARIF 2.1.0
(docs/lint-rules.md, "Output formats"). SARIF paths are relative to the workspace, where
GitHub resolves them; tests/data/sarif/ holds the schema the output is checked against."""

from __future__ import annotations

import json
from pathlib import PurePath
from urllib.parse import quote

from overlap_check import __version__
from overlap_check.lint.findings import Finding, LintResult
from overlap_check.lint.rules import RULES
from overlap_check.report.color import bold, paint
from overlap_check.report.escape import displayed, guarded, json_text
from overlap_check.report.junit import JUnitCase, JUnitFailure, JUnitSuite, write
from overlap_check.report.workflow_commands import command, workspace_path

FORMATS = ("text", "json", "github", "junit", "sarif")


def render_text(result: LintResult, *, color: bool = False) -> str:
    """As ruff prints: the place bold, the rule red; the summary red, or green when clean."""
    lines: list[str] = []
    for f in result.findings:
        place = bold(f"{f.path}:{f.line}:{f.col}:", color)
        lines.append(f"{place} {paint(f.rule, 'bold red', color)} {f.message}")
        lines.append(f"    hint: {f.hint}")
    files = len(result.files)
    noun = "file" if files == 1 else "files"
    if result.findings:
        counts = ", ".join(f"{rule} x{n}" for rule, n in result.by_rule().items())
        found = f"Found {len(result.findings)} finding(s) in {files} {noun} ({counts})."
        lines.append(paint(found, "red", color))
    else:
        lines.append(paint(f"No findings in {files} {noun}.", "green", color))
    if result.suppressed:
        lines.append(f"({result.suppressed_text()}: '# overlap-check: ignore' or [lint] suppress)")
    return "\n".join(lines) + "\n"


def render_json(result: LintResult) -> str:
    document = {
        "tool_version": __version__,
        "findings": [f.to_dict() for f in result.findings],
        "suppressed": [{**f.to_dict(), "by": how} for f, how in result.suppressed_findings],
        "summary": result.summary(),
        "paths": {path: info.to_dict() for path, info in sorted(result.paths.items())},
    }
    return json.dumps(document, indent=2) + "\n"


def render_github(result: LintResult) -> str:
    """One ``::error`` per finding, and a ``::notice`` counting the suppressed ones."""
    notice = [command("notice", result.suppressed_text(), title="overlap-check lint") + "\n"]
    return "".join(
        command("error", f"{f.message}\nhint: {f.hint}", file=f.path, line=f.line, col=f.col,
                title=f.rule) + "\n"
        for f in result.findings
    ) + "".join(notice if result.suppressed else [])  # fmt: skip


def render_junit(result: LintResult) -> str:
    """One testcase per file, named by its path, one <failure> per finding in it (no
    ``file`` attribute: the Jenkins xUnit schema rejects it, see report/junit.py)."""
    by_file: dict[str, list[Finding]] = {path: [] for path in result.files}
    for f in result.findings:
        by_file.setdefault(f.path, []).append(f)
    cases = tuple(
        JUnitCase("overlap-check.lint", path, tuple(_junit_failure(f) for f in found))
        for path, found in by_file.items()
    )
    return write("overlap-check lint", (JUnitSuite("overlap-check lint", cases),))


def _junit_failure(f: Finding) -> JUnitFailure:
    text = f"{f.path}:{f.line}:{f.col}: {f.rule} {f.message}\nhint: {f.hint}"
    return JUnitFailure(message=f"{f.rule} {f.message}", type=f.rule, text=text)


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    pure = PurePath(workspace_path(path))
    return pure.as_uri() if pure.is_absolute() else quote(pure.as_posix())


def render_sarif(result: LintResult) -> str:
    rules = [
        {"id": code, "name": code, "shortDescription": {"text": summary},
         "defaultConfiguration": {"level": "error"}}
        for code, (_, summary) in RULES.items()
    ]  # fmt: skip
    results = []
    for f, how in [(f, None) for f in result.findings] + list(result.suppressed_findings):
        region = {"startLine": f.line, "startColumn": f.col}
        place = {"artifactLocation": {"uri": _uri(f.path)}, "region": region}
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": list(RULES).index(f.rule),
                "level": "error",
                "message": {"text": f"{f.message}\nhint: {f.hint}"},
                "locations": [{"physicalLocation": place}],
                **({"suppressions": [{"kind": how}]} if how else {}),
            }
        )
    driver = {"name": "overlap-check", "version": __version__, "semanticVersion": __version__}
    run = {
        "tool": {"driver": {**driver, "rules": rules}},
        # ast columns count UTF-8 bytes; the same as code points on ASCII lines
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def render(result: LintResult, fmt: str, *, color: bool = False) -> str:
    """``result`` in ``fmt``; ``color`` (ANSI) applies to the text format only. Safe for its
    reader (escape.py): JSON and SARIF exact, the others from the names shown."""
    if fmt not in FORMATS:  # the CLI offers FORMATS alone: another is a caller's bug
        raise ValueError(f"no lint format {fmt!r}")
    if fmt in ("json", "sarif"):
        return json_text(render_json(result) if fmt == "json" else render_sarif(result))
    if fmt == "github":
        return render_github(displayed(result))
    shown = displayed(result)
    return guarded(render_text(shown, color=color) if fmt == "text" else render_junit(shown))
