"""A plan's occurrences in one sample, as columns: per occurrence its side and dominator
windows, busy and hidden time, status (docs/method.md, docs/hidden-fraction.md), and the
recipes' window figures measured on them (:func:`measure_occurrences`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.measure.hiding import Hidden, combined, hidden_fraction
from overlap_check.model import Occurrence, Thresholds, Verdict, intervals
from overlap_check.model.intervals import I64
from overlap_check.model.verdicts import bands

F64 = npt.NDArray[np.float64]
_EMPTY: I64 = np.zeros(0, dtype=np.int64)
STATUS = ("ok", "no-side", "no-dominator", "zero-length")
OK, NO_SIDE, NO_DOMINATOR, ZERO_LENGTH = range(4)
WORST = 3


@dataclass(frozen=True)
class PlanStreams:
    main: int | None  # the dominator's stream
    side: int | None  # the configured or inferred side stream


@dataclass(frozen=True)
class Occurrences:
    """Per-occurrence arrays of one sample (index k = occurrence k + 1)."""

    side_count: I64
    side_start: I64
    side_end: I64
    dom_start: I64
    dom_end: I64
    status: I64
    overlap_ns: I64
    pct: F64  # nan when not judged
    busy_pct: F64  # nan when not judged
    dom_row: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # -1: none
    main_names: pl.Series = field(default_factory=lambda: pl.Series(dtype=pl.String))
    # the side ops by start, the occurrence and stream of each (for hiding.hidden_fraction)
    side_ops: tuple[I64, I64, I64, I64] = field(
        default_factory=lambda: (_EMPTY, _EMPTY, _EMPTY, _EMPTY)
    )  # start, end, occurrence, stream
    hidden: Hidden | None = None  # with_hidden(): hidden side time per occurrence
    # per occurrence: its side work ended after its join started (layering.join_not_waited)
    join_not_waited: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # per occurrence, a module: selection's layer (instance N + 1; -1: none); empty: k + 1
    side_layer: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # per occurrence, side time only sibling side streams covered (empty: not measured)
    sibling_ns: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # a layer has a join (no join flag, lag, join wait or side tail without one)
    joined: bool = True

    def with_hidden(
        self,
        busy_without: Callable[[int], tuple[I64, I64]],
        anywhere: Callable[[int], tuple[I64, I64]] | None = None,
    ) -> Occurrences:
        """These occurrences with their hidden side time (docs/hidden-fraction.md): each side
        op against ``busy_without(s)``, the merged busy time that hides work of stream ``s``
        (hiding.busy_without: the main path, or for a communication or copy plan every
        other stream). ``anywhere(s)``: the busy time of every other stream;
        given, ``sibling_ns`` holds what only sibling side streams covered."""
        hidden = self._hidden(busy_without)
        if anywhere is None:
            return replace(self, hidden=hidden)
        sibling = self._hidden(anywhere).hidden_ns - hidden.hidden_ns
        return replace(self, hidden=hidden, sibling_ns=sibling)

    def _hidden(self, busy_without: Callable[[int], tuple[I64, I64]]) -> Hidden:
        ss, se, occ, sid = self.side_ops
        n = self.status.size
        parts = [
            hidden_fraction(
                ss[sid == s],
                se[sid == s],
                occ[sid == s],
                n,
                busy_without(int(s)),
                self.dom_start,
                self.dom_end,
            )
            for s in np.unique(sid)
        ]
        if len(parts) <= 1:  # one side stream (no side op: nothing is hidden)
            none = (_EMPTY, _EMPTY)
            return parts[0] if parts else hidden_fraction(ss, se, occ, n, none, _EMPTY, _EMPTY)
        return combined(parts)

    def hidden_pct(self) -> F64:
        """hidden_pct per occurrence (nan: not computed, or no side busy time)."""
        if self.hidden is None:
            return np.full(self.status.size, np.nan)
        return self.hidden.hidden_pct

    def occurrence(self, k: int, thresholds: Thresholds | None = None) -> Occurrence:
        """Occurrence k (0-based) as the report lists it (see :meth:`listed`)."""
        return self.listed(np.array([k], dtype=np.int64), thresholds)[0]

    def listed(
        self, ks: npt.ArrayLike, thresholds: Thresholds | None = None
    ) -> tuple[Occurrence, ...]:
        """Occurrences ``ks`` (0-based) as the report lists them; with ``thresholds``, the
        verdict band of each hidden_pct (no-evidence when it is not judged). Column by
        column: a run's layer table lists every occurrence (tens of thousands)."""
        k = np.asarray(ks, dtype=np.int64)
        if k.size == 0:
            return ()
        count = self.side_count[k]
        has_side = count > 0
        dom_row = self.dom_row[k]
        has_dom = dom_row >= 0
        if has_dom.any():
            names = self.main_names.gather(np.where(has_dom, dom_row, 0)).to_list()
        else:
            names = [None] * k.size
        status = self.status[k]
        if self.side_layer.size:
            own = self.side_layer[k]
            layer = np.where(own >= 0, own, k + 1)
        else:
            layer = k + 1
        h = self.hidden
        none: list[None] = [None] * k.size
        if h is not None:
            has_busy = h.side_busy_ns[k] > 0
            hidden_pct = _present(h.hidden_pct[k], has_busy)
            dominator_pct = _present(h.dominator_pct[k], has_busy)
            side_busy, hidden_ns = h.side_busy_ns[k].tolist(), h.hidden_ns[k].tolist()
        else:
            has_busy = np.zeros(k.size, dtype=bool)
            hidden_pct, dominator_pct, side_busy, hidden_ns = none, none, none, none
        verdict: list[Verdict] | list[None] = none
        if thresholds is not None:
            judged = (status == OK) & has_busy
            band = h.hidden_pct[k] if h is not None else np.zeros(k.size)
            verdict = np.where(judged, bands(band, thresholds), "no-evidence").tolist()
        joins = self.join_not_waited
        pct, busy_pct = self.pct[k], self.busy_pct[k]
        return tuple(
            map(
                Occurrence,
                (k + 1).tolist(),
                count.tolist(),
                _present(self.side_start[k], has_side),
                _present(self.side_end[k], has_side),
                _present_list(names, has_dom),
                _present(self.dom_start[k], has_dom),
                _present(self.dom_end[k], has_dom),
                self.overlap_ns[k].tolist(),
                _present(pct, ~np.isnan(pct)),
                _present(busy_pct, ~np.isnan(busy_pct)),
                np.asarray(STATUS, dtype=object)[status].tolist(),
                layer.tolist(),
                hidden_pct,
                dominator_pct,
                side_busy,
                hidden_ns,
                verdict,
                joins[k].tolist() if joins.size else [False] * k.size,
            )
        )


def _present(values: npt.NDArray[Any], present: npt.NDArray[np.bool_]) -> list[Any]:
    """``values`` as Python numbers, None where not ``present``."""
    return _present_list(values.tolist(), present)


def _present_list(values: list[Any], present: npt.NDArray[np.bool_]) -> list[Any]:
    for i in np.flatnonzero(~present).tolist():  # the absent ones only
        values[i] = None
    return values


def measure_occurrences(
    ss: I64, se: I64, occ: I64, n_occ: int, ds: I64, de: I64, has_dom: npt.NDArray[np.bool_]
) -> Occurrences:
    """The recipes' window figures and the busy-time figure of each occurrence: ``ss``,
    ``se``, ``occ`` per side op (each occurrence's together, by start), the rest per occurrence."""
    count = np.bincount(occ, minlength=n_occ).astype(np.int64)
    side_start = np.zeros(n_occ, dtype=np.int64)
    side_end = np.zeros(n_occ, dtype=np.int64)
    if occ.size:
        # Side ops are sorted by start and their occurrence never decreases: groups are contiguous.
        first = np.flatnonzero(np.concatenate([[True], occ[1:] != occ[:-1]]))
        side_start[occ[first]] = ss[first]
        side_end[occ[first]] = np.maximum.reduceat(se, first)
    has_side = count > 0
    status = np.full(n_occ, OK, dtype=np.int64)
    status[~has_side] = NO_SIDE
    status[~has_dom] = NO_DOMINATOR
    overlap = np.maximum(0, np.minimum(side_end, de) - np.maximum(side_start, ds))
    denom = np.minimum(side_end - side_start, de - ds)
    status[(status == OK) & (denom <= 0)] = ZERO_LENGTH
    ok = status == OK
    overlap = np.where(ok, overlap, 0)
    pct = np.full(n_occ, np.nan)
    pct[ok] = overlap[ok] / denom[ok]
    # Busy time: side ops merged per occurrence, and clipped to their own dominator.
    side_busy = intervals.grouped_union_length(ss, se, occ, n_occ)
    lo = np.where(has_dom[occ], ds[occ], 0) if occ.size else occ
    hi = np.where(has_dom[occ], de[occ], 0) if occ.size else occ
    cs, ce = intervals.clip(ss, se, lo, hi)
    busy_overlap = intervals.grouped_union_length(cs, ce, occ, n_occ)
    busy_denom = np.minimum(side_busy, de - ds)
    busy_ok = ok & (busy_denom > 0)
    busy_pct = np.full(n_occ, np.nan)
    busy_pct[busy_ok] = busy_overlap[busy_ok] / busy_denom[busy_ok]
    return Occurrences(count, side_start, side_end, ds, de, status, overlap, pct, busy_pct)
