"""kernel_details.csv (torch_npu) and op_summary_*.csv (msprof) → kernel table rows.

Columns by header name with aliases: docs/formats.md, "kernel_details.csv and op_summary_*.csv".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from overlap_check.readers.csvread import Column, read_csv_table
from overlap_check.readers.numbers import na_to_null

# As written by every version (upper case); listed literally, since upper-casing a
# million-row column costs more than the whole comparison.
COMMUNICATION_CORES = ("HCCL", "COMMUNICATION", "hccl", "communication", "Communication")

KERNEL_COLUMNS: tuple[Column, ...] = (
    Column("step", ("Step Id",), "int"),
    Column("device", ("Device_id", "Device Id"), "int"),
    Column("stream_id", ("Stream ID",), "int"),
    Column("task_id", ("Task ID",), "int"),
    Column("name", ("Name", "Op Name"), "str", required=True),
    Column("op_type", ("Type", "OP Type"), "str", na=True),
    Column("accelerator_core", ("Accelerator Core", "Task Type"), "str", na=True),
    Column("start_ns", ("Start Time(us)", "Task Start Time(us)"), "us", required=True, tab=True),
    Column(
        "duration_ns", ("Duration(us)", "Task Duration(us)"), "us", required=True, nonnegative=True
    ),
    Column("block_num", ("Block Num", "Block Dim"), "int"),
    Column("mix_block_num", ("Mix Block Num", "Mix Block Dim"), "int"),
)


# Optional kernel-table columns (table.OPTIONAL_KERNEL_SCHEMA), read only when asked for:
# the no-reference path parses none of them.
OPTIONAL_KERNEL_COLUMNS: dict[str, Column] = {
    "input_shapes": Column("input_shapes", ("Input Shapes",), "str", na=True),
}


def input_shapes_text(column: str = "input_shapes") -> pl.Expr:
    """The normalised ``input_shapes`` column, the same from every reader: the shapes text
    without the quotes kernel_details / op_summary wrap it in (``"8192,7168;7168"`` there,
    ``8192,7168;7168`` in the .db); ``N/A`` or blank (Level0) → null, not available."""
    return na_to_null(pl.col(column).str.strip_chars('"')).alias(column)


@dataclass(frozen=True)
class KernelFile:
    path: Path
    kernels: pl.DataFrame  # kernel-table columns (not yet conformed: no rank)
    has_streams: bool  # the file has a Stream ID column
    skipped_lines: tuple[int, ...]


def communication_flag(core: pl.Expr, name: pl.Expr) -> pl.Expr:
    """HCCL / COMMUNICATION rows; with no core (Level0 ``N/A``), an ``hcom_`` op name."""
    by_core = core.is_in(COMMUNICATION_CORES)
    by_name = core.is_null() & name.str.starts_with("hcom_")
    return (by_core | by_name).fill_null(False)


def finish_kernels(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Common tail of every reader: end_ns, communication rows without stream (text N/A
    already null)."""
    columns = frame.collect_schema().names()
    out = frame
    core = pl.col("accelerator_core") if "accelerator_core" in columns else pl.lit(None, pl.String)
    out = out.with_columns(
        communication_flag(core, pl.col("name")).alias("is_communication"),
        (pl.col("start_ns") + pl.col("duration_ns")).alias("end_ns"),
    )
    if "stream_id" in columns:
        out = out.with_columns(
            pl.when(pl.col("is_communication"))
            .then(None)
            .otherwise(pl.col("stream_id"))
            .alias("stream_id")
        )
    return out.drop("duration_ns")


def finish_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """:func:`finish_kernels` for an eager frame, after ``N/A`` → null in its text columns."""
    texts = [
        na_to_null(pl.col(c)).alias(c)
        for c in ("op_type", "accelerator_core")
        if c in frame.columns
    ]
    return finish_kernels(frame.lazy().with_columns(texts)).collect()


# The last hard-linked kernel file this process read, by identity: the ranks of a cluster
# copied from one capture share one file, and a worker reads them one after another
# (workers.reduce_all orders them so). A file with one link is never kept: no memory held.
_linked: tuple[tuple[int, int, int, int, bool], KernelFile] | None = None


def read_kernel_csv(path: Path, *, shapes: bool = False) -> KernelFile:
    """Read kernel_details.csv or an op_summary_*.csv (``shapes``: with Input Shapes)."""
    global _linked
    try:
        stat = path.stat()
    except OSError:  # read_csv_table names the file
        stat = None
    if stat is None or stat.st_nlink < 2:
        return _read_kernel_csv(path, shapes)
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, shapes)
    if _linked is None or _linked[0] != key:
        _linked = None  # the old table is freed before the new one is read
        _linked = (key, _read_kernel_csv(path, shapes))
    return replace(_linked[1], path=path)


def _read_kernel_csv(path: Path, shapes: bool) -> KernelFile:
    columns = KERNEL_COLUMNS + ((OPTIONAL_KERNEL_COLUMNS["input_shapes"],) if shapes else ())
    table = read_csv_table(path, columns, what="kernel_details / op_summary", finish=finish_kernels)
    frame = table.frame
    if "input_shapes" in frame.columns:
        frame = frame.with_columns(input_shapes_text())
    return KernelFile(
        path=path,
        kernels=frame,
        has_streams="stream_id" in table.fields,
        skipped_lines=table.skipped_lines,
    )
