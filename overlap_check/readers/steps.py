"""Profiler steps for kernels of sources that carry step ranges, not step ids."""

from __future__ import annotations

import numpy as np
import polars as pl

STEP_RANGE_SCHEMA = pl.Schema(
    {"step_start": pl.Int64(), "step_end": pl.Int64(), "step": pl.Int64()}
)


def with_steps(kernels: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Add ``step``: the step whose [step_start, step_end] holds the kernel's start, else null.
    Ranges (:data:`STEP_RANGE_SCHEMA`) do not overlap (one profiler step at a time), so the
    last one starting at or before the kernel is the only candidate: one binary search per
    kernel, in row order (no sort of the kernel table)."""
    kernels = kernels.drop("step", strict=False)
    if steps.is_empty() or kernels.is_empty():
        return kernels.with_columns(pl.lit(None, pl.Int64).alias("step"))
    ranges = steps.select(list(STEP_RANGE_SCHEMA)).cast(STEP_RANGE_SCHEMA)
    ranges = ranges.drop_nulls("step_start").sort("step_start")  # a range with no start: none
    start = kernels.get_column("start_ns").cast(pl.Int64)
    at = np.searchsorted(ranges["step_start"].to_numpy(), start.fill_null(0).to_numpy(), "right")
    candidate = pl.Series(np.maximum(at - 1, 0), dtype=pl.Int64)  # at 0: none starts before
    inside = (pl.Series(at > 0) & (start <= ranges["step_end"].gather(candidate))).fill_null(False)
    step = pl.when(inside).then(ranges["step"].gather(candidate))
    return kernels.with_columns(step.alias("step"))
