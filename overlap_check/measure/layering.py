"""Occurrences that follow the model's layers: the layer of each side op, the join and lag flags
of a missing wait, and the layers of a plan without a dominator.

The rules: docs/hidden-fraction.md, "Occurrences follow the layers"; docs/method.md,
"Occurrences" (:func:`task_layers`). :mod:`overlap_check.measure.plans` calls them."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.model.intervals import I64


def assign_layers(
    side_start: npt.ArrayLike,
    side_end: npt.ArrayLike,
    dom_start: npt.ArrayLike,
    dom_end: npt.ArrayLike,
) -> I64:
    """The layer (dominator index, dominators sorted by start and disjoint) of each side op;
    -1 for every op when there is no dominator."""
    ss = np.asarray(side_start, dtype=np.int64)
    se = np.asarray(side_end, dtype=np.int64)
    ds = np.asarray(dom_start, dtype=np.int64)
    de = np.asarray(dom_end, dtype=np.int64)
    if ds.size == 0:
        return np.full(ss.size, -1, dtype=np.int64)
    last = ds.size - 1
    # Dominators overlapping [s, e): indices lo .. hi-1 (ends and starts both sorted).
    lo = np.searchsorted(de, ss, side="right")
    hi = np.searchsorted(ds, se, side="left")
    overlaps = hi > lo
    first = np.minimum(lo, last)
    final = np.clip(hi - 1, 0, last)

    def overlap(k: I64) -> I64:
        length: I64 = np.maximum(0, np.minimum(se, de[k]) - np.maximum(ss, ds[k]))
        return length.astype(np.int64)

    by_overlap = np.where(overlap(final) > overlap(first), final, first)
    # No overlap: the op lies in the gap before dominator j (half-open bounds: touching is
    # no overlap). A gap's ops go together to the nearer dominator, unless its longest pause
    # cuts it (docs/hidden-fraction.md, "Occurrences follow the layers", rules 2 and 3).
    j = np.searchsorted(ds, se, side="left")
    alone = ~overlaps
    part = np.zeros(ss.size, dtype=np.int64)
    pause = np.zeros(ss.size, dtype=np.int64)
    part[alone], pause[alone] = _after_pause(ss[alone], se[alone], j[alone])
    lo_start, hi_end = _extents(2 * j + part, alone, ss, se, ds.size)
    # the cut holds where the head of part 0 and the end of part 1 are nearer their own
    # dominator than the pause between them
    after, before = np.minimum(j, last), np.maximum(j - 1, 0)
    inner = (j >= 1) & (j <= last)
    cut = inner & (lo_start[2 * j] - de[before] < pause) & (ds[after] - hi_end[2 * j + 1] < pause)
    key = 2 * j + np.where(cut, part, 0)
    lo_start, hi_end = _extents(key, alone, ss, se, ds.size)
    none = np.iinfo(np.int64).max
    gap_after = np.where(j <= last, ds[after] - hi_end[key], none)
    gap_before = np.where(j >= 1, lo_start[key] - de[before], none)
    nearest = np.where(gap_before < gap_after, before, after)
    return np.where(overlaps, by_overlap, nearest).astype(np.int64)


def _extents(key: I64, alone: npt.NDArray[np.bool_], ss: I64, se: I64, n: int) -> tuple[I64, I64]:
    """Per key (2 x gap + part), the first start and last end of its ``alone`` ops."""
    lo_start = np.full(2 * n + 2, np.iinfo(np.int64).max, dtype=np.int64)
    hi_end = np.full(2 * n + 2, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(lo_start, key[alone], ss[alone])
    np.maximum.at(hi_end, key[alone], se[alone])
    return lo_start, hi_end


def _after_pause(ss: I64, se: I64, gap: I64) -> tuple[I64, I64]:
    """Per op: 1 when it comes at or after its gap's longest pause in side work (an idle
    stretch between the ops' running end and the next op's start), else 0; and that
    pause's length (0: the gap's side work never pauses). ``gap``: the gap of each op;
    ops of one gap lie apart from other gaps' (between the same two dominators)."""
    order = np.lexsort((ss, gap))
    s, e, g = ss[order], se[order], gap[order]
    same = np.zeros(s.size, dtype=bool)
    same[1:] = g[1:] == g[:-1]
    idle = np.zeros(s.size, dtype=np.int64)
    if s.size > 1:
        # gaps come in time order, so one running end serves them all
        idle[1:] = np.where(same[1:], s[1:] - np.maximum.accumulate(e)[:-1], 0)
    longest = np.zeros(int(g.max()) + 1 if g.size else 0, dtype=np.int64)
    np.maximum.at(longest, g, np.maximum(idle, 0))
    cut = (idle > 0) & (idle == longest[g])
    cuts = np.cumsum(cut)
    start = np.maximum.accumulate(np.where(same, 0, cuts))  # the count at the gap's start
    part = np.zeros(s.size, dtype=np.int64)
    pause = np.zeros(s.size, dtype=np.int64)
    part[order] = (cuts - start > 0).astype(np.int64)
    pause[order] = longest[g]
    return part, pause


def join_not_waited(
    main_start: I64,
    main_end: I64,
    dom_end: I64,
    side_start: I64,
    side_end: I64,
    has_side: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Per layer: its side work ends after its join started (the join did not wait; the join:
    docs/hidden-fraction.md). ``main_*``: the main stream's other kernels by start."""
    ms = main_start
    if ms.size == 0:  # no main-stream op: no join
        return np.zeros(np.asarray(has_side).size, dtype=bool)
    ran_until = np.maximum.accumulate(main_end) if ms.size else ms
    nxt = np.maximum(
        np.searchsorted(ms, dom_end, side="left"),
        np.searchsorted(ran_until, side_start, side="right"),
    )
    next_start = np.where(nxt < ms.size, ms[np.minimum(nxt, ms.size - 1)], np.iinfo(np.int64).max)
    flags: npt.NDArray[np.bool_] = np.asarray(has_side, dtype=bool) & (side_end > next_start)
    return flags


def lag(side_count: npt.ArrayLike, dom_end: npt.ArrayLike, side_start: npt.ArrayLike) -> bool:
    """The side stream runs a layer behind: the first dominator has no side work, and side
    work starts after the last dominator has ended (a missing wait). Per layer
    ``side_count`` and ``dom_end``; ``side_start``: every side op."""
    counts = np.asarray(side_count, dtype=np.int64)
    ss = np.asarray(side_start, dtype=np.int64)
    if counts.size == 0 or ss.size == 0:
        return False
    last_end = int(np.asarray(dom_end, dtype=np.int64)[-1])
    return bool(counts[0] == 0) and bool((ss >= last_end).any())


def task_layers(names: pl.Series, ms: I64, me: I64, ss: I64, se: I64) -> tuple[I64, I64]:
    """The occurrence of each side task of a communication or copy plan without a dominator
    and the main-kernel row standing for each one's dominator: the main stream's layers
    (docs/method.md, "Occurrences"; tasks before the first layer go to the first), else
    one per task with the main kernel assign_layers gives it. All inputs by start."""
    if ms.size == 0:
        return np.arange(ss.size, dtype=np.int64), np.full(ss.size, -1, dtype=np.int64)
    durations = pl.DataFrame({"name": names, "t": me - ms})
    totals = (
        durations.group_by("name")
        .agg(pl.len().alias("n"), pl.col("t").sum())
        .filter(pl.col("n") >= 2)
        .sort(["t", "name"], descending=[True, False])
    )
    if totals.is_empty():
        rows = assign_layers(ss, se, ms, me)
        return np.arange(ss.size, dtype=np.int64), rows
    marker = totals.item(0, "name")
    rows = np.flatnonzero((names == marker).to_numpy())
    occ = np.maximum(np.searchsorted(ms[rows], ss, side="right") - 1, 0).astype(np.int64)
    return occ, rows.astype(np.int64)
