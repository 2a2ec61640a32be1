"""task_time.csv (torch_npu) / task_time_*.csv (msprof) → kernel and copy rows with streams.

The format: docs/formats.md, "task_time.csv"."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from overlap_check.readers.csvread import Column, read_csv_table
from overlap_check.readers.kernel_csv import finish_frame
from overlap_check.readers.tasktypes import is_copy_task, is_kernel_task

TASK_TIME_COLUMNS: tuple[Column, ...] = (
    Column("device", ("Device_id", "Device Id"), "int"),
    Column("name", ("kernel_name",), "str"),
    Column("accelerator_core", ("kernel_type",), "str", na=True),
    Column("stream_id", ("stream_id",), "int", required=True),
    Column("task_id", ("task_id",), "int"),
    Column("duration_ns", ("task_time(us)",), "us", nonnegative=True),
    Column("start_ns", ("task_start(us)",), "us", required=True, tab=True),
    Column("stop_ns", ("task_stop(us)",), "us", tab=True),
)


def looks_like_task_time(header: list[str]) -> bool:
    """A header with ``task_start(us)`` and ``stream_id`` is a task_time file."""
    lowered = {h.strip().lower() for h in header}
    return "task_start(us)" in lowered and "stream_id" in lowered


def read_task_time(path: Path) -> tuple[pl.DataFrame, tuple[int, ...]]:
    """Kernel and copy tasks of a task_time file (other tasks removed) and skipped lines."""
    table = read_csv_table(path, TASK_TIME_COLUMNS, what="task_time")
    frame = table.frame
    absent = [c for c in ("name", "accelerator_core") if c not in frame.columns]
    frame = frame.with_columns(pl.lit(None, pl.String).alias(c) for c in absent)
    # Duration: task_time(us) when present, else stop - start.
    duration = pl.col("duration_ns") if "duration_ns" in frame.columns else pl.lit(None, pl.Int64)
    if "stop_ns" in frame.columns:
        duration = duration.fill_null(pl.col("stop_ns") - pl.col("start_ns"))
    frame = frame.with_columns(duration.fill_null(0).alias("duration_ns"))
    task, name = pl.col("accelerator_core"), pl.col("name")
    frame = frame.with_columns(is_copy_task(task, name).alias("is_copy"))
    frame = frame.filter(is_kernel_task(task, name) | pl.col("is_copy"))
    frame = frame.drop("stop_ns", strict=False)
    return finish_frame(frame), table.skipped_lines
