"""How much side work really hid behind other work (docs/hidden-fraction.md).

Per occurrence (layer) of a plan, on ONE capture's kernel table:

``hidden_pct = |busy(side ops) ∩ busy(compute on every other stream)| / |busy(side ops)|``

exact in int64 ns, and beside it the part hidden under the occurrence's own
dominator. Over the judged occurrences: the count per verdict band, the rule
that caps a plan at ``partial`` when too many of them are fake, and which
streams only ran helper work (not judged at all).

Pure functions on numpy int64 arrays and polars kernel tables; interval maths
from :mod:`overlap_check.measure.intervals`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.judge.verdict import bands, capped, label
from overlap_check.measure import intervals
from overlap_check.measure.intervals import I64
from overlap_check.model import FAKE_SHARE, Thresholds, Verdict
from overlap_check.model.table import compute_kernels

F64 = npt.NDArray[np.float64]
BANDS: tuple[Verdict, ...] = ("real", "partial", "fake")
HELPER_CORES = frozenset({"AI_CPU", "DSA_SQE"})  # work a stream can run only as a helper
HELPER_SHARE = 0.01  # a stream below this share of the main stream's busy time is a helper


@dataclass(frozen=True)
class Hidden:
    """Per-occurrence hidden time (index k = occurrence k + 1)."""

    side_busy_ns: I64  # |busy(side ops of the occurrence)|
    hidden_ns: I64  # of which under compute on any other stream
    under_dominator_ns: I64  # of which under the occurrence's own dominator
    hidden_pct: F64  # hidden_ns / side_busy_ns; nan without side busy time
    dominator_pct: F64  # under_dominator_ns / side_busy_ns; nan likewise


def i64_column(frame: pl.DataFrame, column: str) -> I64:
    """A table's Int64 column as an int64 numpy array (no copy when it can be avoided)."""
    return frame.get_column(column).to_numpy().astype(np.int64, copy=False)


def other_stream_busy(kernels: pl.DataFrame, side_stream: int) -> tuple[I64, I64]:
    """Merged busy time of the compute kernels on every stream but ``side_stream``."""
    other = compute_kernels(kernels, ("stream_id", "start_ns", "end_ns", "is_communication"))
    other = other.filter(pl.col("stream_id") != side_stream)
    return intervals.merge(i64_column(other, "start_ns"), i64_column(other, "end_ns"))


def hidden_fraction(
    side_start: npt.ArrayLike,
    side_end: npt.ArrayLike,
    occurrence: npt.ArrayLike,
    n_occurrences: int,
    other_busy: tuple[I64, I64],
    dom_start: npt.ArrayLike,
    dom_end: npt.ArrayLike,
) -> Hidden:
    """Hidden time of each occurrence's side ops.

    ``occurrence``: the occurrence index of each side op, in ``[0, n_occurrences)``.
    ``other_busy``: merged busy time of the other streams (:func:`other_stream_busy`).
    ``dom_start``/``dom_end``: per occurrence; an occurrence without a dominator has
    ``dom_start == dom_end`` (nothing is under it).
    """
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


def capped_verdict(
    figures: npt.ArrayLike, thresholds: Thresholds, fake_share: float = FAKE_SHARE
) -> Verdict:
    """The band of the median figure, at best ``partial`` when more than ``fake_share`` of
    the judged occurrences are fake (a median hides fake layers: 3 of 6 fake is 0.5)."""
    values = np.asarray(figures, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return "no-evidence"
    counts = verdict_counts(values, thresholds)
    verdict = label(float(np.median(values)), thresholds)
    return capped(verdict, (counts["real"], counts["partial"], counts["fake"]), fake_share)


def helper_streams(
    kernels: pl.DataFrame, main_stream: int, share: float = HELPER_SHARE
) -> tuple[int, ...]:
    """Streams that are not judged: they ran only helper work (AI_CPU, DSA_SQE) or less
    than ``share`` of the main stream's busy time."""
    return helper_streams_of(kernels, [main_stream], share=share)[main_stream]


def helper_streams_of(
    kernels: pl.DataFrame,
    mains: Iterable[int],
    busy: Mapping[int, int] | None = None,
    share: float = HELPER_SHARE,
) -> dict[int, tuple[int, ...]]:
    """:func:`helper_streams` for each of ``mains`` as the main stream. ``busy``: the busy
    time of every compute stream where it is measured already (streams.StreamSets), so
    that the kernels are grouped once, not once per main stream."""
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
