"""Unknown values print as '-' in the text and Markdown reports, never as Python's None.

Every optional field of a real Report (from fixtures) is set to None, nested parts
included, and the renderers must still write no "None".
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from overlap_check.judge.pipeline import check
from overlap_check.model import Options, Plan
from overlap_check.report import markdown, text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PLAN = Plan(name="moe", side="SharedExpert", dominator="GroupedMatmul")


def unknowns(value: Any) -> Any:
    """``value`` with every optional scalar field set to None, at every depth."""
    if isinstance(value, tuple):
        return tuple(unknowns(v) for v in value)
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    changes = {}
    for field in dataclasses.fields(value):
        current = getattr(value, field.name)
        optional = "None" in str(field.type)
        nested = dataclasses.is_dataclass(current) or isinstance(current, (tuple, dict))
        changes[field.name] = None if optional and not nested else unknowns(current)
    return dataclasses.replace(value, **changes)


@pytest.mark.parametrize("fixture", ["fake-dual-stream", "core-limits", "two-rank-job"])
def test_no_none_in_text_or_markdown(fixture: str) -> None:
    report = unknowns(check([FIXTURES / fixture], Options(plans=(PLAN,))))
    assert report.plans and report.plans[0].side_stream is None  # the unknowns reached it
    for renderer in (text, markdown):
        rendered = renderer.render(report)
        assert [line for line in rendered.splitlines() if "None" in line] == []
    rendered = text.render(report)
    assert "    streams: side -, main -; " in rendered
