"""Interval maths against a brute-force reference: coverage counted one ns at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap_check.model import intervals

HORIZON = 40

interval = st.tuples(st.integers(0, HORIZON), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1]))
interval_list = st.lists(interval, max_size=12)


def _arrays(items: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    starts = np.array([a for a, _ in items], dtype=np.int64)
    ends = np.array([b for _, b in items], dtype=np.int64)
    return starts, ends


def hull(starts: list[int], ends: list[int]) -> tuple[int, int] | None:
    """``[min(start), max(end)]``, or None for an empty set (once intervals.hull; no engine
    code needs it)."""
    return (min(starts), max(ends)) if starts else None


def _coverage(items: list[tuple[int, int]]) -> np.ndarray:
    """How many intervals cover each unit [t, t+1) of time."""
    count = np.zeros(HORIZON + 13, dtype=np.int64)
    for a, b in items:
        count[a:b] += 1
    return count


@settings(max_examples=150, deadline=None)
@given(interval_list)
def test_merge_matches_brute_force(items: list[tuple[int, int]]) -> None:
    ms, me = intervals.merge(*_arrays(items))
    assert np.all(me[:-1] < ms[1:])  # sorted, disjoint and not touching
    assert np.all(me >= ms)
    covered = np.zeros(HORIZON + 13, dtype=bool)
    for a, b in zip(ms, me, strict=True):
        covered[a:b] = True
    # Zero-length intervals cover nothing; everything else must be identical.
    assert np.array_equal(covered, _coverage(items) > 0)
    assert intervals.union_length(*_arrays(items)) == int((_coverage(items) > 0).sum())


@settings(max_examples=150, deadline=None)
@given(interval_list, interval_list)
def test_intersection_matches_brute_force(
    a: list[tuple[int, int]], b: list[tuple[int, int]]
) -> None:
    expected = int(((_coverage(a) > 0) & (_coverage(b) > 0)).sum())
    assert intervals.intersection_length(*_arrays(a), *_arrays(b)) == expected


@settings(max_examples=150, deadline=None)
@given(interval_list, st.lists(st.integers(1, 5), min_size=12, max_size=12))
def test_sweep_matches_brute_force(items: list[tuple[int, int]], weights: list[int]) -> None:
    w = weights[: len(items)]
    seg_s, seg_e, value = intervals.sweep(*_arrays(items), np.array(w, dtype=np.int64))
    level = np.zeros(HORIZON + 13, dtype=np.int64)
    for (a, b), weight in zip(items, w, strict=True):
        level[a:b] += weight
    rebuilt = np.zeros_like(level)
    for a, b, v in zip(seg_s, seg_e, value, strict=True):
        rebuilt[a:b] = v
    assert np.array_equal(rebuilt, level)
    assert np.all(seg_e > seg_s)


def test_sweeps_share_one_sort_and_take_separate_end_steps() -> None:
    # intervals [0, 10), [5, 20), [10, 15): bounds 0 5 10 15 20 -> four segments
    starts = np.array([0, 5, 10], dtype=np.int64)
    ends = np.array([10, 20, 15], dtype=np.int64)
    weights = np.array([2, 3, 4], dtype=np.int64)
    # a count that rises at the first interval's start and falls at the second's end only
    rise = np.array([1, 0, 0], dtype=np.int8)
    fall = np.array([0, -1, 0], dtype=np.int8)
    seg_s, seg_e, (weighted, held) = intervals.sweeps(starts, ends, [(weights, None), (rise, fall)])
    assert seg_s.tolist() == [0, 5, 10, 15]
    assert seg_e.tolist() == [5, 10, 15, 20]
    # [0,5): 2; [5,10): 2 + 3; [10,15): 3 + 4 (the first ended at 10); [15,20): 3
    assert weighted.tolist() == [2, 5, 7, 3]
    assert held.tolist() == [1, 1, 1, 1]  # held from 0 until the second's end at 20


@settings(max_examples=150, deadline=None)
@given(st.lists(interval_list, max_size=4))
def test_time_at_concurrency_matches_brute_force(sets: list[list[tuple[int, int]]]) -> None:
    busy = sum((_coverage(items) > 0).astype(np.int64) for items in sets) if sets else None
    result = intervals.time_at_concurrency([_arrays(items) for items in sets])
    if busy is None:
        assert result == {}
        return
    expected = {int(k): int((busy == k).sum()) for k in np.unique(busy) if k > 0}
    assert result == expected


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(interval, st.integers(0, 3)), max_size=15))
def test_grouped_union_length_matches_brute_force(items: list[tuple[tuple[int, int], int]]) -> None:
    starts, ends = _arrays([iv for iv, _ in items])
    groups = np.array([g for _, g in items], dtype=np.int64)
    result = intervals.grouped_union_length(starts, ends, groups, 4)
    for g in range(4):
        mine = [iv for iv, grp in items if grp == g]
        assert result[g] == int((_coverage(mine) > 0).sum())


def test_grouped_union_length_keeps_touching_groups_apart() -> None:
    # Group 0 covers [0, 10), group 1 covers [10, 25) and [20, 30): 10 and 30 - 10.
    result = intervals.grouped_union_length([0, 10, 20], [10, 25, 30], [0, 1, 1], 3)
    assert result.tolist() == [10, 30 - 10, 0]


def test_grouped_union_length_on_epoch_nanoseconds() -> None:
    # 16-digit µs epochs in ns: the shift must not overflow int64.
    t0 = 1_736_408_883_704_643_212
    result = intervals.grouped_union_length(
        [t0, t0 + 5, t0 + 100], [t0 + 10, t0 + 20, t0 + 101], [1, 1, 0], 2
    )
    assert result.tolist() == [101 - 100, 20 - 0]


def test_clip_to_own_windows() -> None:
    s, e = intervals.clip([0, 10, 50], [20, 30, 60], [5, 25, 0], [15, 40, 40])
    assert s.tolist() == [5, 25, 50]
    assert (e - s).tolist() == [15 - 5, 30 - 25, 0]


def test_hull_and_window_overlap() -> None:
    assert hull([], []) is None
    assert hull([5, 1], [9, 3]) == (1, 9)
    assert intervals.window_overlap((0, 10), (10, 20)) == 0  # touching windows do not overlap
    assert intervals.window_overlap((0, 10), (4, 20)) == 10 - 4
    assert intervals.window_overlap((0, 10), (30, 40)) == 0


def test_grouped_merge_merges_within_groups_only() -> None:
    # group 0: [0,10] + [5,15] -> [0,15]; group 1: [0,3] and [12,20] stay apart
    s, e, g = intervals.grouped_merge([0, 5, 12, 0], [10, 15, 20, 3], [0, 0, 1, 1])
    assert list(zip(s.tolist(), e.tolist(), g.tolist(), strict=True)) == [
        (0, 15, 0),
        (0, 3, 1),
        (12, 20, 1),
    ]


def test_covered_length_per_window() -> None:
    # set [0,10] [20,30]: [5,25] holds 5 + 5; [0,100] all 20; [12,18] none; [25,25] empty
    got = intervals.covered_length([0, 20], [10, 30], [5, 0, 12, 25], [25, 100, 18, 25])
    assert got.tolist() == [10, 20, 0, 0]
    assert intervals.covered_length([], [], [0], [5]).tolist() == [0]
