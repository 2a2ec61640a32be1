"""``--format junit``: JUnit XML for Jenkins, GitLab and GitHub test reporters.

One ``<testsuite name="overlap-check">`` holding one ``<testcase>`` per check of
report/cases.py. A failing check carries ``<failure>`` with the figures and the
diagnosis; a provisional result (fewer runs than min_runs, not ``--strict``) is a
``<skipped>`` testcase: it did not fail, but it was not fully judged either.
Every testcase has ``<system-out>`` with its details. The analysis time is not
measured per check, so ``time`` attributes are 0 (parsers require them).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from overlap_check.model import Report
from overlap_check.report.cases import Case, ci_cases

# Characters XML 1.0 forbids even escaped; kernel names should never hold them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_CLASSNAME = {
    "plan": "overlap-check.plans",
    "streams": "overlap-check.streams",
    "cores": "overlap-check.cores",
    "baseline": "overlap-check.baseline",
    "gate": "overlap-check.gate",
}


def _clean(text: str) -> str:
    return _INVALID_XML.sub("?", text)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {key: _clean(value) for key, value in attrs.items()})
    if text is not None:
        element.text = _clean(text)
    return element


def _testcase(suite: ET.Element, case: Case) -> None:
    element = _sub(suite, "testcase", classname=_CLASSNAME[case.group], name=case.name, time="0")
    if case.status == "failed":
        body = "\n".join([case.message, *case.failures, *case.details])
        _sub(
            element,
            "failure",
            body,
            message=case.failures[0] if case.failures else case.message,
            type=case.group,
        )
    elif case.status == "provisional":
        _sub(element, "skipped", message=case.message)
    _sub(element, "system-out", "\n".join([case.message, *case.details]))


def render(report: Report) -> str:
    """The JUnit XML document of a report (UTF-8, with an XML declaration)."""
    cases = ci_cases(report)
    counts = {
        "tests": str(len(cases)),
        "failures": str(sum(case.status == "failed" for case in cases)),
        "errors": "0",
        "skipped": str(sum(case.status == "provisional" for case in cases)),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": "overlap-check", **counts})
    suite = _sub(root, "testsuite", name="overlap-check", **counts)
    properties = _sub(suite, "properties")
    for name, value in (
        ("tool_version", report.tool_version),
        ("verdict", report.verdict),
        ("exit_code", str(report.exit_code)),
        ("real", str(report.thresholds.real)),
        ("fake", str(report.thresholds.fake)),
        ("warmup", str(report.warmup)),
        ("min_runs", str(report.min_runs)),
        ("fail_on", report.fail_on),
    ):
        _sub(properties, "property", name=name, value=value)
    for case in cases:
        _testcase(suite, case)
    summary = [f"overlap-check: {report.verdict}", *report.gate_reasons, *report.notes]
    _sub(suite, "system-out", "\n".join(summary))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
