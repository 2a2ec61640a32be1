"""readers.steps.with_steps: each kernel's profiler step from host step ranges."""

from __future__ import annotations

import polars as pl

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
