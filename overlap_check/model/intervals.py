"""Interval maths on int64 nanosecond arrays (numpy only, no per-interval Python loops).

An interval set is a pair of equal-length int64 arrays ``(starts, ends)`` with
``start <= end``. Functions that say "merged" return sorted, disjoint intervals;
intervals that touch (end == next start) are merged, which changes no length."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]


def _as_i64(values: npt.ArrayLike) -> I64:
    return np.asarray(values, dtype=np.int64)


def _is_sorted(values: I64) -> bool:
    return bool(np.all(values[1:] >= values[:-1]))


def merge(starts: npt.ArrayLike, ends: npt.ArrayLike) -> tuple[I64, I64]:
    """Union of intervals as sorted disjoint intervals."""
    s = _as_i64(starts)
    e = _as_i64(ends)
    if s.size == 0:
        return s.copy(), e.copy()
    if not _is_sorted(s):  # kernel tables usually come in time order already
        order = np.argsort(s, kind="stable")
        s = s[order]
        e = e[order]
    elif bool(np.all(e[:-1] < s[1:])):  # already disjoint and apart: nothing to merge
        return s.copy(), e.copy()
    running_end = np.maximum.accumulate(e)
    new_group = np.empty(s.size, dtype=bool)
    new_group[0] = True
    new_group[1:] = s[1:] > running_end[:-1]
    first = np.flatnonzero(new_group)
    return s[first], np.maximum.reduceat(e, first)


def union_length(starts: npt.ArrayLike, ends: npt.ArrayLike) -> int:
    """Total time covered by at least one interval."""
    ms, me = merge(starts, ends)
    return int((me - ms).sum())


def intersection_length(
    a_starts: npt.ArrayLike, a_ends: npt.ArrayLike, b_starts: npt.ArrayLike, b_ends: npt.ArrayLike
) -> int:
    """Length of (union of A) ∩ (union of B), exact: |A| + |B| - |A ∪ B|."""
    a_len = union_length(a_starts, a_ends)
    b_len = union_length(b_starts, b_ends)
    both = union_length(
        np.concatenate([_as_i64(a_starts), _as_i64(b_starts)]),
        np.concatenate([_as_i64(a_ends), _as_i64(b_ends)]),
    )
    return a_len + b_len - both


def sweep(
    starts: npt.ArrayLike, ends: npt.ArrayLike, weights: npt.ArrayLike | None = None
) -> tuple[I64, I64, I64]:
    """Piecewise-constant sum of weights (None: counts) over time: ``(seg_starts, seg_ends,
    value)``, the segments between event times, zero-length ones dropped."""
    s = _as_i64(starts)
    w = np.ones(s.size, dtype=np.int64) if weights is None else _as_i64(weights)
    seg_starts, seg_ends, (value,) = sweeps(s, _as_i64(ends), [(w, None)])
    return seg_starts, seg_ends, value


# One sum of `sweeps`: what each interval adds at its start, and at its end (None: the
# start's amount taken away again, a weighted interval).
Steps = tuple[npt.NDArray[np.integer[Any]], npt.NDArray[np.integer[Any]] | None]


def sweeps(starts: I64, ends: I64, steps: Iterable[Steps]) -> tuple[I64, I64, list[I64]]:
    """Several piecewise-constant sums over the same intervals, sharing one sort: the
    segments between distinct bounds and, per entry of ``steps``, the running sum on each.
    At a million intervals every array is 16 MB: each is dropped once used, and the
    running sums share one buffer."""
    n = starts.size
    if n == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), [empty.copy() for _ in steps]
    order = np.argsort(np.concatenate([starts, ends]), kind="stable")
    ordered = np.concatenate([starts, ends])[order]
    last = np.flatnonzero(ordered[1:] != ordered[:-1])  # the last event at each time
    seg_starts, seg_ends = ordered[last], ordered[last + 1]
    del ordered
    buffer = np.empty(2 * n, dtype=np.int64)
    running = np.empty(2 * n, dtype=np.int64)
    values = []
    for at_start, at_end in steps:
        buffer[:n] = at_start
        if at_end is None:
            np.negative(at_start, out=buffer[n:])
        else:
            buffer[n:] = at_end
        np.take(buffer, order, out=running)
        np.cumsum(running, out=running)
        values.append(running[last])
    return seg_starts, seg_ends, values


def time_at_concurrency(stream_sets: list[tuple[I64, I64]]) -> dict[int, int]:
    """Time (ns) with exactly k of the sets busy, k >= 1 (each set merged first)."""
    merged = [m for m in (merge(s, e) for s, e in stream_sets) if m[0].size]
    if not merged:
        return {}
    # A merged set's events s0 <= e0 < s1 <= e1 ... are already in order, so the
    # concatenation is one sorted run per set and the stable sort only merges runs.
    # Every set adds an even number of events, so even positions are starts (+1).
    events = np.empty(2 * sum(m[0].size for m in merged), dtype=np.int64)
    events[0::2] = np.concatenate([m[0] for m in merged])
    events[1::2] = np.concatenate([m[1] for m in merged])
    order = np.argsort(events, kind="stable")
    times = events[order]
    del events
    # In place (at a million kernels each array is 16 MB): +1 at a start, -1 at an end,
    # then the running sum is the number of sets busy after each event.
    np.bitwise_and(order, 1, out=order)
    order *= -2
    order += 1
    level = np.cumsum(order, out=order)[:-1]
    lengths = np.diff(times)
    del times
    # Each level's total is at most the span of the sets, far below 2**53 ns: the
    # float64 sums of bincount are exact.
    totals = np.bincount(level, weights=lengths, minlength=len(merged) + 1)
    result: dict[int, int] = {}
    for k in range(1, len(merged) + 1):  # one entry per possible level (one per set)
        if totals[k] > 0:
            result[k] = round(float(totals[k]))
    return result


def window_overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Overlap of two closed windows, never negative."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def grouped_union_length(
    starts: npt.ArrayLike, ends: npt.ArrayLike, groups: npt.ArrayLike, n_groups: int
) -> I64:
    """Per group (``groups``: each interval's, in ``[0, n_groups)``), the time its intervals
    cover (0 for a group with none)."""
    ms, me, mg = grouped_merge(starts, ends, groups)
    out = np.zeros(n_groups, dtype=np.int64)
    if mg.size:  # merged intervals come grouped: one reduceat per group
        first = np.flatnonzero(np.concatenate([[True], mg[1:] != mg[:-1]]))
        out[mg[first]] = np.add.reduceat(me - ms, first)
    return out


def grouped_merge(
    starts: npt.ArrayLike, ends: npt.ArrayLike, groups: npt.ArrayLike
) -> tuple[I64, I64, I64]:
    """Union of each group's intervals, ``(starts, ends, group)`` by group then start: one
    merge, each group shifted onto its own stretch of a common axis."""
    s = _as_i64(starts)
    e = _as_i64(ends)
    g = _as_i64(groups)
    if s.size == 0:
        return s.copy(), e.copy(), g.copy()
    in_order = bool(np.all(g[1:] >= g[:-1])) and bool(np.all((g[1:] != g[:-1]) | (s[1:] >= s[:-1])))
    if not in_order:
        order = np.lexsort((s, g))
        s, e, g = s[order], e[order], g[order]
    new_group = np.concatenate([[True], g[1:] != g[:-1]])
    first = np.flatnonzero(new_group)
    if bool(np.all(new_group[1:] | (e[:-1] <= s[1:]))):
        # Already disjoint within every group (one stream's kernels): nothing to merge.
        return s.copy(), e.copy(), g.copy()
    base = s[first]
    span = np.maximum.reduceat(e, first) - base
    # Shifted stretches are [offset, offset + span]; consecutive stretches are
    # separated by one ns so that touching groups stay apart.
    if (int(span.max()) + 1) * first.size >= 2**62:
        raise ValueError("interval groups span too much time to be merged together")
    offset = np.concatenate([[0], np.cumsum(span + 1)[:-1]]).astype(np.int64)
    sizes = np.diff(np.concatenate([first, [s.size]]))
    shift = np.repeat(offset - base, sizes)
    ms, me = merge(s + shift, e + shift)
    # Merged intervals come in axis order, so their owning groups never decrease.
    owner = np.searchsorted(offset, ms, side="right") - 1
    back = (offset - base)[owner]
    return ms - back, me - back, g[first][owner]


def covered_length(
    merged_starts: npt.ArrayLike, merged_ends: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike
) -> I64:
    """Per window ``[lo, hi]``, the time a merged set covers inside it (prefix sums of its
    lengths, two binary searches per window)."""
    bs = _as_i64(merged_starts)
    be = _as_i64(merged_ends)
    a = _as_i64(lo)
    b = _as_i64(hi)
    if bs.size == 0:
        return np.zeros(a.size, dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(be - bs)])  # covered before interval i

    def covered_until(t: I64) -> I64:
        i = np.searchsorted(bs, t, side="right")  # intervals starting at or before t
        last = np.maximum(i - 1, 0)
        inside = np.where(i > 0, np.clip(t - bs[last], 0, be[last] - bs[last]), 0)
        return (before[last] * (i > 0) + inside).astype(np.int64)

    inside: I64 = np.maximum(covered_until(b) - covered_until(a), 0)
    return inside


def clip(
    starts: npt.ArrayLike, ends: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike
) -> tuple[I64, I64]:
    """Each interval clipped to its own window ``[lo, hi]``; empty results have length 0."""
    s = np.maximum(_as_i64(starts), _as_i64(lo))
    e = np.minimum(_as_i64(ends), _as_i64(hi))
    return s, np.maximum(s, e)


def touching(starts: I64, ends: I64, sets: list[tuple[I64, I64]]) -> npt.NDArray[np.bool_]:
    """Which intervals' closed spans [start, end] meet an interval of any of ``sets``
    (each of disjoint intervals; together they may repeat one, not overlap it otherwise)."""
    seg_s = np.concatenate([s for s, _ in sets])
    seg_e = np.concatenate([e for _, e in sets])
    if seg_s.size == 0:
        return np.zeros(starts.size, dtype=bool)
    order = np.argsort(seg_s, kind="stable")
    seg_s, seg_e = seg_s[order], seg_e[order]
    opens = np.concatenate([[True], seg_s[1:] > seg_e[:-1]])  # touching ones join
    block_start = seg_s[opens]
    block_end = seg_e[np.concatenate([np.flatnonzero(opens)[1:] - 1, [seg_s.size - 1]])]
    j = np.searchsorted(block_end, starts, side="left")  # the first block not ended before
    inside = j < block_end.size
    meets = np.zeros(starts.size, dtype=bool)
    meets[inside] = block_start[j[inside]] <= ends[inside]
    return meets


def covered_sums(seg_s: I64, seg_e: I64, starts: I64, ends: I64, weights: I64) -> I64:
    """Per segment (disjoint, in order) the summed weights of the intervals covering it
    whole: what a sweep's running sum holds there when the intervals are all that add."""
    lo = np.searchsorted(seg_s, starts, side="left")  # the first segment starting inside
    hi = np.searchsorted(seg_e, ends, side="right")  # the first segment ending after
    covers = (hi > lo) & (weights != 0)
    steps = np.zeros(seg_s.size + 1, dtype=np.int64)
    np.add.at(steps, lo[covers], weights[covers])
    np.add.at(steps, hi[covers], -weights[covers])
    total: I64 = np.cumsum(steps[:-1])
    return total
