"""The JSON report: the model's codec (model/json_codec.py) written out, indented.

docs/report.schema.json describes it; ``Report.from_json`` reads it back.
"""

from __future__ import annotations

from overlap_check.model import Report
from overlap_check.model.json_codec import indented, to_dict


def render(report: Report) -> str:
    """The JSON text, indented, ending with a newline."""
    return indented(to_dict(report)) + "\n"
