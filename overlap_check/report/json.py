"""The JSON report (docs/report.schema.json): the model's codec written out, indented."""

from __future__ import annotations

from overlap_check.model import Report
from overlap_check.model.json_codec import indented, to_dict


def render(report: Report) -> str:
    return indented(to_dict(report)) + "\n"
