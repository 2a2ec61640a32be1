"""Profiler steps for kernels of sources that carry step ranges, not step ids."""

from __future__ import annotations

import polars as pl

STEP_RANGE_SCHEMA = pl.Schema(
    {"step_start": pl.Int64(), "step_end": pl.Int64(), "step": pl.Int64()}
)


def with_steps(kernels: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Add ``step``: the step whose [step_start, step_end] holds the kernel's start, else null.
    Ranges (:data:`STEP_RANGE_SCHEMA`) do not overlap (one profiler step at a time), so the
    last one starting at or before the kernel is the only candidate. Row order is kept."""
    kernels = kernels.drop("step", strict=False)
    if steps.is_empty() or kernels.is_empty():
        return kernels.with_columns(pl.lit(None, pl.Int64).alias("step"))
    ordered = kernels.with_row_index("__row").sort("start_ns")
    ranges = steps.select(list(STEP_RANGE_SCHEMA)).cast(STEP_RANGE_SCHEMA).sort("step_start")
    joined = ordered.join_asof(
        ranges, left_on="start_ns", right_on="step_start", strategy="backward"
    )
    inside = pl.col("start_ns") <= pl.col("step_end")
    return (
        joined.with_columns(pl.when(inside).then(pl.col("step")).alias("step"))
        .sort("__row")
        .drop("__row", "step_start", "step_end")
    )
