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

Cost: nearly every start belongs to one task, and then both keys give that
task whatever the name; those rows are found by a binary search over the
sorted starts (no join, no re-sort of the kernel table). Only the few starts
shared by several tasks go through the grouping by (start, name).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from overlap_check.model.table import is_compute

# what a kernel row takes from its task: stream, task id, and the task's core type
_LOOKUP = {"__stream": pl.Int64, "__task": pl.Int64, "__core": pl.String}
_OF = {"__stream": "stream_id", "__task": "task_id", "__core": "accelerator_core"}
# task types that name no core kind (older generations type every task Other)
_NO_CORE = ("Other", "N/A", "")


def _unique_streams(tasks: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Per key: its stream (and a task id) when every task with that key is on one stream."""
    return (
        tasks.group_by(keys)
        .agg(
            pl.col("stream_id").n_unique().alias("__streams"),
            pl.col("stream_id").first().alias("__stream"),
            pl.col("task_id").first().alias("__task"),
            pl.col("accelerator_core").first().alias("__core"),
        )
        .filter(pl.col("__streams") == 1)
        .drop("__streams")
    )


def _lone_starts(kernels: pl.DataFrame, lone: pl.DataFrame) -> pl.DataFrame:
    """Per kernel row: stream and task of the only task at its start, else nulls.

    ``lone`` holds tasks with distinct starts, sorted by start.
    """
    keys = lone["start_ns"].to_numpy()
    starts = kernels["start_ns"]
    values = starts.fill_null(0).to_numpy()
    if len(keys) == 0:
        return pl.DataFrame(
            {name: pl.repeat(None, len(values), dtype=t, eager=True) for name, t in _LOOKUP.items()}
        )
    at = np.searchsorted(keys, values).clip(max=len(keys) - 1)
    hit = pl.Series(starts.is_not_null().to_numpy() & (keys[at] == values))
    return lone[at].select(pl.when(hit).then(pl.col(_OF[name])).alias(name) for name in _LOOKUP)


def _shared_starts(kernels: pl.DataFrame, shared: pl.DataFrame) -> pl.DataFrame:
    """Per kernel row: stream and task by (start, name), else by start, among shared starts."""
    by_name = _unique_streams(shared, ["start_ns", "name"])
    by_start = _unique_streams(shared, ["start_ns"])
    rows = (
        kernels.select("start_ns", "name")
        .with_row_index("__row")
        .filter(pl.col("start_ns").is_in(shared["start_ns"].unique().to_list()))
        .join(by_name, on=["start_ns", "name"], how="left")
        .join(by_start, on="start_ns", how="left", suffix="_start")
    )
    found = rows.select(
        "__row", *(pl.coalesce(name, f"{name}_start").alias(name) for name in _LOOKUP)
    )
    return pl.DataFrame(
        [
            pl.repeat(None, kernels.height, dtype=t, eager=True)
            .scatter(found["__row"], found[name])
            .alias(name)
            for name, t in _LOOKUP.items()
        ]
    )


def attach_streams(kernels: pl.DataFrame, tasks: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``kernels`` with ``stream_id`` (and missing ``task_id``) filled from ``tasks``, and a
    compute row's unknown ``accelerator_core`` (Level0: N/A) from its task's type where that
    names a core kind (the 910A trace types its AI_CPU masks ``AI_CPU``, its AI Core
    kernels ``Other``): helper streams (hiding.helper_streams) read it.

    Returns the new table and the number of compute rows still without a stream.
    ``tasks``: a reader's table; only its compute rows (:func:`table.is_compute`) count.
    """
    work = kernels
    for column, kind in (("stream_id", pl.Int64), ("task_id", pl.Int64)):
        if column not in work.columns:
            work = work.with_columns(pl.lit(None, kind).alias(column))
    known = (
        tasks.filter(is_compute(tasks.columns) & pl.col("start_ns").is_not_null())
        .select(
            pl.col("start_ns").cast(pl.Int64),
            "name",
            pl.col("stream_id").cast(pl.Int64),
            pl.col("task_id").cast(pl.Int64)
            if "task_id" in tasks.columns
            else pl.lit(None, pl.Int64).alias("task_id"),
            pl.col("accelerator_core")
            .cast(pl.String)
            .replace(list(_NO_CORE), [None] * len(_NO_CORE))
            if "accelerator_core" in tasks.columns
            else pl.lit(None, pl.String).alias("accelerator_core"),
        )
        .sort("start_ns", maintain_order=True)  # stable: a key's "first" task stays the file's
    )
    # a start held by one task gives that task by either key, whatever the name
    starts = known["start_ns"]
    shared = ((starts == starts.shift(1)) | (starts == starts.shift(-1))).fill_null(False)
    found = _lone_starts(work, known.filter(~shared))
    if shared.any():
        more = _shared_starts(work, known.filter(shared))
        found = found.select(pl.coalesce(found[c], more[c]).alias(c) for c in _LOOKUP)
    compute = ~pl.col("is_communication")
    stream = pl.coalesce(pl.col("stream_id"), found["__stream"])
    task = pl.coalesce(pl.col("task_id"), found["__task"])
    filled = [
        pl.when(compute).then(stream).alias("stream_id"),
        pl.when(compute).then(task).otherwise(pl.col("task_id")).alias("task_id"),
    ]
    if "accelerator_core" in work.columns:
        core = pl.coalesce(pl.col("accelerator_core"), found["__core"])
        filled.append(
            pl.when(compute)
            .then(core)
            .otherwise(pl.col("accelerator_core"))
            .alias("accelerator_core")
        )
    out = work.with_columns(filled)
    missing = out.filter(compute & pl.col("stream_id").is_null()).height
    return out, missing
