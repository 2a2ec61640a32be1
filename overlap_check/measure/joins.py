"""Layer walls and holes after the join: what each layer of a sample cost in wall time
(layer wall, dominator, side total, join wait, side tail, tail operators), the sample's
medians and step walls, and per rank the warm medians (:func:`plan_walls`).

The figures: docs/gain.md, "The figures of one layer". The occurrences come from
:func:`overlap_check.measure.plans.occurrences`, one capture at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import polars as pl

from overlap_check.measure.runs import spread
from overlap_check.model import Evidence, LayerFigures, PlanRun, PlanWalls, TailOp, intervals
from overlap_check.model.intervals import I64
from overlap_check.model.table import i64_column

if TYPE_CHECKING:
    from overlap_check.measure.occurrences import Occurrences


# Format, layout and fill operator types that add main-stream time after the join without
# computing anything new: a 3c cause (docs/advice.md; matching: docs/gain.md, "tail ops").
TAIL_OPERATORS: tuple[str, ...] = (
    "TransData",
    "TransposeD",
    "Transpose",
    "BroadcastTo",
    "MemSet",
    "Fills",
    "ZerosLike",
    "TensorMove",
    "ViewCopy",
    "AsStrided",
)
_TAIL_BY_NAME = rf"(?:^|_)({'|'.join(TAIL_OPERATORS)})(?:_|$)"

# The join wait is a 3c cause from this many µs per layer (median), or from this share of
# the layer wall, whichever is smaller (docs/advice.md).
JOIN_WAIT_CAUSE_US = 20.0
JOIN_WAIT_CAUSE_SHARE = 0.05


def tail_operator(main: pl.DataFrame) -> pl.Series:
    """Per main kernel, the TAIL_OPERATORS entry it is (null: another operator). Names
    repeat layer after layer: the name regex runs once per distinct name."""
    by_type = pl.when(pl.col("op_type").is_in(TAIL_OPERATORS)).then(pl.col("op_type"))
    has_type = "op_type" in main.columns
    if has_type and not main.get_column("op_type").null_count():
        return main.select(by_type.alias("t")).get_column("t")
    names = main.get_column("name").unique()
    labels = names.str.extract(_TAIL_BY_NAME, 1)
    by_name = pl.col("name").replace_strict(names, labels, default=None, return_dtype=pl.String)
    label = (
        pl.when(pl.col("op_type").is_null()).then(by_name).otherwise(by_type)
        if has_type
        else by_name
    )
    return main.select(label.alias("t")).get_column("t")


def _tail_ops(main: pl.DataFrame, dom_rows: I64, ms: I64, me: I64) -> tuple[TailOp, ...]:
    """The tail operators of each layer (``dom_rows``: its dominator's main-kernel row):
    the run of them right after its dominator, totals over the layers / the layers."""
    if not dom_rows.size or not main.height:
        return ()
    label = tail_operator(main)
    is_tail = label.is_not_null().to_numpy()
    if not is_tail.any():
        return ()
    n = is_tail.size
    rows = np.arange(n)
    # the nearest main kernel before each row that is not a tail operator (-1: none)
    prev_real = np.maximum.accumulate(np.where(is_tail, -1, rows))
    owner = np.full(n, -1, dtype=np.int64)
    owner[dom_rows] = np.arange(dom_rows.size)
    tails = np.flatnonzero(is_tail & (prev_real >= 0))
    tails = tails[owner[prev_real[tails]] >= 0]  # a tail right after a dominator
    if not tails.size:
        return ()
    names = np.array(label.gather(tails).to_list(), dtype=str)
    durations = me[tails] - ms[tails]
    found: list[TailOp] = []
    for name in sorted(set(names.tolist())):
        hit = names == name
        # rounded as the JSON report writes them (count: 3 decimals, time: whole ns)
        count = round(int(hit.sum()) / dom_rows.size, 3)
        found.append(TailOp(name, count, float(round(int(durations[hit].sum()) / dom_rows.size))))
    return tuple(sorted(found, key=lambda t: (-t.ns, t.name)))


def _median(values: I64) -> float | None:
    return float(np.median(values)) if values.size else None


class Steps(NamedTuple):
    """The steps of one sample (:func:`step_wall`)."""

    number: int  # steps in the sample
    median_ns: float | None  # the median step wall
    walls: tuple[tuple[int | None, int], ...]  # (Step Id, wall ns) in Step Id order


def step_wall(kernels: pl.DataFrame) -> Steps:
    """Each step's wall in the sample, and their median (kernels without a step: one step)."""
    if kernels.is_empty():
        return Steps(0, None, ())
    stepped = kernels.filter(pl.col("step").is_not_null())
    walls = (
        (kernels if stepped.is_empty() else stepped)  # no step: one group, step null
        .group_by("step")
        .agg((pl.col("end_ns").max() - pl.col("start_ns").min()).alias("w"))
        .sort("step")
    )
    w = i64_column(walls, "w")
    ids = walls.get_column("step").to_list()
    return Steps(int(w.size), _median(w), tuple(zip(ids, w.tolist(), strict=True)))


def layer_walls(dom_start: I64, main_end: int) -> I64:
    """Per layer (``dom_start``: its dominator's start, in layer order), its wall from the
    main path's structure alone: from its dominator's start to the next layer's. The
    last layer has no next one: its wall is left out (-1), unless it is the only layer,
    whose wall then runs to ``main_end``, the sample's last main-stream end."""
    wall = np.full(dom_start.size, -1, dtype=np.int64)
    wall[:-1] = np.diff(dom_start)
    if dom_start.size == 1:
        wall[0] = main_end - dom_start[0]
    return wall


def layer_figures(
    main: pl.DataFrame, occ: Occurrences, steps: Steps, main_stream: pl.DataFrame | None = None
) -> LayerFigures:
    """The sample's layer figures; ``main``: the main kernels occ was paired on;
    ``main_stream`` (default ``main``): every compute kernel on the main stream, side ops
    run inline there included (the main stream is busy, not waiting, while it runs them)."""
    ss, se, group, _ = occ.side_ops
    n = occ.status.size
    has_dom = occ.dom_row >= 0 if occ.dom_row.size == n else np.zeros(n, dtype=bool)
    has_side = occ.side_count > 0
    ds, de = occ.dom_start, occ.dom_end
    side_total = np.zeros(n, dtype=np.int64)
    np.add.at(side_total, group, se - ss)
    ms, me = i64_column(main, "start_ns"), i64_column(main, "end_ns")
    on_main = main if main_stream is None else main_stream
    busy_s, busy_e = intervals.merge(i64_column(on_main, "start_ns"), i64_column(on_main, "end_ns"))
    wall = np.full(n, -1, dtype=np.int64)
    main_end = int(busy_e.max()) if busy_e.size else 0
    wall[has_dom] = layer_walls(ds[has_dom], main_end)
    both = has_dom & has_side
    tail_end = np.where(both & (occ.side_end > de), occ.side_end, de)
    # the first main op starting at or after the side work's end (none: the side end)
    nxt = np.searchsorted(ms, tail_end, side="left")
    after = np.concatenate([ms, [0]])[nxt]  # a sentinel for "no main op after it"
    resume = np.where(nxt < ms.size, after, tail_end)
    resume = np.where(tail_end > de, resume, de)
    wait = (resume - de) - intervals.covered_length(busy_s, busy_e, de, resume)
    # none where the join did not wait (a race), or a main op ran on past the side work's end
    if occ.join_not_waited.size == n:
        wait[occ.join_not_waited] = 0
    if busy_s.size:
        j = np.maximum(np.searchsorted(busy_s, tail_end, side="left") - 1, 0)
        wait[(busy_s[j] < tail_end) & (busy_e[j] > tail_end)] = 0
    # side busy after the dominator, merged per layer, less what main compute covered
    cs, ce = intervals.clip(ss, se, de[group], tail_end[group]) if group.size else (ss, se)
    gs, ge, gg = intervals.grouped_merge(cs, ce, group)
    uncovered = (ge - gs) - intervals.covered_length(busy_s, busy_e, gs, ge)
    tail = np.zeros(n, dtype=np.int64)
    np.add.at(tail, gg, uncovered)
    layers = np.flatnonzero(has_dom)
    # no join wait or side tail where the layers have no join (occ.joined)
    joined = np.flatnonzero(both & occ.joined)
    worst = joined[np.argmax(wait[joined])] if joined.size and wait[joined].max() > 0 else None
    return LayerFigures(
        layers=int(layers.size),
        steps=steps.number,
        layer_wall_ns=_median(wall[layers][wall[layers] >= 0]),
        dominator_ns=_median((de - ds)[layers]),
        side_total_ns=_median(side_total[np.flatnonzero(both)]),
        join_wait_ns=_median(wait[joined]),
        side_tail_ns=_median(tail[joined]),
        join_wait_max_ns=None if worst is None else int(wait[worst]),
        join_wait_layer=None if worst is None else int(worst) + 1,
        step_wall_ns=steps.median_ns,
        step_walls=steps.walls,
        tail_ops=_tail_ops(main, occ.dom_row[layers], ms, me),
    )


def plan_walls(runs: Sequence[PlanRun]) -> PlanWalls | None:
    """Warm medians of the samples' layer figures (None: no sample has them)."""
    figures = [r.walls for r in runs]
    if not any(f is not None for f in figures):
        return None
    warm = [r.warm for r in runs]

    def median(name: str) -> float | None:
        return spread([None if f is None else getattr(f, name) for f in figures], warm).median

    def count(name: str) -> int:
        return int(median(name) or 0)

    pool = [r for r in runs if r.warm] or list(runs)
    waits = [  # wait, layer, run
        (f.join_wait_max_ns, f.join_wait_layer, r.run)
        for r in pool
        if (f := r.walls) is not None
        and f.join_wait_max_ns is not None
        and f.join_wait_layer is not None
    ]
    worst = max(waits, key=lambda w: w[0], default=None)  # the first of the longest
    return PlanWalls(
        tail_ops=_warm_tail_ops(runs),
        layers=count("layers"),
        steps=count("steps"),
        layer_wall_ns=median("layer_wall_ns"),
        dominator_ns=median("dominator_ns"),
        side_total_ns=median("side_total_ns"),
        join_wait_ns=median("join_wait_ns"),
        side_tail_ns=median("side_tail_ns"),
        step_wall_ns=median("step_wall_ns"),
        join_wait_worst_ns=None if worst is None else worst[0],
        join_wait_worst_layer=None if worst is None else worst[1],
        join_wait_worst_run=None if worst is None else worst[2],
    )


def _warm_tail_ops(runs: Sequence[PlanRun]) -> tuple[TailOp, ...]:
    """Per tail operator, the warm median over the samples of its count and time per layer
    (a sample with layers but without that operator counts 0)."""
    names = sorted({t.name for r in runs if r.walls is not None for t in r.walls.tail_ops})
    warm = [r.warm for r in runs]
    found: list[TailOp] = []
    for name in names:
        per = [
            None
            if r.walls is None or not r.walls.layers
            else next((t for t in r.walls.tail_ops if t.name == name), TailOp(name, 0.0, 0.0))
            for r in runs
        ]
        count = spread([None if t is None else t.count for t in per], warm).median
        ns = spread([None if t is None else t.ns for t in per], warm).median
        if count and ns is not None:  # rounded as the JSON report writes them
            found.append(TailOp(name, round(count, 3), float(round(ns))))
    return tuple(sorted(found, key=lambda t: (-t.ns, t.name)))


def _us(ns: float) -> str:
    return f"{ns / 1000:.3f}"


def _times(count: float) -> str:
    return f"x{round(count, 2):g}"  # x1, x0.5, x0.32


def tail_ops_cause(walls: PlanWalls | None) -> Evidence | None:
    """The tail operators after the join (warm medians per layer) as a 3c cause: main-stream
    time spent on format, layout or fill work after the dominator (None: none ran)."""
    tails = () if walls is None else walls.tail_ops
    total = sum(t.ns for t in tails)
    if not tails or total <= 0:
        return None
    named = ", ".join(f"{t.name} {_times(t.count)} ({_us(t.ns)} µs)" for t in tails)
    return Evidence(
        "tail-ops",
        f"tail operators after the join on the main stream, per layer (warm median): {named};"
        f" {_us(total)} µs of format/layout/fill work between the dominator and the next "
        "main op",
        round(total),
    )


def join_wait_cause(walls: PlanWalls | None) -> Evidence | None:
    """The main stream's wait for the side tail as a 3c cause, when it matters: at least
    JOIN_WAIT_CAUSE_US per layer or JOIN_WAIT_CAUSE_SHARE of the layer wall (None: less)."""
    wait = None if walls is None else walls.join_wait_ns
    if walls is None or not wait or wait <= 0:
        return None
    wall = walls.layer_wall_ns
    share = wait / wall if wall else None
    if wait < JOIN_WAIT_CAUSE_US * 1000 and (share is None or share < JOIN_WAIT_CAUSE_SHARE):
        return None
    worst = ""
    if walls.join_wait_worst_ns is not None:
        worst = (
            f"; worst {_us(walls.join_wait_worst_ns)} µs, layer {walls.join_wait_worst_layer} "
            f"of run {walls.join_wait_worst_run}"
        )
    # share is None exactly when the wall is unknown or 0 (wait > 0 here)
    of_wall = f", {share * 100:.1f}% of the {_us(wall)} µs layer wall" if share and wall else ""
    return Evidence(
        "join-wait",
        f"join wait: the main stream waited {_us(wait)} µs per layer (median{worst}) for the "
        f"side tail after the dominator{of_wall}",
        round(wait),
    )


def side_tail_cause(walls: PlanWalls | None) -> Evidence | None:
    """Side work that ran alone after the dominator (median per layer) as a 3c cause:
    time the overlap did not hide (None: no tail)."""
    tail = None if walls is None else walls.side_tail_ns
    if not tail or tail <= 0:
        return None
    return Evidence(
        "side-tail",
        f"side tail {tail / 1000:.3f} µs per layer (median) after the dominator's end, "
        "not covered by main-stream work: side ops that ran alone",
        round(tail),
    )
