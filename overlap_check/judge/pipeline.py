"""The library entry point: profiler output (or captures) in, one Report out.

``check(paths_or_captures, options)`` reduces every capture to its figures
(:mod:`overlap_check.measure.figures`: read, busy sets, pair and plan figures, core checks) and
judges the figures of all runs here: warm-up discard, medians, verdicts, barrier ranking, the
gate. Captures given as PATHs are read and reduced by this process or, when there are several
and enough input to pay for them, by worker processes (:mod:`overlap_check.measure.workers`),
each returning only its figures: no more kernel tables are in memory at once than there are
workers. ``analyze_captures`` judges captures already in memory, in this process.

Stages: samples (runs or steps, warm flags) → stream level (busy sets, main stream, pairs,
parallelism) → core limits → plans (occurrences, placement, barriers) → gate."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from overlap_check.judge.decide import undecided
from overlap_check.judge.gain import apply_gates, apply_reference, with_summary
from overlap_check.judge.judgement import judge
from overlap_check.judge.sanity import check_report
from overlap_check.measure.cores import Limits, configured_limits
from overlap_check.measure.figures import CaptureFigures
from overlap_check.measure.workers import reduce_all, worker_count
from overlap_check.model import Capture, DeviceCores, Options, Report
from overlap_check.model.errors import OverlapCheckError
from overlap_check.readers import capture_order, order_note, time_order
from overlap_check.readers.discover import Source, discover
from overlap_check.readers.metadata import info_json_cores

if TYPE_CHECKING:
    from os import PathLike


@dataclass(frozen=True)
class Checked:
    """A Report and the captures it judged (in reading order, kernel tables dropped)."""

    report: Report
    captures: tuple[Capture, ...]


def check(
    paths_or_captures: Iterable[str | PathLike[str] | Capture],
    options: Options | None = None,
    *,
    workers: int | None = None,
) -> Report:
    """Analyse profiler output (paths) or already-read captures into a Report.

    ``workers``: processes reading PATHs (None: one per core, capped by the captures,
    and none for one capture or small input; 1: all in this process). A script calling
    this at top level needs an ``if __name__ == "__main__":`` guard (multiprocessing)."""
    return check_paths(paths_or_captures, options, workers=workers).report


def analyze_captures(captures: Sequence[Capture], options: Options | None = None) -> Report:
    """Judge captures already in memory (runs of one workload, possibly several ranks)."""
    return check_paths(captures, options, workers=1).report


def check_paths(
    paths_or_captures: Iterable[str | PathLike[str] | Capture],
    options: Options | None = None,
    *,
    workers: int | None = None,
) -> Checked:
    """:func:`check`, also returning the captures' metadata (for stderr details)."""
    options = options or Options()
    items = list(paths_or_captures)
    held = [i for i in items if isinstance(i, Capture)]
    paths = [Path(i) for i in items if not isinstance(i, Capture)]
    # Errors are raised in the order a serial read-then-judge would meet them.
    per_path, discover_error = _discover(paths)
    limits, limits_error = _limits(options)
    sources = [s for found in per_path for s in found]
    count = worker_count(sources, workers)
    jobs: list[Source | Capture] = [*held, *sources]
    again = partial(undecided, options=options)
    figures = reduce_all(jobs, options, limits, count, _info_cores(held, sources), again)
    if discover_error is not None:
        raise discover_error
    pairs = list(zip(figures, jobs, strict=True))
    loaded, note = _path_order(pairs[len(held) :], [len(f) for f in per_path], options)
    pairs = pairs[: len(held)] + loaded
    report = judge([f for f, _ in pairs], options, limits, limits_error)
    if note is not None:
        report = replace(report, notes=(*report.notes, note))
    if options.reference is not None:
        # the same path, the same options, no gates or comparisons of its own; the side
        # work of a single-stream reference runs inline, so its matches on the main stream
        # are the plan's side ops there (plans.on_main)
        plain = replace(
            options,
            reference=None,
            require_gain=None,
            max_join_wait_us=None,
            baseline=None,
            inline_side=True,
        )
        reference = check_paths([options.reference], plain, workers=workers).report
        named = ", ".join(str(p) for p in paths) or "the captures given"
        report = apply_reference(report, reference, named, options.reference)
    report = with_summary(apply_gates(report, options))
    return Checked(check_report(report), tuple(f.capture for f, _ in pairs))


def _discover(paths: Sequence[Path]) -> tuple[list[list[Source]], OverlapCheckError | None]:
    """Sources per PATH up to one that fails, and its error (raised after the reads of the
    PATHs before it, as readers.load_paths would)."""
    found: list[list[Source]] = []
    for path in paths:
        try:
            found.append(discover(path))
        except OverlapCheckError as err:
            return found, err
    return found, None


def _info_cores(
    held: Sequence[Capture], sources: Sequence[Source]
) -> list[tuple[DeviceCores, ...]]:
    """Per capture (in job order), the cores its info.json files give, read ahead (small)
    so that each capture's contention is swept for the decided cores, the smallest of
    them (figures.capture_figures)."""
    known = [() if c.device_cores is None else (c.device_cores,) for c in held]
    return known + [tuple(info_json_cores(s.device_info)) for s in sources]


def _limits(options: Options) -> tuple[Limits | None, OverlapCheckError | None]:
    try:
        return configured_limits(options), None
    except OverlapCheckError as err:  # raised where the core checks begin, after the reads
        return None, err


def _path_order(
    pairs: list[tuple[CaptureFigures, Source | Capture]], sizes: list[int], options: Options
) -> tuple[list[tuple[CaptureFigures, Source | Capture]], str | None]:
    """readers.load_paths' order: everything by capture time (the default), or with
    ``order="given"`` each PATH's captures by (rank, capture time), PATHs as given; and
    readers.order_note's note when the two orders differ."""
    out: list[tuple[CaptureFigures, Source | Capture]] = []
    start = 0
    for size in sizes:
        out += sorted(pairs[start : start + size], key=lambda p: capture_order(p[0].capture))
        start += size
    note = order_note([f.capture for f, _ in out], options.order)
    if options.order == "time":
        out.sort(key=lambda p: time_order(p[0].capture))
    return out, note
