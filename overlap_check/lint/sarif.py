"""Lint findings as a SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers.

One run; the tool's rules are every lint rule (so a viewer can name the rule of
each result); one result per finding at its file, line and column. Paths are made
relative to the workspace (``GITHUB_WORKSPACE``, else the repository root:
GitHub resolves them against the checkout) wherever lint runs; others become
``file://`` URIs. tests/data/sarif/ holds the
official schema the output is validated against.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from urllib.parse import quote

from overlap_check import __version__
from overlap_check.lint.findings import LintResult
from overlap_check.lint.rules import RULES
from overlap_check.report.workflow_commands import workspace_path

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    pure = PurePath(workspace_path(path))
    return pure.as_uri() if pure.is_absolute() else quote(pure.as_posix())


def render_sarif(result: LintResult) -> str:
    rule_ids = list(RULES)
    rules = [
        {"id": code, "name": code, "shortDescription": {"text": summary},
         "defaultConfiguration": {"level": "error"}}
        for code, (_, summary) in RULES.items()
    ]  # fmt: skip
    listed = [(f, None) for f in result.findings] + list(result.suppressed_findings)
    results = [
        {
            "ruleId": f.rule,
            "ruleIndex": rule_ids.index(f.rule),
            "level": "error",
            "message": {"text": f"{f.message}\nhint: {f.hint}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(f.path)},
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
            **({"suppressions": [{"kind": how}]} if how else {}),
        }
        for f, how in listed
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "overlap-check",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                # ast columns count UTF-8 bytes; the same as code points on ASCII lines
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
