"""Lint findings as text, JSON, GitHub workflow annotations or JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable

from overlap_check import __version__
from overlap_check.lint.findings import Finding, LintResult
from overlap_check.report.color import bold, paint

FORMATS = ("text", "json", "github", "junit")


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
        lines.append(f"({result.suppressed} suppressed by '# overlap-check: ignore' comments)")
    return "\n".join(lines) + "\n"


def render_json(result: LintResult) -> str:
    document = {
        "tool_version": __version__,
        "findings": [f.to_dict() for f in result.findings],
        "summary": result.summary(),
        "paths": {path: info.to_dict() for path, info in sorted(result.paths.items())},
    }
    return json.dumps(document, indent=2) + "\n"


def _escape_data(text: str) -> str:
    # GitHub workflow command escaping (actions/toolkit, command.ts).
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: LintResult) -> str:
    lines = [
        f"::error file={_escape_property(f.path)},line={f.line},col={f.col},"
        f"title={_escape_property(f.rule)}::{_escape_data(f.message + chr(10) + 'hint: ' + f.hint)}"
        for f in result.findings
    ]
    return "".join(line + "\n" for line in lines)


def render_junit(result: LintResult) -> str:
    """One testcase per file, one <failure> per finding in it."""
    by_file: dict[str, list[Finding]] = {path: [] for path in result.files}
    for f in result.findings:
        by_file.setdefault(f.path, []).append(f)
    failed = sum(1 for found in by_file.values() if found)
    suites = ET.Element(
        "testsuites", name="overlap-check lint", tests=str(len(by_file)), failures=str(failed)
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="overlap-check lint",
        tests=str(len(by_file)),
        failures=str(failed),
        errors="0",
        skipped="0",
    )
    for path, found in by_file.items():
        case = ET.SubElement(suite, "testcase", classname="overlap-check.lint", name=path)
        for f in found:
            failure = ET.SubElement(case, "failure", type=f.rule, message=f"{f.rule} {f.message}")
            failure.text = f"{f.path}:{f.line}:{f.col}: {f.rule} {f.message}\nhint: {f.hint}"
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


RENDERERS: dict[str, Callable[[LintResult], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "junit": render_junit,
}

# --output FILE: the format follows a known suffix, else the --format given.
SUFFIX_FORMATS = {".json": "json", ".xml": "junit", ".txt": "text"}


def render(result: LintResult, fmt: str, *, color: bool = False) -> str:
    """``result`` in ``fmt``; ``color`` (ANSI) applies to the text format only."""
    if fmt == "text":
        return render_text(result, color=color)
    return RENDERERS[fmt](result)
