"""Baselines: this analysis against a previous JSON report, read back as a Report. The
figures compared and the statuses: docs/ci.md, "Baselines"."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Literal

from overlap_check.model import SCHEMA_VERSION, BaselineDelta, BaselineFigure, Report
from overlap_check.model.errors import InputError, UsageError, regular_file
from overlap_check.model.verdicts import describe

# Reports round their figures; a drop of exactly the tolerance must not fail.
_EPSILON = 1e-9
FAILING_STATUSES = frozenset({"regressed", "missing-in-head"})

Status = Literal["ok", "regressed", "improved", "missing-in-base", "missing-in-head"]
Key = tuple[str, int | None]  # (plan or "stream S vs M", rank)
Figures = dict[Key, float | None]


def load_baseline(path: str | Path) -> Report:
    """Read a JSON report back as a Report; InputError naming the file (and the line or key)."""
    regular_file(path, "baseline report")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the baseline report: {err}", path=path) from err
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not valid JSON: {err.msg}", path=path, line=err.lineno) from err
    except RecursionError as err:
        raise InputError("JSON nested too deeply to be a report", path=path) from err
    report = Report.from_json(document, str(path))
    _figures(report, path)  # a figure twice is no baseline either
    return report


def _figures(report: Report, path: str | Path | None = None) -> tuple[Figures, Figures]:
    """(plan figures, stream-pair figures) of a report; InputError when one appears twice."""

    def collect(items: Sequence[tuple[Key, float | None]], where: str) -> Figures:
        figures: Figures = {}
        for number, (key, value) in enumerate(items):
            if key in figures:
                at = f"{where}[{number}]"
                raise InputError(f"{key[0]!r} rank {key[1]} appears twice", path=path, key=at)
            figures[key] = value
        return figures

    pairs = [((f"stream {p.side} vs {p.main}", p.rank), p.overlap_pct) for p in report.stream_pairs]
    return (
        collect([((p.name, p.rank), p.hidden_pct) for p in report.plans], "plans"),
        collect(pairs, "stream_pairs"),
    )


def _delta(
    key: Key, base: Figures, head: Figures, tolerance: float, figure: BaselineFigure
) -> BaselineDelta:
    name, rank = key
    if key not in head:
        return BaselineDelta(name, rank, base[key], None, None, "missing-in-head", figure)
    if key not in base:
        return BaselineDelta(name, rank, None, head[key], None, "missing-in-base", figure)
    before, after = base[key], head[key]
    status: Status
    if before is None or after is None:
        status = "ok" if before is after else ("improved" if before is None else "regressed")
        return BaselineDelta(name, rank, before, after, None, status, figure)
    change, limit = after - before, tolerance + _EPSILON
    status = "regressed" if change < -limit else "improved" if change > limit else "ok"
    return BaselineDelta(name, rank, before, after, change, status, figure)


def compare_reports(base: Report, head: Report, tolerance: float) -> tuple[BaselineDelta, ...]:
    """Per plan and rank (stream pairs when neither report has plans): base vs head."""
    if not (math.isfinite(tolerance) and 0.0 <= tolerance <= 1.0):
        raise UsageError(f"tolerance must be between 0 and 1, got {tolerance}")
    (base_plans, base_pairs), (head_plans, head_pairs) = _figures(base), _figures(head)
    use_plans = bool(base_plans or head_plans)
    before, after = (base_plans, head_plans) if use_plans else (base_pairs, head_pairs)
    figure: BaselineFigure = "hidden_pct" if use_plans else "overlap_pct"
    # head order first (what the report shows), then what only the baseline has
    keys = list(after) + [key for key in before if key not in after]
    return tuple(_delta(key, before, after, tolerance, figure) for key in keys)


def failing(deltas: tuple[BaselineDelta, ...]) -> tuple[BaselineDelta, ...]:
    return tuple(delta for delta in deltas if delta.status in FAILING_STATUSES)


def apply_baseline(report: Report, base: Report, tolerance: float) -> Report:
    """The report with ``baseline`` set; the gate fails on regressions and missing figures."""
    deltas = compare_reports(base, report, tolerance)
    judged = replace(report, baseline=deltas, baseline_tolerance=tolerance)
    reasons = [f"baseline: {describe(delta, tolerance)}" for delta in failing(deltas)]
    return judged.failing(*reasons)


def comparison_to_dict(
    deltas: tuple[BaselineDelta, ...], tolerance: float, base: str, head: str
) -> dict[str, Any]:
    """The JSON document of ``overlap-check compare --format json``."""
    failed = bool(failing(deltas))
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "baseline-comparison",
        "base": base,
        "head": head,
        "tolerance": tolerance,
        "verdict": "fail" if failed else "pass",
        "exit_code": 1 if failed else 0,
        "deltas": [asdict(delta) for delta in deltas],
    }
