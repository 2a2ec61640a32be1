"""op_statistic.csv (Level1+): per (OP Type, Core Type) counts and times, largest total first."""

from __future__ import annotations

from pathlib import Path

import polars as pl

HEADER = "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)"


def _us(ns: float) -> str:
    # values are Python floats rounded to 3 decimals, as torch_npu writes them
    return repr(round(ns / 1000, 3))


def write_op_statistic(path: Path, kernels: pl.DataFrame) -> None:
    compute = kernels.filter(~pl.col("is_comm"))
    stats = (
        compute.group_by("op_type", "core")
        .agg(
            pl.len().alias("count"),
            pl.col("dur_ns").sum().alias("total"),
            pl.col("dur_ns").min().alias("min"),
            pl.col("dur_ns").max().alias("max"),
        )
        .sort(["total", "op_type", "core"], descending=[True, False, False])
    )
    grand = max(int(stats["total"].sum()), 1)
    lines = [HEADER]
    for op_type, core, count, total, low, high in stats.select(
        "op_type", "core", "count", "total", "min", "max"
    ).iter_rows():
        lines.append(
            f"{op_type},{core},{count},{_us(total)},{_us(low)},{_us(total / count)},{_us(high)},"
            f"{round(100 * total / grand, 3)!r}"
        )
    path.write_text("\n".join(lines) + "\n")
