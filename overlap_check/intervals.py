"""Interval maths on int64 nanosecond arrays (numpy only, no per-interval Python loops).

An interval set is a pair of equal-length int64 arrays ``(starts, ends)`` with
``start <= end``. Functions that say "merged" return sorted, disjoint intervals;
intervals that touch (end == next start) are merged, which changes no length.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]


def _as_i64(values: npt.ArrayLike) -> I64:
    return np.asarray(values, dtype=np.int64)


def merge(starts: npt.ArrayLike, ends: npt.ArrayLike) -> tuple[I64, I64]:
    """Union of intervals as sorted disjoint intervals."""
    s = _as_i64(starts)
    e = _as_i64(ends)
    if s.size == 0:
        return s.copy(), e.copy()
    order = np.argsort(s, kind="stable")
    s = s[order]
    e = e[order]
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
    """Piecewise-constant sum of weights over time.

    Returns ``(seg_starts, seg_ends, value)``: consecutive segments between
    event times (zero-length segments dropped) and the sum of the weights of
    the intervals covering each segment (the count when ``weights`` is None).
    """
    s = _as_i64(starts)
    e = _as_i64(ends)
    w = np.ones(s.size, dtype=np.int64) if weights is None else _as_i64(weights)
    if s.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy(), empty.copy()
    times = np.concatenate([s, e])
    deltas = np.concatenate([w, -w])
    order = np.argsort(times, kind="stable")
    times = times[order]
    level = np.cumsum(deltas[order])
    seg_starts = times[:-1]
    seg_ends = times[1:]
    value = level[:-1]
    keep = seg_ends > seg_starts
    return seg_starts[keep], seg_ends[keep], value[keep]


def time_at_concurrency(stream_sets: list[tuple[I64, I64]]) -> dict[int, int]:
    """Time (ns) spent with exactly k of the given interval sets busy, for k >= 1.

    Each set is first merged, so overlapping kernels of one stream count once.
    """
    merged = [merge(s, e) for s, e in stream_sets]
    if not merged:
        return {}
    seg_s, seg_e, level = sweep(
        np.concatenate([m[0] for m in merged]), np.concatenate([m[1] for m in merged])
    )
    lengths = seg_e - seg_s
    result: dict[int, int] = {}
    for k in np.unique(level):
        if k > 0:
            result[int(k)] = int(lengths[level == k].sum())
    return result


def hull(starts: npt.ArrayLike, ends: npt.ArrayLike) -> tuple[int, int] | None:
    """``[min(start), max(end)]``, or None for an empty set."""
    s = _as_i64(starts)
    e = _as_i64(ends)
    if s.size == 0:
        return None
    return int(s.min()), int(e.max())


def window_overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Overlap of two closed windows, never negative."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))
