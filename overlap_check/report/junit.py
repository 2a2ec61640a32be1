"""JUnit XML for Jenkins, GitLab and GitHub test reporters: the one writer for analyze and lint.
Valid against the Jenkins xUnit and Maven Surefire schemas: hence no ``skipped`` count on
``<testsuites>``, ``time`` (0) on every testcase, a ``type`` on every failure, and no ``file``
attribute (docs/ci.md, "What the JUnit XML holds"). A skipped case's reason is both its
text (GitLab shows that) and its ``message`` (Jenkins does)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, replace

from overlap_check.model import Report
from overlap_check.report.cases import Case, ci_cases

# Characters XML 1.0 forbids even escaped; kernel names should never hold them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class JUnitFailure:
    message: str  # one line: what a test list shows
    type: str  # the kind of failure (a rule code, a check group)
    text: str  # the whole story


@dataclass(frozen=True)
class JUnitCase:
    classname: str
    name: str
    failures: tuple[JUnitFailure, ...] = ()
    skipped: str | None = None  # why it was not fully judged (element text and message)
    output: str | None = None  # <system-out>


@dataclass(frozen=True)
class JUnitSuite:
    name: str
    cases: tuple[JUnitCase, ...]
    properties: tuple[tuple[str, str], ...] = ()


def _clean(text: str) -> str:
    return _INVALID_XML.sub("?", text)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str | None) -> ET.Element:
    given = {key: _clean(value) for key, value in attrs.items() if value is not None}
    element = ET.SubElement(parent, tag, given)
    if text is not None:
        element.text = _clean(text)
    return element


def _counts(cases: tuple[JUnitCase, ...]) -> dict[str, str]:
    failures = sum(bool(case.failures) for case in cases)
    return {"tests": str(len(cases)), "failures": str(failures), "errors": "0"}


def write(name: str, suites: tuple[JUnitSuite, ...]) -> str:
    """The document; a repeated property name is numbered (``note.1``, ``note.2``)."""
    # Jenkins rejects a report of no tests: a suite with no check gets one passing case
    said = "nothing to check (no plan, stream pair or file was found)"
    empty = [JUnitCase(s.name, "nothing to check", output=f"{s.name}: {said}") for s in suites]
    suites = tuple(
        s if s.cases else replace(s, cases=(e,)) for s, e in zip(suites, empty, strict=True)
    )
    every = tuple(case for suite in suites for case in suite.cases)
    root = ET.Element("testsuites", {"name": _clean(name), **_counts(every), "time": "0"})
    for suite in suites:
        skipped = str(sum(case.skipped is not None for case in suite.cases))
        element = _sub(root, "testsuite", name=suite.name, **_counts(suite.cases),
                       skipped=skipped, time="0")  # fmt: skip
        if suite.properties:
            properties = _sub(element, "properties")
            repeated = Counter(key for key, _ in suite.properties)
            numbered: Counter[str] = Counter()
            for key, value in suite.properties:
                numbered[key] += 1
                shown = f"{key}.{numbered[key]}" if repeated[key] > 1 else key
                _sub(properties, "property", name=shown, value=value)
        for case in suite.cases:
            testcase = _sub(element, "testcase", classname=case.classname, name=case.name,
                            time="0")  # fmt: skip
            for failure in case.failures:
                _sub(testcase, "failure", failure.text, message=failure.message, type=failure.type)
            if case.skipped is not None:
                _sub(testcase, "skipped", case.skipped, message=case.skipped)
            if case.output is not None:
                _sub(testcase, "system-out", case.output)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _junit_case(case: Case) -> JUnitCase:
    evidence = [f"evidence: {case.evidence}"] if case.evidence else []
    failures: tuple[JUnitFailure, ...] = ()
    if case.status == "failed":
        first = case.failures[0] if case.failures else case.message
        story = "\n".join([case.message, *evidence, *case.failures, *case.details])
        failures = (JUnitFailure(first, case.group, story),)
    return JUnitCase(
        classname="overlap-check." + ("plans" if case.group == "plan" else case.group),
        name=case.name,
        failures=failures,
        skipped=case.message if case.status == "provisional" else None,
        output="\n".join([case.message, *evidence, *case.details]),
    )


def render(report: Report) -> str:
    outcome = [
        (name, str(getattr(report, name))) for name in ("tool_version", "verdict", "exit_code")
    ]
    bands = [("real", str(report.thresholds.real)), ("fake", str(report.thresholds.fake))]
    method = [(name, str(getattr(report, name))) for name in ("warmup", "min_runs", "fail_on")]
    lines = [("evidence", line) for line in report.evidence_summary]
    lines += [("gate_reason", reason) for reason in report.gate_reasons]
    lines += [("note", note) for note in report.notes]
    summary = ("summary", f"overlap-check: {report.verdict}")
    cases = tuple(_junit_case(case) for case in ci_cases(report))
    properties = (*outcome, *bands, *method, summary, *lines)  # the report-wide lines
    return write("overlap-check", (JUnitSuite("overlap-check", cases, properties),))
