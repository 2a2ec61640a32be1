"""Figures that cannot be: the last check before a Report leaves the library.

A negative time, an overlap fraction outside [0, 1], a negative parallelism or a
NaN can only come from input the readers let through (values so large that sums
wrap, rows out of order). Such a report would mislead, so it is an error naming
the capture(s), never a result.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

from overlap_check.errors import InputError
from overlap_check.model import Report, RunInfo

# Durations and lengths (ns): never negative. Absolute times (start_ns, origin_ns,
# capture_time_ns) are on the capture's own clock and are not checked here.
_DURATIONS = frozenset(
    {
        "busy_ns",
        "overlap_ns",
        "main_busy_ns",
        "side_busy_ns",
        "concurrent_ns",
        "wall_ns",
        "gap_ns",
        "duration_ns",
        "excess_block_ns",
        "over_limit_ns",
        "aicore_over_limit_ns",
        "vectorcore_over_limit_ns",
        # communication (RankCommunication, CommunicationStep, ProfilerStepTime)
        "hidden_ns",
        "exposed_ns",
        "compute_ns",
        "computing_ns",
        "not_overlapped_ns",
        "overlapped_ns",
        "communication_ns",
        "free_ns",
        # docs/gain.md (new_join_wait_ns, a difference, may be negative)
        "layer_wall_ns",
        "dominator_ns",
        "side_total_ns",
        "join_wait_ns",
        "side_tail_ns",
        "step_wall_ns",
        "join_wait_max_ns",
        "join_wait_worst_ns",
    }
)
# Fractions: in [0, 1].
_FRACTIONS = frozenset(
    {"overlap_pct", "busy_overlap_pct", "overlap_min", "overlap_max", "hidden_pct"}
)
_NON_NEGATIVE = frozenset(
    {"parallelism", "kernels", "skipped_rows", "demand", "maximum", "profiler_difference"}
)


def _impossible(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the figure ``name``; None when it can."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and math.isnan(value):
        return "is NaN"
    if name in _FRACTIONS and not 0.0 <= value <= 1.0:
        return "is outside [0, 1]"
    if (name in _DURATIONS or name in _NON_NEGATIVE) and value < 0:
        return "is negative"
    if isinstance(value, float) and math.isinf(value):
        return "is infinite"
    return None


def _figures(obj: object, where: str, run: int | None) -> Iterator[tuple[str, int | None, object]]:
    """(dotted name, run index or None, value) for every field below ``obj``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        own_run = getattr(obj, "run", None)
        if isinstance(obj, RunInfo):
            own_run = obj.index
        run = own_run if isinstance(own_run, int) else run
        for item in dataclasses.fields(obj):
            yield from _figures(getattr(obj, item.name), f"{where}.{item.name}", run)
    elif isinstance(obj, tuple | list):
        for i, item in enumerate(obj):
            yield from _figures(item, f"{where}[{i}]", run)
    else:
        yield where, run, obj


def check_report(report: Report) -> Report:
    """``report`` unchanged, or InputError (exit 2) for the first impossible figure."""
    for where, run, value in _figures(report, "report", None):
        name = where.rsplit(".", 1)[-1].split("[", 1)[0]
        why = _impossible(name, value)
        if why is None:
            continue
        paths = [r.path for r in report.runs if run is None or r.index == run]
        named = paths[0] if len(paths) == 1 else None
        about = "" if named else f" (captures: {', '.join(paths) or 'none'})"
        raise InputError(
            f"impossible figure: {where} = {value!r} {why}{about}; the input holds values "
            "the readers could not judge (huge, negative or out-of-order times)",
            path=named,
        )
    return report
