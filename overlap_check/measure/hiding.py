"""How much side work really hid behind other work: per occurrence, ``hidden_pct`` exact in
int64 ns, the part under its own dominator, the counts per verdict band, helper streams
and the side time only sibling side streams covered.

The rules: docs/hidden-fraction.md ("Two figures per occurrence", "Helper streams") and
docs/method.md ("hidden_pct"). Pure functions on numpy int64 arrays and polars tables."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.model import Thresholds, Verdict, intervals
from overlap_check.model.intervals import I64
from overlap_check.model.table import compute_kernels, i64_column
from overlap_check.model.verdicts import bands

F64 = npt.NDArray[np.float64]
BANDS: tuple[Verdict, ...] = ("real", "partial", "fake")
HELPER_CORES = frozenset({"AI_CPU", "DSA_SQE"})  # work a stream can run only as a helper
HELPER_SHARE = 0.01  # a stream below this share of the main stream's busy time is a helper


@dataclass(frozen=True)
class Hidden:
    """Per-occurrence hidden time (index k = occurrence k + 1)."""

    side_busy_ns: I64  # |busy(side ops of the occurrence)|
    hidden_ns: I64  # of which under the cover it is judged against (the main path, or compute)
    under_dominator_ns: I64  # of which under the occurrence's own dominator
    hidden_pct: F64  # hidden_ns / side_busy_ns; nan without side busy time
    dominator_pct: F64  # under_dominator_ns / side_busy_ns; nan likewise


def busy_without(
    busy: Mapping[int, tuple[I64, I64]], extra: tuple[I64, I64], own: int
) -> tuple[I64, I64]:
    """Merged busy time of ``extra`` and the streams of ``busy`` but ``own``: given the main
    stream and the communication tasks, a compute plan's main path (sibling side streams
    hide nothing); given every stream, what hides a communication or copy plan's tasks."""
    parts = [extra, *(b for sid, b in busy.items() if sid != own)]
    starts = np.concatenate([s for s, _ in parts])
    return intervals.merge(starts, np.concatenate([e for _, e in parts]))


def hidden_fraction(
    side_start: npt.ArrayLike,
    side_end: npt.ArrayLike,
    occurrence: npt.ArrayLike,
    n_occurrences: int,
    other_busy: tuple[I64, I64],
    dom_start: npt.ArrayLike,
    dom_end: npt.ArrayLike,
) -> Hidden:
    """Hidden time of each occurrence's side ops (``occurrence``: each op's, in
    ``[0, n_occurrences)``) under ``other_busy`` (:func:`busy_without`) and under its
    dominator (none: ``dom_start == dom_end``)."""
    ms, me, mg = intervals.grouped_merge(side_start, side_end, occurrence)
    side_busy = np.zeros(n_occurrences, dtype=np.int64)
    hidden = np.zeros(n_occurrences, dtype=np.int64)
    under = np.zeros(n_occurrences, dtype=np.int64)
    if mg.size:
        first = np.flatnonzero(np.concatenate([[True], mg[1:] != mg[:-1]]))
        groups = mg[first]
        side_busy[groups] = np.add.reduceat(me - ms, first)
        covered = intervals.covered_length(other_busy[0], other_busy[1], ms, me)
        hidden[groups] = np.add.reduceat(covered, first)
        ds = np.asarray(dom_start, dtype=np.int64)[mg]
        de = np.asarray(dom_end, dtype=np.int64)[mg]
        cs, ce = intervals.clip(ms, me, ds, np.maximum(ds, de))
        under[groups] = np.add.reduceat(ce - cs, first)
    return _shares(side_busy, hidden, under)


def _shares(side_busy: I64, hidden: I64, under: I64) -> Hidden:
    has = side_busy > 0
    hidden_pct = np.full(side_busy.size, np.nan)
    dominator_pct = np.full(side_busy.size, np.nan)
    hidden_pct[has] = hidden[has] / side_busy[has]
    dominator_pct[has] = under[has] / side_busy[has]
    return Hidden(side_busy, hidden, under, hidden_pct, dominator_pct)


def combined(parts: Sequence[Hidden]) -> Hidden:
    """The hidden time of side ops measured in parts (one per side-op stream), summed."""
    side_busy: I64 = np.vstack([h.side_busy_ns for h in parts]).sum(axis=0)
    hidden: I64 = np.vstack([h.hidden_ns for h in parts]).sum(axis=0)
    under: I64 = np.vstack([h.under_dominator_ns for h in parts]).sum(axis=0)
    return _shares(side_busy, hidden, under)


def verdict_counts(figures: npt.ArrayLike, thresholds: Thresholds) -> dict[Verdict, int]:
    """Judged occurrences per verdict band (nan figures are not judged)."""
    found = bands(figures, thresholds)
    return {band: int((found == band).sum()) for band in BANDS}


def helper_streams_of(
    kernels: pl.DataFrame,
    mains: Iterable[int],
    busy: Mapping[int, int] | None = None,
    share: float = HELPER_SHARE,
) -> dict[int, tuple[int, ...]]:
    """Per main stream of ``mains``, the helper streams (docs/hidden-fraction.md, "Helper
    streams"; ``share``). ``busy``: each compute stream's busy time, when measured already."""
    columns = ("stream_id", "accelerator_core", "start_ns", "end_ns", "is_communication")
    compute = compute_kernels(kernels, columns)
    if busy is None:
        busy = {
            int(stream): intervals.union_length(
                i64_column(group, "start_ns"), i64_column(group, "end_ns")
            )
            for (stream,), group in compute.group_by("stream_id")
        }
    flags = compute.group_by("stream_id").agg(
        pl.col("accelerator_core").is_in(list(HELPER_CORES)).fill_null(False).all()
    )
    helper_only = {int(sid) for sid, only in flags.iter_rows() if only}
    return {
        main: tuple(
            sorted(
                s
                for s in busy
                if s != main and (s in helper_only or busy[s] < share * busy.get(main, 0))
            )
        )
        for main in mains
    }


@dataclass(frozen=True)
class Siblings:
    """A sample's side work that only sibling side streams covered while the main path
    idled (docs/hidden-fraction.md): not hidden, and named in a finding."""

    streams: tuple[int, ...]  # the side ops' streams and the streams that covered them
    share: float  # of the judged occurrences' side busy time
    idle_ns: float  # median over the judged occurrences of their side time not hidden


def siblings(
    kernels: pl.DataFrame,
    side_ops: tuple[I64, I64, I64, I64],
    judged: npt.NDArray[np.bool_],
    hidden: Hidden,
    sibling_ns: I64,
    main_path: Callable[[int], tuple[I64, I64]],
) -> Siblings | None:
    """The sibling-only cover of a sample's judged occurrences (None: none); ``main_path(s)``:
    the main path's busy time (:func:`busy_without`) against side ops of stream ``s``."""
    busy = int(hidden.side_busy_ns[judged].sum())
    only = int(sibling_ns[judged].sum()) if sibling_ns.size else 0
    if busy <= 0 or only <= 0:
        return None
    ss, se, occ, sid = side_ops
    keep = judged[occ]
    ss, se, sid = ss[keep], se[keep], sid[keep]
    own = {int(s) for s in np.unique(sid)}
    compute = compute_kernels(kernels, ("stream_id", "start_ns", "end_ns", "is_communication"))
    covering: set[int] = set()
    for (stream,), group in compute.group_by("stream_id"):  # a handful of streams
        for s in own - {int(stream)}:
            main_s, main_e = main_path(s)
            qs, qe = ss[sid == s], se[sid == s]
            both = intervals.merge(
                np.concatenate([main_s, i64_column(group, "start_ns")]),
                np.concatenate([main_e, i64_column(group, "end_ns")]),
            )
            alone = intervals.covered_length(*both, qs, qe) - intervals.covered_length(
                main_s, main_e, qs, qe
            )
            if int(alone.sum()) > 0:
                covering.add(int(stream))
    exposed = (hidden.side_busy_ns - hidden.hidden_ns)[judged]
    return Siblings(tuple(sorted(own | covering)), only / busy, float(np.median(exposed)))


def sibling_finding(samples: Sequence[Siblings | None], thresholds: Thresholds) -> str | None:
    """The finding when side streams hid only each other in the warm ``samples`` (their
    median share of side time above the fake band), naming the streams."""
    shares = [0.0 if s is None else s.share for s in samples]
    found = [s for s in samples if s is not None]
    if not found or float(np.median(shares)) <= thresholds.fake:
        return None
    streams = sorted({x for s in found for x in s.streams})
    named = ", ".join(map(str, streams[:-1])) + f" and {streams[-1]}" if streams[1:] else ""
    named = named or f"{streams[0]} and a sibling"
    idle = float(np.median([s.idle_ns for s in found])) / 1000
    return (
        f"streams {named} overlapped each other while the main stream idled: {idle:.0f} µs of "
        "side time a layer (warm median) not hidden; side work under sibling side streams only "
        "is not hidden from the step; run it under the main stream's compute or its communication"
    )
