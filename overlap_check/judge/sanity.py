"""Figures that cannot be (a negative time, a fraction outside [0, 1], NaN), from input the
readers let through: the last check before a Report leaves the library. Such a report would
mislead, so it is an error naming the capture(s), never a result."""

from __future__ import annotations

import dataclasses
import math
from functools import cache

from overlap_check.model import Report, RunInfo
from overlap_check.model.errors import InputError
from overlap_check.model.json_codec import POINTS

# Durations and lengths (every *_ns figure): never negative. Absolute times (the codec's
# POINTS, on the capture's own clock) are not checked, nor the signed ones: a difference
# (new_join_wait_ns), a barrier's delay or lag and a cause's size.
_SIGNED = frozenset(POINTS) | {"new_join_wait_ns", "after_side_end_ns", "lag_ns", "size_ns"}
# Fractions: in [0, 1].
_FRACTIONS = frozenset(
    {"overlap_pct", "busy_overlap_pct", "overlap_min", "overlap_max", "hidden_pct", "dominator_pct"}
)
_NON_NEGATIVE = frozenset({"parallelism", "kernels", "skipped_rows", "unplaced_rows", "demand",
                           "maximum", "profiler_difference"})  # fmt: skip


def _never_negative(name: str) -> bool:
    return name in _NON_NEGATIVE or (name.endswith("_ns") and name not in _SIGNED)


def _impossible(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the figure ``name``; None when it can."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and math.isnan(value):
        return "is NaN"
    if name in _FRACTIONS and not 0.0 <= value <= 1.0:
        return "is outside [0, 1]"
    if _never_negative(name) and value < 0:
        return "is negative"
    if isinstance(value, float) and math.isinf(value):
        return "is infinite"
    return None


@cache
def _fields(cls: type) -> tuple[tuple[str, bool, bool], ...]:
    """Per field of a dataclass: its name, whether it is a fraction, whether its sign counts."""
    return tuple(
        (f.name, f.name in _FRACTIONS, f.name in _FRACTIONS or _never_negative(f.name))
        for f in dataclasses.fields(cls)
    )


Found = tuple[list[str], int | None, object, str]  # path (innermost first), run, value, why


def _first_impossible(obj: object, name: str, run: int | None) -> Found | None:
    """The first impossible figure below ``obj`` (depth first, fields in order); a plainly
    possible number is passed inline, without a call (a report lists every occurrence)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        own_run = obj.index if isinstance(obj, RunInfo) else getattr(obj, "run", None)
        run = own_run if isinstance(own_run, int) else run
        for field, fraction, signed in _fields(type(obj)):
            value = getattr(obj, field)
            kind = type(value)
            if kind is int or kind is float:
                if fraction:
                    if 0.0 <= value <= 1.0:
                        continue
                elif (0.0 <= value < math.inf) if signed else (-math.inf < value < math.inf):
                    continue  # (NaN fails every comparison)
            elif kind is str or kind is bool or value is None:
                continue
            found = _first_impossible(value, field, run)
            if found is not None:
                found[0].append(f".{field}")
                return found
        return None
    if isinstance(obj, tuple | list):
        for i, item in enumerate(obj):
            found = _first_impossible(item, name, run)
            if found is not None:
                found[0].append(f"[{i}]")
                return found
        return None
    why = _impossible(name, obj)
    return None if why is None else ([], run, obj, why)


def check_report(report: Report) -> Report:
    """``report`` unchanged, or InputError (exit 2) for the first impossible figure."""
    found = _first_impossible(report, "report", None)
    if found is None:
        return report
    parts, run, value, why = found
    where = "report" + "".join(reversed(parts))
    paths = [r.path for r in report.runs if run is None or r.index == run]
    named = paths[0] if len(paths) == 1 else None
    about = "" if named else f" (captures: {', '.join(paths) or 'none'})"
    raise InputError(
        f"impossible figure: {where} = {value!r} {why}{about}; the input holds values "
        "the readers could not judge (huge, negative or out-of-order times)",
        path=named,
    )
