"""Readers: the only code that knows the profiler file formats. PATHs in, Captures out.

Runs are ordered by capture time, never by listing order or name (result dir names
start with host and pid); ranks of one job are not runs (docs/formats.md, "What a
PATH can be"). One module per source kind; ``capture`` assembles one Capture."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from overlap_check.model import Capture, Order, SideKind
from overlap_check.readers.capture import read_capture
from overlap_check.readers.discover import discover

__all__ = ["capture_order", "load", "load_paths", "order_note", "time_order"]


def time_order(capture: Capture) -> tuple[bool, int, str]:
    """Sort key: capture time (unknown last), then path for a stable tie-break."""
    known = capture.capture_time_ns is not None
    return (not known, capture.capture_time_ns or 0, capture.path)


def capture_order(capture: Capture) -> tuple[bool, int, bool, int, str]:
    """Sort key: rank (unknown last), then capture time."""
    rank_known = capture.rank is not None
    return (not rank_known, capture.rank or 0, *time_order(capture))


def load(path: str | Path, *, tasks: frozenset[SideKind] = frozenset()) -> list[Capture]:
    """Every capture under one PATH, ordered by (rank, capture time); ``tasks``: as for
    read_capture. Bad input raises an InputError naming the file (docs/errors.md)."""
    captures = [read_capture(source, tasks=tasks) for source in discover(path)]
    return sorted(captures, key=capture_order)


def load_paths(
    paths: Sequence[str | Path], order: Order = "time", tasks: frozenset[SideKind] = frozenset()
) -> list[Capture]:
    """Several PATHs as runs: everything by capture time, or, with ``order="given"``, in
    the order given (each PATH in capture-time order). Ranks are kept."""
    captures = [capture for path in paths for capture in load(path, tasks=tasks)]
    return sorted(captures, key=time_order) if order == "time" else captures


def order_note(given: Sequence[Capture], order: Order) -> str | None:
    """A note when some rank's runs are given in another order than captured."""
    by_time = sorted(given, key=time_order)
    for rank in dict.fromkeys(c.rank for c in given):
        as_given = [c.path for c in given if c.rank == rank]
        in_time = [c.path for c in by_time if c.rank == rank]
        if as_given == in_time:
            continue
        first = next(i for i, (a, b) in enumerate(zip(as_given, in_time, strict=True)) if a != b)
        swapped = f"{as_given[first]} was given before {in_time[first]}, captured later"
        if order == "time":
            return (
                f"runs judged in capture-time order, not the command line's ({swapped}); "
                "--order given keeps the command line's order"
            )
        return (
            f"runs judged in the command line's order (--order given), not by capture time "
            f"({swapped}); the default --order time judges them as captured"
        )
    return None
