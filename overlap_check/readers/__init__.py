"""Readers: the only code that knows Ascend file formats. PATHs in, Captures out.

- :func:`load` — one PATH (docs/contract.md): a result dir, a dir of them, a PROF
  dir or a bare file → its captures, ordered by (rank, capture time).
- :func:`load_paths` — several PATHs = several runs, in the given order (or by
  capture time).

Runs are ordered by capture time (``end_info.collectionTimeEnd``, else the
timestamp in the dir name, else the db's session end, else the last kernel
end), never by listing order or name: result dir names start with host and pid.
Ranks of one job are not runs: each Capture keeps its rank.

One module per source kind: ``kernel_csv`` (kernel_details / op_summary),
``task_time``, ``trace`` (trace_view.json / msprof_*.json), ``db`` (sqlite
exports), ``metadata`` (profiler_info, info.json); ``streams`` gives Level0 rows
their streams; ``capture`` assembles one Capture.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from overlap_check.model import Capture
from overlap_check.readers.capture import read_capture
from overlap_check.readers.discover import discover

__all__ = ["capture_order", "load", "load_paths", "time_order"]


def time_order(capture: Capture) -> tuple[bool, int, str]:
    """Sort key: capture time (unknown last), then path for a stable tie-break."""
    known = capture.capture_time_ns is not None
    return (not known, capture.capture_time_ns or 0, capture.path)


def capture_order(capture: Capture) -> tuple[bool, int, bool, int, str]:
    """Sort key: rank (unknown last), then capture time."""
    rank_known = capture.rank is not None
    return (not rank_known, capture.rank or 0, *time_order(capture))


def load(path: str | Path) -> list[Capture]:
    """Every capture under one PATH, ordered by (rank, capture time).

    Raises InputError / SchemaError / NoStreamDataError (exit code 2) naming the
    file for missing, unreadable or unknown input; malformed rows inside a good
    file are skipped and counted on the Capture instead.
    """
    captures = [read_capture(source) for source in discover(path)]
    return sorted(captures, key=capture_order)


def load_paths(
    paths: Sequence[str | Path], order: Literal["given", "time"] = "given"
) -> list[Capture]:
    """Several PATHs as runs: in the order given (each PATH in capture-time order),
    or, with ``order="time"``, everything by capture time. Ranks are kept."""
    captures = [capture for path in paths for capture in load(path)]
    if order == "time":
        return sorted(captures, key=time_order)
    return captures
