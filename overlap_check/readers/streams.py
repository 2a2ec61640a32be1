"""Give Level0 kernel rows their Stream IDs from another file of the same capture.

The pairing rule: docs/formats.md, "Streams for Level0 captures". Cost: nearly every
start belongs to one row and one task, paired by a binary search over the sorted
starts; only the rest go through one join per key, no per-row Python."""

from __future__ import annotations

import numpy as np
import polars as pl

from overlap_check.model.table import is_compute

# what a kernel row takes from its task: stream, task id, and the task's core type
_LOOKUP = {"__stream": pl.Int64, "__task": pl.Int64, "__core": pl.String}
_OF = {"__stream": "stream_id", "__task": "task_id", "__core": "accelerator_core"}
# task types that name no core kind (older generations type every task Other)
_NO_CORE = ("Other", "N/A", "")
# the one-to-one keys, strongest first
_KEYS = (["start_ns", "name", "dur"], ["start_ns", "name"], ["start_ns", "dur"])


def _duration(frame: pl.DataFrame) -> pl.Expr:
    if "duration_ns" in frame.columns:
        return pl.col("duration_ns").cast(pl.Int64).alias("dur")
    if "end_ns" in frame.columns:
        return (pl.col("end_ns") - pl.col("start_ns")).cast(pl.Int64).alias("dur")
    return pl.lit(None, pl.Int64).alias("dur")


def _alone(values: np.ndarray) -> np.ndarray:
    """Per value of a sorted array: no neighbour equals it."""
    alone = np.ones(len(values), dtype=bool)
    same = values[1:] == values[:-1]
    alone[1:] &= ~same
    alone[:-1] &= ~same
    return alone


def _lone_pairs(
    rows: pl.DataFrame, tasks: pl.DataFrame
) -> tuple[pl.DataFrame, pl.Series, pl.Series]:
    """The pairs of a start held by one row and one task (nearly all of them: every key
    pairs them, whatever the name), by a binary search; and masks of the rows and tasks
    left. ``tasks`` is sorted by start; starts are not null."""
    starts = tasks["start_ns"].to_numpy()
    values = rows["start_ns"].to_numpy()
    if not len(starts) or not len(values):
        none = pl.DataFrame(schema={"__row": pl.UInt32, "__t": pl.UInt32})
        keep = [
            pl.repeat(True, n, dtype=pl.Boolean, eager=True) for n in (len(values), len(starts))
        ]
        return none, keep[0], keep[1]
    order = np.argsort(values, kind="stable")
    row_alone = np.empty(len(values), dtype=bool)
    row_alone[order] = _alone(values[order])
    at = np.searchsorted(starts, values).clip(max=len(starts) - 1)
    direct = row_alone & (starts[at] == values) & _alone(starts)[at]
    tasks_left = np.ones(len(starts), dtype=bool)
    tasks_left[at[direct]] = False
    pairs = pl.DataFrame(
        {
            "__row": rows["__row"].filter(pl.Series(direct)),
            "__t": pl.Series(at[direct], dtype=pl.UInt32),
        }
    )
    return pairs, pl.Series(~direct), pl.Series(tasks_left)


def _pair(rows: pl.DataFrame, tasks: pl.DataFrame) -> pl.DataFrame:
    """``__row`` → ``__t`` (task position), one to one, by :data:`_KEYS` in turn; under a
    key without the duration, the n-th shortest row takes the n-th shortest task (equal
    durations in file order), so durations rounded apart by a file still pair right."""
    found: list[pl.DataFrame] = []
    for keys in _KEYS:
        if not rows.height or not tasks.height:
            break
        nth = pl.int_range(pl.len()).over(keys).alias("__nth")
        ordered = [
            side.drop_nulls(keys).sort("dur", nulls_last=True, maintain_order=True)
            for side in (rows, tasks)
        ]
        pairs = (
            ordered[0]
            .with_columns(nth)
            .join(ordered[1].with_columns(nth), on=[*keys, "__nth"], how="inner")
            .select("__row", "__t")
        )
        found.append(pairs)
        rows = rows.join(pairs, on="__row", how="anti")
        tasks = tasks.join(pairs, on="__t", how="anti")
    if rows.height and tasks.height:  # by start alone, where one stream is left there
        lone = (
            tasks.group_by("start_ns")
            .agg(pl.col("stream_id").n_unique().alias("__n"), pl.col("__t").min())
            .filter(pl.col("__n") == 1)
        )
        found.append(rows.join(lone, on="start_ns", how="inner").select("__row", "__t"))
    return (
        pl.concat(found) if found else pl.DataFrame(schema={"__row": pl.UInt32, "__t": pl.UInt32})
    )


def attach_streams(kernels: pl.DataFrame, tasks: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``kernels`` with ``stream_id``, a missing ``task_id`` and an unknown (Level0)
    ``accelerator_core`` filled from the paired compute task of ``tasks`` (its type where
    it names a core: helper streams read it); and the compute rows left without a stream."""
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
            _duration(tasks),
        )
        .filter(pl.col("stream_id").is_not_null())
        .sort("start_ns", maintain_order=True)  # stable: equal keys keep the file's order
    )
    rows = (
        work.with_row_index("__row")
        .filter(~pl.col("is_communication") & pl.col("start_ns").is_not_null())
        .select("__row", "start_ns", "name", _duration(work))
    )
    tasks = known.select("start_ns", "name", "stream_id", "dur").with_row_index("__t")
    lone, rows_left, tasks_left = _lone_pairs(rows, tasks)
    pairs = pl.concat([lone, _pair(rows.filter(rows_left), tasks.filter(tasks_left))])
    taken = known.select(*(pl.col(_OF[name]).alias(name) for name in _LOOKUP))[pairs["__t"]]
    found = pl.DataFrame(
        [
            pl.repeat(None, work.height, dtype=t, eager=True)
            .scatter(pairs["__row"], taken[name])
            .alias(name)
            for name, t in _LOOKUP.items()
        ]
    )
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
