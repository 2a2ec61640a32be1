"""The one normalised kernel table every stage works on.

Readers are the only code that knows Ascend column names; they all produce a polars DataFrame
with exactly the columns of :data:`KERNEL_SCHEMA`, in this order, sorted by (device, start_ns).
Times are integer ns on the capture's own clock, comparable only inside one capture. Non-kernel
tasks (event record/wait, notify ...) are never in it: their duration is waiting, not work. Copy
tasks are kept (a copy plan hides them under compute) but, like communication rows, they are
never compute: :func:`is_compute` is the one definition every stage filters with."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from overlap_check.model.intervals import I64

# null where the capture does not say (N/A, an absent column)
KERNEL_SCHEMA: dict[str, pl.DataType] = {
    "rank": pl.Int32(),
    "device": pl.Int32(),
    "step": pl.Int64(),  # profiler step (Step Id, ProfilerStep#N)
    "stream_id": pl.Int64(),  # null for communication rows
    "task_id": pl.Int64(),
    "name": pl.String(),  # operator / kernel name
    "op_type": pl.String(),  # operator type (Type / OP Type)
    "accelerator_core": pl.String(),  # AI_CORE, MIX_AIV, AI_CPU, DSA_SQE, HCCL ... (Level0: null)
    "is_communication": pl.Boolean(),  # HCCL / COMMUNICATION rows: never a compute stream
    "is_copy": pl.Boolean(),  # MEMCPY_ASYNC, SDMA, PCIE_DMA ...: only a copy plan reads them
    "start_ns": pl.Int64(),  # exact integer ns parsed from the decimal text
    "end_ns": pl.Int64(),  # start_ns + duration
    "block_num": pl.Int64(),  # Block Num / Block Dim
    "mix_block_num": pl.Int64(),  # Mix Block Num / Mix Block Dim
}

KERNEL_COLUMNS: tuple[str, ...] = tuple(KERNEL_SCHEMA)

# Columns a reader adds only when asked (input_shapes: for a reference, measure/shapes.py);
# conform() keeps them, after the canonical ones, when present.
OPTIONAL_KERNEL_SCHEMA: dict[str, pl.DataType] = {"input_shapes": pl.String()}


def i64_column(frame: pl.DataFrame, column: str) -> I64:
    """A table's integer column as an int64 numpy array (no copy when it can be avoided)."""
    return frame.get_column(column).to_numpy().astype(np.int64, copy=False)


def empty_kernel_table() -> pl.DataFrame:
    """A kernel table with no rows and the canonical schema."""
    return pl.DataFrame(schema=KERNEL_SCHEMA)


def conform(frame: pl.DataFrame) -> pl.DataFrame:
    """Select, cast and order columns to the canonical schema (missing ones null), sorted by
    (device, start_ns) so that every reader returns the same order."""
    exprs = []
    for column, dtype in KERNEL_SCHEMA.items():
        if column == "is_copy" and column in frame.columns:
            exprs.append(pl.col(column).cast(dtype).fill_null(False))
        elif column == "is_copy":  # readers without copy tasks: none is a copy
            exprs.append(pl.lit(False).alias(column))
        elif column in frame.columns:
            exprs.append(pl.col(column).cast(dtype))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(column))
    exprs += [
        pl.col(column).cast(dtype)
        for column, dtype in OPTIONAL_KERNEL_SCHEMA.items()
        if column in frame.columns
    ]
    table = frame.select(exprs)
    # Files are usually sorted already (one device, rows by start): checking is far
    # cheaper than sorting a million rows again.
    if table.height < 2 or (
        table["device"].n_unique() == 1
        and table["start_ns"].null_count() == 0
        and table["start_ns"].is_sorted()
    ):
        return table
    return table.sort(["device", "start_ns"], nulls_last=True, maintain_order=True)


# What the overlap analysis reads of compute kernels (busy sets, plans, steps).
# op_type: barriers are named by operator type (Cast -> Swish) where the table has one
ANALYSIS_COLUMNS = (
    "step",
    "stream_id",
    "name",
    "op_type",
    "start_ns",
    "end_ns",
    "is_communication",
)


def is_compute(columns: Sequence[str]) -> pl.Expr:
    """A compute row: not communication, not a copy, with a Stream ID (a table without
    ``is_copy`` in ``columns`` holds no copy rows)."""
    compute = ~pl.col("is_communication") & pl.col("stream_id").is_not_null()
    if "is_copy" in columns:
        compute = compute & ~pl.col("is_copy").fill_null(False)
    return compute.fill_null(False)


def is_unplaced(columns: Sequence[str]) -> pl.Expr:
    """Boolean expression: a kernel row left without a stream (neither communication nor a
    copy, no Stream ID: a Level0 row no task matched, a Stream ID N/A): Capture.unplaced_rows."""
    unplaced = ~pl.col("is_communication") & pl.col("stream_id").is_null()
    if "is_copy" in columns:
        unplaced = unplaced & ~pl.col("is_copy").fill_null(False)
    return unplaced.fill_null(False)


def without_copies(kernels: pl.DataFrame) -> pl.DataFrame:
    """The table without its copy rows: what every stage but a copy plan reads (core
    rules, contention, helper streams, pictures see kernels and communication only)."""
    if "is_copy" not in kernels.columns or not kernels.get_column("is_copy").any():
        return kernels
    return kernels.filter(~pl.col("is_copy").fill_null(False))


def compute_kernels(kernels: pl.DataFrame, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """The :func:`is_compute` rows (only ``columns``, if given); a table with nothing to
    drop is returned as it is, not copied."""
    keep = kernels.select(is_compute(kernels.columns)).to_series()
    if columns is not None:
        kernels = kernels.select(columns)
    return kernels if keep.all() else kernels.filter(keep)
