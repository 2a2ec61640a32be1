"""Plans: occurrences, window and busy overlap, placement (3a) and barrier search (3b).

Per sample (a run, or a step of a run; in :mod:`overlap_check.measure.figures`, one capture
at a time): :func:`tag`, :func:`main_kernels`, :func:`occurrences`, :func:`plan_run`
and :func:`barrier_instances`. Per rank (in :mod:`overlap_check.judge.judgement`, over the
samples of all its runs): :func:`plan_result` (warm median, verdict, placement,
barriers, diagnosis).

Streams of a plan, decided once per rank so every run is judged alike
(decide.plan_streams):

- main (the dominator's stream): ``plan.main_stream``; else, with a dominator
  regex, the stream where matching kernels spent the most time; else the
  rank's main stream (most busy time).
- side: ``plan.side_stream``; else the stream other than main where the side
  ops spent the most time.

Occurrences (a model repeats its layers; one side window and one dominator per
layer). Each side window is paired with its OWN dominator instance, never with
every dominator and never with one global window:

- With a dominator regex: one occurrence per dominator instance (a layer;
  matches on the main stream, by start). A side op belongs to the layer whose
  dominator it overlaps, else to the nearest dominator in time
  (:func:`overlap_check.measure.layering.assign_layers`), so side work that ran before
  or after its dominator (fake parallelism) is still paired with it and a side
  window never spans two layers. A dominator with no side op forms an
  occurrence with no side ops (``no-side``): reported, not judged. Each layer is
  flagged when its side work ended after its join had started, and a sample
  when the side stream runs a layer behind (layering.join_not_waited, lag).
- Without a dominator regex: side ops (sorted by start) are cut into clusters
  wherever a whole main-stream kernel fits in the gap between one side op's
  start and the end of all side ops before it. Each cluster is an occurrence;
  its dominator is the longest main-stream kernel that ends after the cluster
  starts and no later than the next cluster starts (so a big op that runs
  after the side work, the fake case, is still the one judged).

Per occurrence (docs/method.md): ``side_window = [min start, max end]`` of its side
ops, ``main_window`` = its dominator; ``overlap_pct = overlap /
min(len(side_window), len(main_window))``. Beside it the busy-time figure
``busy_overlap_pct = |busy(side ops) ∩ dominator| / min(busy(side ops),
len(dominator))``. A run's figure is the median over its judged occurrences.

Side ops (selection.side_expr): the compute kernels for which ``side``, ``op_type``
and ``side_stream`` hold, each where given; without ``side_stream`` the matches on
the main stream are main work (:func:`on_main`).

Placement (3a): the ops the name / type regexes name off the side stream (without
``side_stream``: on the main stream) are named with their counts per op type
(``SwiGlu x20 on stream 2``); the plan is ``not-split`` when an op type of them never
ran on the side stream, else it is judged on the side ops that moved.

Barrier search (3b, :func:`barrier_instances`): for each fake occurrence, the first
main-stream kernel that starts at or after the side window's end and before the
dominator starts, after an idle gap on the main stream. :mod:`overlap_check.measure.barriers`
runs it on hidden_pct, names the whole chain up to the dominator, and adds the other
way (the side stream waited for a main op). Candidates are counted by name over the
warm samples, most frequent first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.judge.verdict import decide, diagnose, diagnosis
from overlap_check.measure.hiding import (
    Hidden,
    Siblings,
    combined,
    hidden_fraction,
    sibling_finding,
    verdict_counts,
)
from overlap_check.measure.layering import assign_layers, join_not_waited, lag, task_layers
from overlap_check.measure.placement import stayed, stayed_phrases
from overlap_check.measure.runs import Sample, spread
from overlap_check.model import (
    FAKE_SHARE,
    MAX_LISTED_LAYERS,
    MODULE_SCOPE,
    BarrierCandidate,
    Evidence,
    ExecutionPath,
    Occurrence,
    Plan,
    PlanResult,
    PlanRun,
    Thresholds,
    Verdict,
    deciding_occurrence,
    intervals,
)
from overlap_check.model.intervals import I64
from overlap_check.model.selection import SIDE_KIND_WORDS, dominator_expr, module_scope, side_expr
from overlap_check.model.table import is_compute
from overlap_check.model.verdicts import bands, figure_text, label

F64 = npt.NDArray[np.float64]
_EMPTY: I64 = np.zeros(0, dtype=np.int64)
STATUS = ("ok", "no-side", "no-dominator", "zero-length")
OK, NO_SIDE, NO_DOMINATOR, ZERO_LENGTH = range(4)
WORST = 3
MAX_BARRIERS = 5


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
    # per occurrence, the layer its side ops' module instance gives (a module: selection;
    # instance N is layer N + 1; -1: none); empty: the occurrence number is the layer
    side_layer: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # per occurrence, side time that only sibling side streams covered while the main path
    # idled (with_hidden's ``anywhere``); empty: not measured
    sibling_ns: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # whether a layer has a join (a named dominator, or a compute plan's clusters): no
    # join flag, lag, join wait or side tail without one
    joined: bool = True

    def with_hidden(
        self,
        busy_without: Callable[[int], tuple[I64, I64]],
        anywhere: Callable[[int], tuple[I64, I64]] | None = None,
    ) -> Occurrences:
        """These occurrences with their hidden side time (docs/hidden-fraction.md): each side
        op against ``busy_without(s)``, the merged busy time that hides work of stream ``s``
        (hiding.main_path_busy, or hiding.other_stream_busy for a communication or copy
        plan). ``anywhere(s)``: the busy time of every other stream (hiding.anywhere_busy);
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


def _i64(frame: pl.DataFrame, column: str) -> I64:
    return frame.get_column(column).to_numpy().astype(np.int64, copy=False)


def tag(kernels: pl.DataFrame, plan: Plan, main: int | None = None) -> pl.DataFrame:
    """The columns a plan needs, with ``_side`` and ``_dom`` (dominator regex, any stream).

    ``kernels`` holds compute kernels only (and, for a communication or copy plan, the
    capture's other rows too); which kernels the plan names is
    :mod:`overlap_check.model.selection`'s (the core checks use the same definition).
    ``main``: the main stream, when known: a plan without ``side_stream`` then leaves
    the matches on it out of the side ops (they are main work, named by placement).
    """
    return on_main(_tagged(kernels, plan), plan, main)


def on_main(tagged: pl.DataFrame, plan: Plan, main: int | None) -> pl.DataFrame:
    """A :func:`tag` table (tagged without a main stream) for main stream ``main``."""
    if plan.side_stream is not None or main is None:
        return tagged
    # a communication task has no stream: never on the main one
    return tagged.with_columns(pl.col("_side") & (pl.col("stream_id") != main).fill_null(True))


def _tagged(kernels: pl.DataFrame, plan: Plan) -> pl.DataFrame:
    is_side = side_expr(plan, kernels)
    is_dom = dominator_expr(plan, kernels)
    if plan.side_kind != "compute":  # the sample holds every row: keep compute and side ones
        kernels = kernels.filter(is_compute(kernels.columns) | is_side)
    types = ["op_type"] if "op_type" in kernels.columns else []  # barrier names (barriers.py)
    module = module_scope(plan.side)
    scope = f"{MODULE_SCOPE}{module}"
    layer = [pl.col(scope).alias("instance")] if module and scope in kernels.columns else []
    return kernels.with_columns(is_side.alias("_side")).select(
        "stream_id",
        "start_ns",
        "end_ns",
        "name",
        *types,
        "_side",
        (is_dom & ~pl.col("_side")).alias("_dom"),
        *layer,
    )


def _by_start(frame: pl.DataFrame) -> pl.DataFrame:
    # Kernel tables come in time order; sort only when they do not.
    return frame if frame.get_column("start_ns").is_sorted() else frame.sort("start_ns")


def main_kernels(tagged: pl.DataFrame, main: int | None) -> pl.DataFrame:
    """Kernels on the main stream that are not side ops, by start time (none without a main)."""
    if main is None:
        return tagged.clear()
    return _by_start(tagged.filter((pl.col("stream_id") == main) & ~pl.col("_side")))


def _dominators_by_layer(main: pl.DataFrame, ss: I64, se: I64) -> tuple[I64, I64]:
    """The layer of each side op (layering.assign_layers), and the main-kernel row of each
    dominator instance (by start; main kernels come by start)."""
    rows = np.flatnonzero(main.get_column("_dom").to_numpy())
    ms, me = _i64(main, "start_ns"), _i64(main, "end_ns")
    return assign_layers(ss, se, ms[rows], me[rows]), rows


def _dominators_by_cluster(main: pl.DataFrame, ss: I64, se: I64) -> tuple[I64, I64]:
    """Clusters of side ops split by whole main-stream kernels, and the main-kernel row of
    each cluster's longest main kernel (-1: none)."""
    ms, me = _i64(main, "start_ns"), _i64(main, "end_ns")
    before_end = np.maximum.accumulate(se)[:-1]  # end of all side ops before op j
    nxt = np.searchsorted(ms, before_end, side="left")  # first main kernel starting after them
    fits = np.zeros(before_end.size, dtype=bool)
    inside = nxt < ms.size
    fits[inside] = me[nxt[inside]] <= ss[1:][inside]
    occ = np.concatenate([[0], np.cumsum(fits)]).astype(np.int64)
    cluster_start = ss[np.concatenate([[0], np.flatnonzero(fits) + 1])]
    owner = np.searchsorted(cluster_start, me, side="left") - 1
    rows = np.full(cluster_start.size, -1, dtype=np.int64)
    kept = np.flatnonzero(owner >= 0)
    if kept.size:
        groups, longest = _longest_per_group(owner[kept], me[kept] - ms[kept])
        rows[groups] = kept[longest]
    return occ, rows


def _longest_per_group(group: I64, length: I64) -> tuple[I64, I64]:
    """The groups present and, for each, the position of its longest item (first on ties)."""
    if not bool(np.all(group[1:] >= group[:-1])):  # only if main kernels overlap each other
        order = np.lexsort((-length, group))
        first = order[np.concatenate([[True], group[order][1:] != group[order][:-1]])]
        return group[first], first
    starts = np.flatnonzero(np.concatenate([[True], group[1:] != group[:-1]]))
    sizes = np.diff(np.concatenate([starts, [group.size]]))
    is_max = length == np.repeat(np.maximum.reduceat(length, starts), sizes)
    hits = np.flatnonzero(is_max)
    first = hits[np.concatenate([[True], group[hits][1:] != group[hits][:-1]])]
    return group[first], first


def occurrences(
    tagged: pl.DataFrame, plan: Plan, streams: PlanStreams, main: pl.DataFrame | None = None
) -> Occurrences:
    """Pair the side ops of one sample with their own dominator instances and measure each pair.

    ``main``: the sample's main_kernels(), when the caller already has them.
    """
    side = _by_start(tagged.filter(pl.col("_side")))
    # a communication task has no stream: -1, hidden under every compute stream
    sid = _i64(side.with_columns(pl.col("stream_id").fill_null(-1)), "stream_id")
    ss, se = _i64(side, "start_ns"), _i64(side, "end_ns")
    if main is None:
        main = main_kernels(tagged, streams.main)
    if plan.dominator is not None:
        occ, rows = _dominators_by_layer(main, ss, se)
        if rows.size == 0:  # no dominator on this stream: one unpaired group, not judged
            occ = np.zeros(ss.size, dtype=np.int64)
            rows = np.full(1 if ss.size else 0, -1, dtype=np.int64)
        else:  # each layer's ops together, by start (a long op can belong to a later layer)
            order = np.lexsort((ss, occ))
            ss, se, sid, occ = ss[order], se[order], sid[order], occ[order]
    elif ss.size and plan.side_kind != "compute":  # tasks follow the main stream's layers
        names = main.get_column("name")
        occ, rows = task_layers(names, _i64(main, "start_ns"), _i64(main, "end_ns"), ss, se)
    elif ss.size:
        occ, rows = _dominators_by_cluster(main, ss, se)
    else:
        occ, rows = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    has_dom = rows >= 0
    ds = np.zeros(rows.size, dtype=np.int64)
    de = np.zeros(rows.size, dtype=np.int64)
    ds[has_dom] = _i64(main, "start_ns")[rows[has_dom]]
    de[has_dom] = _i64(main, "end_ns")[rows[has_dom]]
    measured = measure_occurrences(ss, se, occ, rows.size, ds, de, has_dom)
    if "instance" in side.columns:  # a module: selection: the module instance is the layer
        measured = replace(measured, side_layer=_module_layers(side, occ, rows.size))
    # a join is the main op that consumes the side work of a named dominator's layer:
    # the layers a communication or copy plan follows without one have none
    joined = plan.dominator is not None or plan.side_kind == "compute"
    joins = join_not_waited(
        _i64(main, "start_ns"),
        _i64(main, "end_ns"),
        de,
        measured.side_start,
        measured.side_end,
        (measured.side_count > 0) & has_dom & joined,
    )
    return replace(
        measured,
        dom_row=rows,
        main_names=main.get_column("name"),
        side_ops=(ss, se, occ, sid),  # in the order of ss (the layers' order)
        join_not_waited=joins,
        joined=joined,
    )


def _module_layers(side: pl.DataFrame, occ: I64, n_occ: int) -> I64:
    """Per occurrence, the lowest module instance of its side ops + 1 (-1: none known)."""
    instance = side.get_column("instance").fill_null(-1).to_numpy().astype(np.int64)
    none = np.iinfo(np.int64).max
    first = np.full(n_occ, none, dtype=np.int64)
    known = instance >= 0
    np.minimum.at(first, occ[known], instance[known] + 1)
    return np.where(first == none, -1, first)


def measure_occurrences(
    ss: I64,
    se: I64,
    occ: I64,
    n_occ: int,
    ds: I64,
    de: I64,
    has_dom: npt.NDArray[np.bool_],
) -> Occurrences:
    """The recipes' window figures and the busy-time figure of each occurrence.

    ``ss``/``se``: side ops, each occurrence's ops together and by start; ``occ``: the
    occurrence of each; ``ds``/``de``/``has_dom``: per occurrence, its dominator.
    """
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


def plan_run(sample: Sample, occ: Occurrences, thresholds: Thresholds) -> PlanRun:
    """The per-run (per-sample) figures: medians over the judged occurrences, worst ones named."""
    judged = np.flatnonzero(occ.status == OK)
    pct = occ.pct[judged]
    busy = occ.busy_pct[judged]
    busy = busy[~np.isnan(busy)]
    hidden = occ.hidden_pct()[judged]
    hidden = hidden[~np.isnan(hidden)]
    counts = verdict_counts(hidden, thresholds)
    # the worst occurrences by the figure the verdict follows (hidden_pct), then overlap_pct
    order = np.lexsort((pct, np.nan_to_num(occ.hidden_pct()[judged], nan=np.inf)))
    worst = judged[order[:WORST]]
    unjudged = np.flatnonzero(occ.status != OK)[:WORST]
    return PlanRun(
        run=sample.run,
        warm=sample.warm,
        overlap_pct=float(np.median(pct)) if pct.size else None,
        occurrences=int(occ.status.size),
        busy_overlap_pct=float(np.median(busy)) if busy.size else None,
        judged=int(judged.size),
        worst=occ.listed(worst, thresholds),
        sample=sample.label,
        step=sample.step,
        side_ops=int(occ.side_count.sum()),
        no_side=int((occ.status == NO_SIDE).sum()),
        no_dominator=int((occ.status == NO_DOMINATOR).sum()),
        zero_length=int((occ.status == ZERO_LENGTH).sum()),
        fake=counts["fake"],  # by hidden_pct, the figure the verdict follows
        unpaired=occ.listed(unjudged, thresholds),
        hidden_pct=float(np.median(hidden)) if hidden.size else None,
        hidden_counts=(counts["real"], counts["partial"], counts["fake"]),
        layers=occ.listed(_listed_layers(occ, worst), thresholds),
        join_not_waited=int(occ.join_not_waited.sum()),
        lag=_lag(occ),
    )


def _listed_layers(occ: Occurrences, worst: I64) -> I64:
    """The layers a sample's table lists: all of them up to MAX_LISTED_LAYERS; beyond, the
    first MAX_LISTED_LAYERS, the worst ones and those whose join did not wait (at most
    MAX_LISTED_LAYERS of them), in layer order."""
    n = occ.status.size
    if n <= MAX_LISTED_LAYERS:
        return np.arange(n, dtype=np.int64)
    not_waited = np.flatnonzero(occ.join_not_waited)[:MAX_LISTED_LAYERS]
    listed: I64 = np.unique(np.concatenate([np.arange(MAX_LISTED_LAYERS), worst, not_waited]))
    return listed


def _lag(occ: Occurrences) -> bool:
    """layering.lag over the layers that have a dominator (none: no layers, no lag)."""
    layered = occ.dom_row >= 0
    if not layered.all() or not layered.size or not occ.joined:
        return False
    return lag(occ.side_count, occ.dom_end, occ.side_ops[0])


def barrier_instances(
    main: pl.DataFrame, occ: Occurrences, thresholds: Thresholds, run: int
) -> pl.DataFrame:
    """For each fake occurrence, the first main-stream kernel after the side window, ahead of the
    dominator, that follows an idle gap on the main stream."""
    fake = np.flatnonzero((occ.status == OK) & (occ.pct <= thresholds.fake))
    # the side work that ended by the dominator's start (half-open: at its start counts)
    ends = _ended_before_dominator(occ)
    fake = fake[ends[fake] >= 0]
    ms, me = _i64(main, "start_ns"), _i64(main, "end_ns")
    if fake.size == 0 or ms.size == 0:
        return _BARRIER_EMPTY
    prev_end = np.concatenate([[ms[0]], np.maximum.accumulate(me)[:-1]])
    gap = np.maximum(0, ms - prev_end)
    # next_gap[i]: the first kernel at or after i that follows an idle gap (n: none).
    marks = np.where(gap > 0, np.arange(ms.size), ms.size)
    next_gap = np.concatenate([np.minimum.accumulate(marks[::-1])[::-1], [ms.size]])
    cand = next_gap[np.searchsorted(ms, ends[fake], side="left")]
    found = cand < ms.size
    # ahead of the dominator, or the dominator itself when it waited for the side work
    found[found] = ms[cand[found]] <= occ.dom_start[fake[found]]
    idx, k = cand[found], fake[found]
    return pl.DataFrame(
        {
            "name": main.get_column("name").gather(idx),
            "start_ns": ms[idx],
            "gap_ns": gap[idx],
            "after_ns": ms[idx] - ends[k],
            "covers": prev_end[idx] <= occ.side_start[k],
            "run": np.full(idx.size, run, dtype=np.int64),
            "occurrence": k + 1,
        },
        schema=_BARRIER_SCHEMA,
    )


def _ended_before_dominator(occ: Occurrences) -> I64:
    """Per occurrence, the last end of its side ops that ended at or before its dominator
    started (-1: none did): the side work the main stream can have waited for."""
    _, se, group, _ = occ.side_ops
    if not group.size:  # measured without the ops (layering.layer_occurrences): windows
        ended = (occ.side_count > 0) & (occ.side_end <= occ.dom_start)
        return np.where(ended, occ.side_end, -1).astype(np.int64)
    out = np.full(occ.status.size, -1, dtype=np.int64)
    if group.size:
        early = se <= occ.dom_start[group]
        np.maximum.at(out, group[early], se[early])
    return out


_BARRIER_SCHEMA = {
    "name": pl.String,
    "start_ns": pl.Int64,
    "gap_ns": pl.Int64,
    "after_ns": pl.Int64,
    "covers": pl.Boolean,
    "run": pl.Int64,
    "occurrence": pl.Int64,
}
_BARRIER_EMPTY = pl.DataFrame(schema=_BARRIER_SCHEMA)
# barriers.instances: both ways, with the chain (docs/hidden-fraction.md)
BARRIER_SCHEMA = {
    **_BARRIER_SCHEMA,
    "chain": pl.String,
    "waited": pl.String,
    "lag_ns": pl.Int64,
}


def rank_barriers(instances: pl.DataFrame, stream: int | None) -> tuple[BarrierCandidate, ...]:
    """Candidates by name: most fake occurrences first, then the shortest delay after the side
    window."""
    if instances.is_empty() or stream is None:
        return ()
    ranked = (
        instances.group_by("name", maintain_order=True)
        .agg(
            pl.len().alias("count"),
            pl.col("after_ns").median().alias("delay"),
            pl.all().first(),  # instances come in (run, occurrence) order
        )
        .sort(["count", "delay", "name"], descending=[True, False, False])
        .head(MAX_BARRIERS)
    )
    return tuple(
        BarrierCandidate(
            name=row["name"],
            stream_id=stream,
            start_ns=row["start_ns"],
            gap_ns=row["gap_ns"],
            run=row["run"],
            occurrence=row["occurrence"],
            after_side_end_ns=row["after_ns"],
            occurrences=row["count"],
            covers_side_window=row["covers"],
            waited=row.get("waited") or "main",
            chain=row.get("chain") or "",
            lag_ns=row.get("lag_ns") or 0,
        )
        for row in ranked.iter_rows(named=True)
    )


def placement(
    plan: Plan, streams: PlanStreams, matched: Sequence[pl.DataFrame]
) -> tuple[int, tuple[str, ...], bool]:
    """Side ops judged, the ops that stayed (``SwiGlu x20 on stream 2``), and whether the
    logical split failed: some op the plan names never left the main stream.

    ``matched``: selection.label_counts per sample. Stayed: with ``side_stream`` the
    matches off it (all of them when it is the main stream), else the matches on the main
    stream. The rest moved and is judged.
    """
    counts = pl.concat(
        [m.with_columns(pl.lit(i, pl.Int64).alias("capture")) for i, m in enumerate(matched)]
    )
    if plan.side_stream is not None and plan.side_stream == streams.main:
        off: pl.Expr = pl.lit(True)  # the side stream is the dominator's: nothing moved
    elif plan.side_stream is not None:
        off = pl.col("stream_id") != plan.side_stream
    elif streams.main is not None:
        off = pl.col("stream_id") == streams.main
    else:
        off = pl.lit(False)
    off = off.fill_null(False)  # a communication task has no stream: it is a side op
    rows = stayed(counts, off, scoped=module_scope(plan.side) is not None)
    moved = int(counts.filter(~off).get_column("count").sum())
    failed = bool((rows.get_column("moved") == 0).any())
    return moved, tuple(stayed_phrases(rows)), failed


def _selection_text(plan: Plan) -> str:
    parts = [f"the side regex {plan.side!r}"] if plan.side is not None else []
    if plan.op_type is not None:
        parts.append(f"the op_type regex {plan.op_type!r}")
    where = f" on side stream {plan.side_stream}" if plan.side_stream is not None else ""
    return f"no compute kernel matched {' and '.join(parts)}{where}"


def _no_evidence_reason(
    plan: Plan, streams: PlanStreams, side_total: int, runs: Sequence[PlanRun]
) -> str:
    if side_total == 0:
        what = SIDE_KIND_WORDS[plan.side_kind]
        if plan.side_kind != "compute" and plan.side is not None:
            where = f" on stream {plan.side_stream}" if plan.side_stream is not None else ""
            return f"no {what}{where} matched the side regex {plan.side!r}"
        if plan.side is not None or plan.op_type is not None:
            return _selection_text(plan)
        if plan.side_stream is not None:
            return f"no {what} ran on side stream {plan.side_stream}"
        return "the plan names no side ops (give side, op_type or side_stream)"
    if streams.main is None:
        return f"no compute kernel matched the dominator regex {plan.dominator!r}"
    if not any(r.judged for r in runs if r.warm):
        where = f"on stream {streams.main}"
        if plan.dominator is not None and not any(r.no_side or r.judged for r in runs):
            return f"no compute kernel {where} matched the dominator regex {plan.dominator!r}"
        return f"no occurrence in a warm run paired side ops with a dominator {where}"
    return "nothing to judge"


def plan_result(
    plan: Plan,
    rank: int | None,
    streams: PlanStreams,
    matched: Sequence[pl.DataFrame],
    samples: Sequence[tuple[PlanRun, pl.DataFrame]],
    thresholds: Thresholds,
    *,
    provisional: bool,
    contention_ns: int = 0,
    fake_share: float = FAKE_SHARE,
    path: ExecutionPath | None = None,
    causes: Sequence[Evidence] = (),
    siblings: Sequence[Siblings | None] = (),
) -> PlanResult:
    """The plan's result for one rank: warm median, verdict, placement, barriers, diagnosis.

    ``samples``: per sample (run or step), in order, its plan_run (with ``run``, ``warm``
    and ``sample`` set) and its barrier_instances (their ``run`` column is set here);
    ``matched``: as for placement. The verdict follows the warm median of hidden_pct
    (of the side ops that moved), at best partial when more than ``fake_share`` of the
    judged warm occurrences are fake; not-split when an op the plan names never moved.
    ``path``: the execution path the fix steps are written for; ``causes``: the measured
    3c causes (contention, cube saturated) the diagnosis lists at partial and real.
    ``siblings``: per sample, the side time only sibling side streams covered
    (hiding.siblings), named in a finding when it matters.
    """
    runs = [run for run, _ in samples]
    unit = "steps" if runs and runs[0].sample is not None else "runs"
    side_total, stayed_ops, split_failed = placement(plan, streams, matched)
    evidence = stayed_ops if split_failed else ()
    warm = [run.warm for run in runs]
    figure = spread([run.overlap_pct for run in runs], warm)
    busy = spread([run.busy_overlap_pct for run in runs], warm)
    hidden = spread([run.hidden_pct for run in runs], warm)
    warm_counts = [(r.sample or f"run {r.run}", r.hidden_counts) for r in runs if r.warm]
    verdict, decided_by, figure_band, fake_runs = decide(
        hidden.median, warm_counts, thresholds, fake_share
    )
    verdict_counts = (
        sum(c[0] for _, c in warm_counts),
        sum(c[1] for _, c in warm_counts),
        sum(c[2] for _, c in warm_counts),
    )
    if evidence:
        verdict, decided_by = "not-split", "not-split"
    if streams.main is None or (side_total == 0 and not split_failed):
        verdict, decided_by = "no-evidence", "no-evidence"
    fake_occurrences = sum(run.fake for run in runs if run.warm)
    instances = [
        found.with_columns(pl.lit(run.run, pl.Int64).alias("run"))
        for run, found in samples
        if run.warm
    ]
    barriers = rank_barriers(pl.concat(instances), streams.main) if instances else ()
    # the figures are of the side ops that moved; placement names the ones that stayed
    under = "the main path" if plan.side_kind == "compute" else "compute on other streams"
    notes = _band_note(verdict, figure.median, hidden.median, runs, thresholds, under)
    no_evidence = _no_evidence_reason(plan, streams, side_total, runs)
    band = [Evidence("band-mismatch", notes.removeprefix("; "))] if notes else []
    where = f" in {len(runs)} {unit}" if len(runs) > 1 else ""
    stayed_text = f"stayed off the side stream{where}: {', '.join(stayed_ops)}"
    if stayed_ops and verdict not in ("not-split", "no-evidence"):
        notes += f"; {stayed_text}; the figures are of the {side_total} side ops that moved"
    elif verdict == "not-split" and side_total:
        notes += f"; the figures are of the {side_total} side ops that moved"
    return PlanResult(
        name=plan.name,
        rank=rank,
        verdict=verdict,
        overlap_pct=figure.median,
        provisional=provisional,
        side_stream=streams.side,
        main_stream=streams.main,
        busy_overlap_pct=busy.median,
        per_run=tuple(runs),
        runs_used=figure.used,
        overlap_min=figure.minimum,
        overlap_max=figure.maximum,
        barrier_candidates=barriers,
        placement=evidence,
        diagnosis=diagnosis(
            verdict,
            hidden.median,
            thresholds,
            placement=(stayed_text,) if evidence else (),
            barriers=barriers,
            fake_occurrences=fake_occurrences,
            no_evidence=no_evidence,
            contention_ns=contention_ns,
            figure="hidden_pct",
            decided_by=decided_by,
            counts=verdict_counts,
            fake_runs=fake_runs,
            fake_share=fake_share,
        )
        + notes,
        diagnosed=diagnose(
            verdict,
            path,
            barriers=barriers,
            fake_occurrences=fake_occurrences,
            evidence=[*causes, *band],
            placement=evidence,
            no_evidence=no_evidence,
            decided_by=decided_by,
            band=figure_band,
            fake_runs=fake_runs,
        ),
        fake_occurrences=fake_occurrences,
        dominator=plan.dominator,
        side=plan.side,
        config_file=plan.config_file,
        config_line=plan.config_line,
        hidden_pct=hidden.median,
        verdict_counts=verdict_counts,
        # a missing wait is a compute plan's with a named dominator: a communication or copy
        # task that runs on into the next main op is the pipelining these plans are for
        # (two-batch overlap), and without a named dominator there is no join to judge, only
        # a guessed one (issue 23.7)
        findings=(
            missing_waits([r for r in runs if r.warm], unit)
            if plan.side_kind == "compute" and plan.dominator is not None
            else ()
        )
        + _sibling_finding(siblings, warm, thresholds),
        side_kind=plan.side_kind,
        stayed=stayed_ops,
        op_type=plan.op_type,
    )


def _sibling_finding(
    siblings: Sequence[Siblings | None], warm: Sequence[bool], thresholds: Thresholds
) -> tuple[str, ...]:
    pool = [s for s, w in zip(siblings, warm, strict=False) if w]
    found = sibling_finding(pool, thresholds) if pool else None
    return () if found is None else (found,)


def missing_waits(warm: Sequence[PlanRun], unit: str) -> tuple[str, ...]:
    """The signs of a missing wait over the warm samples (docs/hidden-fraction.md), one
    sentence each: layers whose join did not wait, samples whose side stream lags."""
    found: list[str] = []
    layers = sum(r.judged + r.no_side for r in warm)
    joins = [(r, o) for r in warm for o in r.layers if o.join_not_waited]
    if joins:  # counted in full, named from the listed layers (MAX_LISTED_LAYERS)
        run, first = joins[0]
        where = run.sample or f"run {run.run}"
        not_waited = sum(r.join_not_waited for r in warm)
        found.append(
            f"join did not wait: in {not_waited} of {layers} warm layers the side work ended "
            f"after the next main-stream op after the dominator had started (first: {where}, "
            f"layer {first.layer}); make that op wait for the side stream"
        )
    lagging = sum(r.lag for r in warm)
    if lagging:
        found.append(
            f"side stream a layer behind in {lagging} of {len(warm)} warm {unit}: the first "
            "dominator has no side work and side work runs after the last one, so each "
            "layer's side work runs under the next layer (a missing wait)"
        )
    return tuple(found)


def _us(ns: int | None) -> str:
    return "n/a" if ns is None else f"{ns / 1000:.0f}"


def _band_note(
    verdict: Verdict,
    overlap: float | None,
    hidden: float | None,
    runs: Sequence[PlanRun],
    thresholds: Thresholds,
    under: str,
) -> str:
    """Why the window figure and the hidden fraction fall in different bands ("" when they
    agree), told on the deciding occurrence (the warm runs' worst by hidden_pct)."""
    if verdict in ("not-split", "no-evidence") or overlap is None or hidden is None:
        return ""
    window, hid = label(overlap, thresholds), label(hidden, thresholds)
    if window == hid:
        return ""
    text = (
        f"; overlap_pct {figure_text(overlap, thresholds)} says {window} but hidden_pct "
        f"{figure_text(hidden, thresholds)} says {hid}"
    )
    deciding = deciding_occurrence(runs)
    if deciding is None:
        return text
    occ = deciding[1]
    spans = (
        occ.side_start_ns is not None
        and occ.dom_start_ns is not None
        and occ.side_end_ns is not None
        and occ.dom_end_ns is not None
        and occ.side_start_ns <= occ.dom_start_ns
        and occ.side_end_ns >= occ.dom_end_ns
    )
    where = "the side window spans the dominator, but " if spans else ""
    shown = occ.hidden_ns if occ.hidden_ns is not None else 0
    busy = occ.side_busy_ns if occ.side_busy_ns is not None else 0
    under_dominator = round((occ.dominator_pct or 0.0) * busy)
    if hid != "real":
        return (
            f"{text}: {where}only {_us(shown)} of {_us(busy)} µs of side work ran under "
            f"{under} (occurrence #{occ.index})"
        )
    if under_dominator >= shown:  # every hidden ns ran under the dominator itself
        return (
            f"{text}: {_us(shown)} of {_us(busy)} µs of side work ran under the named "
            f"dominator itself; the window figure also counts the idle gaps of the side window "
            f"(occurrence #{occ.index})"
        )
    part = "none" if under_dominator == 0 else f"{_us(under_dominator)} µs"
    return (
        f"{text}: {_us(shown)} of {_us(busy)} µs of side work ran under {under}, "
        f"{part} of it under the named dominator (occurrence #{occ.index})"
    )
