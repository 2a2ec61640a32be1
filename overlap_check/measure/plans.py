"""Plans, per sample: each side window paired with its own dominator instance and measured, the
per-run figures, and the first step of the barrier search (3b).

One capture at a time (:mod:`overlap_check.measure.figures` calls :func:`tag`,
:func:`main_kernels`, :func:`occurrences`, :func:`plan_run` and :func:`barrier_instances`); the
per-rank judgement is judge/'s. The rules: docs/method.md, "Which kernels a plan names",
"Occurrences", "overlap_pct" and "Barrier candidates (3b)"."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from overlap_check.measure.hiding import verdict_counts
from overlap_check.measure.layering import assign_layers, join_not_waited, lag, task_layers
from overlap_check.measure.occurrences import (
    NO_DOMINATOR,
    NO_SIDE,
    OK,
    WORST,
    ZERO_LENGTH,
    Occurrences,
    PlanStreams,
    measure_occurrences,
)
from overlap_check.measure.runs import Sample
from overlap_check.model import MAX_LISTED_LAYERS, MODULE_SCOPE, Plan, PlanRun, Thresholds
from overlap_check.model.intervals import I64
from overlap_check.model.selection import (
    dominator_expr,
    judges_races,
    module_scope,
    restricted_side_expr,
    side_expr,
)
from overlap_check.model.table import i64_column, is_compute


def tag(kernels: pl.DataFrame, plan: Plan, main: int | None = None) -> pl.DataFrame:
    """The columns a plan needs, with ``_side`` and ``_dom`` (dominator regex, any stream)
    (model/selection.py). ``kernels``: compute kernels (for a communication or copy plan,
    every row); ``main``: the main stream, when known (:func:`on_main`)."""
    return on_main(_tagged(kernels, plan), plan, main)


def on_main(tagged: pl.DataFrame, plan: Plan, main: int | None) -> pl.DataFrame:
    """A :func:`tag` table (tagged without a main stream) for main stream ``main``."""
    if plan.side_stream is not None or main is None:
        return tagged
    # a communication task has no stream: never on the main one
    return tagged.with_columns(pl.col("_side") & (pl.col("stream_id") != main).fill_null(True))


def _tagged(kernels: pl.DataFrame, plan: Plan) -> pl.DataFrame:
    # _named: what placement counts (placement.layered_counts): a compute plan's name /
    # type matches on any stream, of which those on side_stream are its side ops
    chosen = side_expr(plan, kernels)
    is_side = pl.col("_named")
    if plan.side_kind != "compute":  # the sample holds every row: keep compute and side ones
        kernels = kernels.filter(is_compute(kernels.columns) | chosen)
    elif plan.side_stream is not None and (plan.side is not None or plan.op_type is not None):
        chosen = restricted_side_expr(plan.side, None, plan.op_type, kernels)
        is_side = is_side & (pl.col("stream_id") == plan.side_stream).fill_null(False)
    types = ["op_type"] if "op_type" in kernels.columns else []  # barrier names (barriers.py)
    module = module_scope(plan.side)
    scope = f"{MODULE_SCOPE}{module}"
    layer = [pl.col(scope).alias("instance")] if module and scope in kernels.columns else []
    return kernels.with_columns(chosen.alias("_named")).select(
        "stream_id",
        "start_ns",
        "end_ns",
        "name",
        *types,
        is_side.alias("_side"),
        (dominator_expr(plan, kernels) & ~is_side).alias("_dom"),
        "_named",
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


def _dominators_by_cluster(ms: I64, me: I64, ss: I64, se: I64) -> tuple[I64, I64]:
    """Clusters of side ops split by whole main-stream kernels (``ms``, ``me``: by start),
    and the main-kernel row of each cluster's longest main kernel (-1: none)."""
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
    """Pair the side ops of one sample with their own dominator instances and measure each
    pair. ``main``: the sample's main_kernels(), when the caller already has them."""
    side = _by_start(tagged.filter(pl.col("_side")))
    # a communication task has no stream: -1, hidden under every compute stream
    sid = i64_column(side.with_columns(pl.col("stream_id").fill_null(-1)), "stream_id")
    ss, se = i64_column(side, "start_ns"), i64_column(side, "end_ns")
    if main is None:
        main = main_kernels(tagged, streams.main)
    ms, me = i64_column(main, "start_ns"), i64_column(main, "end_ns")
    if plan.dominator is not None:
        # the layer of each side op, and the main-kernel row of each dominator instance
        rows = np.flatnonzero(main.get_column("_dom").to_numpy())
        occ = assign_layers(ss, se, ms[rows], me[rows])
        if rows.size == 0:  # no dominator on this stream: one unpaired group, not judged
            occ = np.zeros(ss.size, dtype=np.int64)
            rows = np.full(1 if ss.size else 0, -1, dtype=np.int64)
        else:  # each layer's ops together, by start (a long op can belong to a later layer)
            order = np.lexsort((ss, occ))
            ss, se, sid, occ = ss[order], se[order], sid[order], occ[order]
    elif ss.size and plan.side_kind != "compute":  # tasks follow the main stream's layers
        occ, rows = task_layers(main.get_column("name"), ms, me, ss, se)
    elif ss.size:
        occ, rows = _dominators_by_cluster(ms, me, ss, se)
    else:
        occ, rows = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    has_dom = rows >= 0
    ds = np.zeros(rows.size, dtype=np.int64)
    de = np.zeros(rows.size, dtype=np.int64)
    ds[has_dom] = ms[rows[has_dom]]
    de[has_dom] = me[rows[has_dom]]
    measured = measure_occurrences(ss, se, occ, rows.size, ds, de, has_dom)
    if "instance" in side.columns:  # a module: selection: the module instance is the layer
        measured = replace(measured, side_layer=_module_layers(side, occ, rows.size))
    # a join is the main op that consumes the side work of a named dominator's layer:
    # the layers a communication or copy plan follows without one have none
    joined = plan.dominator is not None or plan.side_kind == "compute"
    checked = (measured.side_count > 0) & has_dom & judges_races(plan)
    joins = join_not_waited(ms, me, de, measured.side_start, measured.side_end, checked)
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
    ms, me = i64_column(main, "start_ns"), i64_column(main, "end_ns")
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
    if not group.size:  # measured without the ops (tests' layer_occurrences): windows
        ended = (occ.side_count > 0) & (occ.side_end <= occ.dom_start)
        return np.where(ended, occ.side_end, -1).astype(np.int64)
    out = np.full(occ.status.size, -1, dtype=np.int64)
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
BARRIER_SCHEMA = {**_BARRIER_SCHEMA, "chain": pl.String, "waited": pl.String, "lag_ns": pl.Int64}
