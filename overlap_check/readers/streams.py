"""Give Level0 kernel rows their Stream IDs from another file of the same capture.

Level0 kernel_details.csv has no ``Stream ID``; trace_view.json, the .db and
task_time.csv list the same kernels with their stream. They come from the same
device records, so a kernel's start time is identical to the ns in all of them
(checked on the real Level0 capture: 187 of 187 rows match by start text).

Rule: a compute row takes the stream of the task with the same ``start_ns``
and the same name; failing that (task_time names binary kernels, not ops), of
the only task starting at that ns. A key shared by tasks on different streams
is ambiguous and gives nothing. Communication rows keep a null stream. Rows
left without a stream are counted, and the caller notes them.
"""

from __future__ import annotations

import polars as pl


def _unique_streams(tasks: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per key: its stream (and a task id) when every task with that key is on one stream."""
    return (
        tasks.group_by(keys)
        .agg(
            pl.col("stream_id").n_unique().alias("__streams"),
            pl.col("stream_id").first().alias("__stream"),
            pl.col("task_id").first().alias("__task"),
        )
        .filter(pl.col("__streams") == 1)
        .drop("__streams")
    )


def attach_streams(kernels: pl.DataFrame, tasks: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``kernels`` with ``stream_id`` (and missing ``task_id``) filled from ``tasks``.

    Returns the new table and the number of compute rows still without a stream.
    ``tasks`` must be kernel tasks only (non-kernel tasks already removed).
    """
    work = kernels
    for column in ("stream_id", "task_id"):
        if column not in work.columns:
            work = work.with_columns(pl.lit(None, pl.Int64).alias(column))
    known = tasks.filter(~pl.col("is_communication") & pl.col("stream_id").is_not_null()).select(
        "start_ns",
        "name",
        "stream_id",
        pl.col("task_id").cast(pl.Int64)
        if "task_id" in tasks.columns
        else pl.lit(None, pl.Int64).alias("task_id"),
    )
    by_name = _unique_streams(known, ["start_ns", "name"])
    by_start = _unique_streams(known, ["start_ns"])
    joined = (
        work.with_row_index("__row")
        .join(by_name, on=["start_ns", "name"], how="left")
        .join(by_start, on="start_ns", how="left", suffix="_start")
    )
    compute = ~pl.col("is_communication")
    stream = pl.coalesce(pl.col("stream_id"), pl.col("__stream"), pl.col("__stream_start"))
    task = pl.coalesce(pl.col("task_id"), pl.col("__task"), pl.col("__task_start"))
    out = (
        joined.with_columns(
            pl.when(compute).then(stream).alias("stream_id"),
            pl.when(compute).then(task).otherwise(pl.col("task_id")).alias("task_id"),
        )
        .sort("__row")
        .drop("__row", "__stream", "__task", "__stream_start", "__task_start")
    )
    missing = out.filter(compute & pl.col("stream_id").is_null()).height
    return out, missing
