"""readers.steps.with_steps: each kernel's profiler step from host step ranges."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap_check.readers.steps import with_steps


def _ranges(rows: list[tuple[int | None, int | None, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["step_start", "step_end", "step"], orient="row")


def test_a_kernel_takes_the_step_whose_range_holds_its_start() -> None:
    # steps 1: [10, 20], 2: [30, 40], listed out of order; kernels in no time order
    ranges = _ranges([(30, 40, 2), (10, 20, 1)])
    kernels = pl.DataFrame(
        {"start_ns": [30, 5, 10, 20, 25, None, 41, 40], "name": list("abcdefgh")}
    )
    out = with_steps(kernels.with_columns(step=pl.lit(9)), ranges)
    # 30 in [30, 40]; 5 before the first; 10 and 20 on step 1's bounds; 25 between the
    # ranges; no start; 41 after the last; 40 on step 2's end
    assert out["step"].to_list() == [2, None, 1, 1, None, None, None, 2]
    assert out["name"].to_list() == list("abcdefgh")  # row order kept, old step replaced
    assert out.columns == ["start_ns", "name", "step"]


def test_a_range_without_a_start_or_end_holds_no_kernel() -> None:
    ranges = _ranges([(None, 50, 1), (10, None, 2), (60, 70, 3)])
    out = with_steps(pl.DataFrame({"start_ns": [15, 65, 55]}), ranges)
    assert out["step"].to_list() == [None, 3, None]


def test_no_ranges_or_no_kernels() -> None:
    empty = _ranges([]).cast(pl.Int64)
    assert with_steps(pl.DataFrame({"start_ns": [1]}), empty)["step"].to_list() == [None]
    none = pl.DataFrame(schema={"start_ns": pl.Int64})
    assert with_steps(none, _ranges([(0, 9, 1)])).schema["step"] == pl.Int64


def _by_join(kernels: pl.DataFrame, steps: pl.DataFrame) -> list[int | None]:
    """The reference: an as-of join of the kernels sorted by start (what with_steps did)."""
    ranges = steps.drop_nulls("step_start").sort("step_start")
    joined = (
        kernels.with_row_index("row")
        .drop_nulls("start_ns")
        .sort("start_ns")
        .join_asof(ranges, left_on="start_ns", right_on="step_start", strategy="backward")
        .with_columns(pl.when(pl.col("start_ns") <= pl.col("step_end")).then("step").alias("s"))
    )
    found = dict(zip(joined["row"].to_list(), joined["s"].to_list(), strict=True))
    return [found.get(i) for i in range(kernels.height)]


@settings(max_examples=200, deadline=None)
@given(
    bounds=st.lists(st.integers(0, 200), max_size=12, unique=True),
    starts=st.lists(st.one_of(st.none(), st.integers(-5, 210)), min_size=1, max_size=40),
)
def test_the_search_matches_an_as_of_join(bounds: list[int], starts: list[int | None]) -> None:
    # disjoint ranges from sorted distinct bounds, taken in pairs: [b0, b1], [b2, b3] ...
    ordered = sorted(bounds)
    rows = [(ordered[i], ordered[i + 1], i) for i in range(0, len(ordered) - 1, 2)]
    steps = _ranges(rows).cast(pl.Int64)
    kernels = pl.DataFrame({"start_ns": pl.Series(starts, dtype=pl.Int64)})
    expected = _by_join(kernels, steps) if rows else [None] * len(starts)
    assert with_steps(kernels, steps)["step"].to_list() == expected
