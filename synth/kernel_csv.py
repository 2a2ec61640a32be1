"""kernel_details.csv (torch_npu) and op_summary_*.csv (msprof), vectorised.

Headers are the exact strings of real files (docs/formats.md); values are
rendered per version: start ``us3`` + TAB (2025+) or ``us_short`` (2023);
durations ``us_repr`` (2025), ``us3`` (2026), ``us_short`` (2023); Wait Time
``0`` on the first row, then ``us_repr`` / ``us6`` / ``us_short``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from synth import fmt
from synth.model import Variant

MODEL_ID_NONE = "4294967295"


def _split(header_text: str) -> tuple[str, ...]:
    """Column names as they appear in a real header line."""
    return tuple(header_text.split(","))


METRICS_2023 = _split(
    "aicore_time(us),aic_total_cycles,aic_l0a_read_bw(GB/s),aic_l0a_write_bw(GB/s),"
    "aic_l0b_read_bw(GB/s),aic_l0b_write_bw(GB/s),aic_l0c_read_bw_cube(GB/s),"
    "aic_l0c_write_bw_cube(GB/s),aiv_time(us),aiv_total_cycles,aiv_l0c_read_bw(GB/s),"
    "aiv_l0c_write_bw(GB/s)"
)
METRICS_PIPE = _split(
    "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
    "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,"
    "aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),"
    "aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)"
)
# msprof CLI op_summary, real 2026-08 capture
METRICS_MEMORY = _split(
    "aicore_time(us),aic_total_cycles,aic_l1_read_bw(GB/s),aic_l1_write_bw(GB/s),"
    "aic_main_mem_read_bw(GB/s),aic_main_mem_write_bw(GB/s),aic_l2_read_bw(GB/s),"
    "aic_l2_write_bw(GB/s),aiv_time(us),aiv_total_cycles,aiv_ub_read_bw(GB/s),"
    "aiv_ub_write_bw(GB/s),aiv_main_mem_read_bw(GB/s),aiv_main_mem_write_bw(GB/s),"
    "aiv_l2_read_bw(GB/s),aiv_l2_write_bw(GB/s)"
)
SHAPE_COLUMNS = (
    "Input Shapes",
    "Input Data Types",
    "Input Formats",
    "Output Shapes",
    "Output Data Types",
    "Output Formats",
)

# op type -> (input shapes, input types, input formats, output shapes, types, formats)
_SHAPES: dict[str, tuple[str, str, str, str, str, str]] = {
    "MatMulV3": (
        '"8192,7168;7168,2048"',
        "DT_BF16;DT_BF16",
        "ND;ND",
        '"8192,2048"',
        "DT_BF16",
        "ND",
    ),
    "GroupedMatmul": (
        '"2048,7168;8,7168,4096;;;;;;8"',
        "DT_BF16;DT_BF16;FLOAT;UINT64;FLOAT;FLOAT16;FLOAT16;INT64",
        "ND;NCL;ND;ND;ND;ND;ND;ND",
        '"2048,4096"',
        "DT_BF16",
        "ND",
    ),
    "SwiGlu": ('"8192,4096"', "DT_BF16", "ND", '"8192,2048"', "DT_BF16", "ND"),
    "RmsNorm": (
        '"8192,7168;7168"',
        "DT_BF16;DT_BF16",
        "ND;ND",
        '"8192,7168;8192,1"',
        "DT_BF16;FLOAT",
        "ND;ND",
    ),
    "Cast": ('"8192,7168"', "DT_BF16", "ND", '"8192,7168"', "FLOAT", "ND"),
    "DSAGenBitMask": ("N/A", "N/A", "N/A", '"36864"', "UINT8", "FORMAT_ND"),
    "TransData": ('"32,3,224,224"', "FLOAT", "NCHW", '"32,1,224,224,8"', "FLOAT", "NC1HWC0"),
    "MoeGatingTopKSoftmax": (
        '"8192,256;"',
        "DT_BF16;DT_BF16",
        "ND;ND",
        '"8192,8;8192,8;8192,8"',
        "DT_BF16;INT32;INT32",
        "ND;ND;ND",
    ),
}
_DEFAULT_SHAPES = ('"8192,7168"', "DT_BF16", "ND", '"8192,7168"', "DT_BF16", "ND")


@dataclass(frozen=True)
class Layout:
    """Header and value styles of one flavour of kernel table."""

    columns: tuple[str, ...]
    version: str
    level0: bool
    op_summary: bool  # msprof names: Op Name, OP Type, Task Type, Task Start Time(us) ...


def kernel_details_header(variant: Variant, with_step: bool) -> tuple[str, ...]:
    block, mix = (
        ("Block Num", "Mix Block Num")
        if variant.version == "2026"
        else ("Block Dim", "Mix Block Dim")
    )
    step = ["Step Id"] if with_step else []
    times = ["Start Time(us)", "Duration(us)", "Wait Time(us)"]
    if variant.level0:
        # 2023 (torch_npu v2.1.0) and 2026 keep a Device_id column; 2025-01 files do not
        device = [] if variant.version == "2025" else ["Device_id"]
        return tuple(step + device + ["Name", "Type", "Accelerator Core", *times, block])
    device = ["Device_id"] if variant.version == "2026" else []
    state = [] if variant.version == "2023" else ["OP State"]
    metrics = METRICS_2023 if variant.version == "2023" else METRICS_PIPE
    return tuple(
        step
        + device
        + ["Model ID", "Task ID", "Stream ID", "Name", "Type", *state, "Accelerator Core"]
        + times
        + [block, mix, "HF32 Eligible", *SHAPE_COLUMNS, "Context ID", *metrics]
    )


def op_summary_header(version: str = "2026") -> tuple[str, ...]:
    block, mix = (
        ("Block Num", "Mix Block Num") if version == "2026" else ("Block Dim", "Mix Block Dim")
    )
    base = _split(
        "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
        "Task Start Time(us),Task Duration(us),Task Wait Time(us)"
    )
    return (*base, block, mix, "HF32 Eligible", *SHAPE_COLUMNS, "Context ID", *METRICS_MEMORY)


# ------------------------------------------------------------------------ value expressions

_C = pl.col
_NA = pl.lit("N/A")


def _comm_core(version: str) -> pl.Expr:
    return pl.lit("COMMUNICATION" if version == "2026" else "HCCL")


def _metric(name: str, index: int) -> pl.Expr:
    aic_row = _C("core").is_in(["AI_CORE", "MIX_AIC"])
    aiv_row = _C("core").is_in(["AI_VECTOR_CORE", "MIX_AIV"])
    own = aiv_row if name.startswith("aiv_") else aic_row
    busy_ns = _C("dur_ns") * 97 // 100
    # a ratio in thousandths, fixed per op type and block count (so rows with equal
    # (core, type, duration, blocks) share their metrics and render once)
    seed = (
        _C("op_type").str.len_chars().cast(pl.Int64) * 37 + _C("block") * 13 + index * 11
    ) % 900 + 50
    if name.endswith("_cycles"):
        value = (busy_ns * 18 * pl.max_horizontal(_C("block"), pl.lit(1)) // 10).cast(pl.String)
        zero = pl.lit("0")
    elif name == "cube_utilization(%)":
        value, zero = fmt.us_repr_expr(seed * 100), pl.lit("0")
    elif name in ("aicore_time(us)", "aiv_time(us)"):
        value, zero = fmt.us_repr_expr(busy_ns), pl.lit("0.0")
    elif name.endswith("(us)"):
        value, zero = fmt.us_repr_expr(busy_ns * seed // 1000), pl.lit("0.0")
    elif name.endswith("(GB/s)"):
        value, zero = fmt.us_repr_expr(seed * 7), pl.lit("0.0")
    else:
        value, zero = fmt.us_repr_expr(seed), pl.lit("0.0")
    return pl.when(~(aic_row | aiv_row)).then(_NA).when(own).then(value).otherwise(zero)


def _shape(index: int) -> pl.Expr:
    mapping = {op: shapes[index] for op, shapes in _SHAPES.items()}
    by_type = _C("op_type").replace_strict(
        mapping, default=_DEFAULT_SHAPES[index], return_dtype=pl.String
    )
    if index == 0:  # a kernel's own Input Shapes (synth.model.Kernel) before its type's
        return pl.coalesce(_C("input_shapes"), by_type)
    return by_type


def input_shapes_expr() -> pl.Expr:
    """A kernel's Input Shapes as kernel_details writes them (quoted): its own
    (``input_shapes``), else its operator type's; the .db writer uses them too."""
    return _shape(SHAPE_COLUMNS.index("Input Shapes"))


def _start(version: str, quoted: bool) -> pl.Expr:
    if version == "2023":
        return fmt.us_short_expr(_C("start_ns"))
    text = pl.concat_str([fmt.us3_expr(_C("start_ns")), pl.lit("\t")])
    return pl.concat_str([pl.lit('"'), text, pl.lit('"')]) if quoted else text


def _duration(version: str) -> pl.Expr:
    ns = _C("dur_ns")
    return {"2023": fmt.us_short_expr, "2025": fmt.us_repr_expr, "2026": fmt.us3_expr}[version](ns)


def _wait(version: str) -> pl.Expr:
    ns = _C("wait_ns")
    text = {"2023": fmt.us_short_expr, "2025": fmt.us_repr_expr, "2026": fmt.us6_expr}[version](ns)
    return pl.when(_C("_first")).then(pl.lit("0")).otherwise(text)


def _simple(name: str, version: str, quoted_start: bool) -> pl.Expr | None:
    """Columns that read the same for compute and communication rows."""
    if name == "Step Id":
        return _C("step").cast(pl.String).fill_null("")
    if name == "Device_id":
        return _C("device").cast(pl.String).fill_null("")
    if name == "Model ID":
        return pl.lit(MODEL_ID_NONE)
    if name in ("Start Time(us)", "Task Start Time(us)"):
        return _start(version, quoted_start)
    if name in ("Duration(us)", "Task Duration(us)"):
        return _duration(version)
    if name in ("Wait Time(us)", "Task Wait Time(us)"):
        return _wait(version)
    if name in ("Name", "Op Name"):
        return fmt.csv_quote_expr(_C("name"))
    return None


def _compute_only(name: str) -> pl.Expr | None:
    """Columns of compute rows that are N/A on communication rows."""
    if name == "Task ID":
        return _C("task_id").cast(pl.String)
    if name == "Stream ID":
        return _C("stream_id").cast(pl.String)
    if name == "OP State":
        return pl.lit("dynamic")
    if name in ("Mix Block Dim", "Mix Block Num"):
        return _C("mix").cast(pl.String)
    if name == "HF32 Eligible":
        return pl.lit("NO")
    if name == "Context ID":
        return pl.when(_C("core").str.starts_with("MIX_")).then(pl.lit("0")).otherwise(_NA)
    if name in SHAPE_COLUMNS:
        return fmt.csv_quote_expr(_shape(SHAPE_COLUMNS.index(name)))
    return None


def _column(name: str, version: str, level0: bool, quoted_start: bool) -> pl.Expr:
    comm = _C("is_comm")
    simple = _simple(name, version, quoted_start)
    if simple is not None:
        return simple
    if name in ("Block Dim", "Block Num"):
        if level0:
            return pl.lit("0")
        return pl.when(comm).then(pl.lit("0")).otherwise(_C("block").cast(pl.String))
    if name in ("Type", "OP Type"):
        return (
            _NA
            if level0
            else pl.when(comm).then(_C("op_type")).otherwise(fmt.csv_quote_expr(_C("op_type")))
        )
    if name in ("Accelerator Core", "Task Type"):
        own = _NA if level0 else _C("core")
        return pl.when(comm).then(_comm_core(version)).otherwise(own)
    compute = _compute_only(name)
    if compute is not None:
        return pl.when(comm).then(_NA).otherwise(compute)
    if name in METRICS_PIPE or name in METRICS_2023 or name in METRICS_MEMORY:
        no_metrics = comm | _C("core").is_in(["AI_CPU", "DSA_SQE"])
        return pl.when(no_metrics).then(_NA).otherwise(_metric(name, hash_free_index(name)))
    raise ValueError(f"no generator for column {name!r}")


def hash_free_index(name: str) -> int:
    """A stable small number per metric name (Python's hash() is salted per process)."""
    return sum(ord(c) for c in name) % 89


_METRIC_KEYS = ["core", "op_type", "dur_ns", "block", "is_comm"]


def _is_metric(name: str) -> bool:
    return name in METRICS_PIPE or name in METRICS_2023 or name in METRICS_MEMORY


def render_lines(
    frame: pl.DataFrame,
    header: tuple[str, ...],
    version: str,
    level0: bool,
    quoted_start: bool = False,
) -> pl.Series:
    """One CSV line (without terminator) per row of a ``rows.finish`` frame.

    Metric columns (the trailing 12-25) depend only on _METRIC_KEYS: they are rendered
    once per distinct key and joined back, which keeps a million rows fast.
    """
    plain = [name for name in header if not _is_metric(name)]
    metrics = [name for name in header if _is_metric(name)]
    exprs = [_column(name, version, level0, quoted_start) for name in plain]
    if metrics:
        tails = (
            frame.select(_METRIC_KEYS)
            .unique()
            .with_columns(
                pl.concat_str(
                    [_column(name, version, level0, quoted_start) for name in metrics],
                    separator=",",
                ).alias("_metrics")
            )
        )
        # join, then restore row order (join(maintain_order=) is missing from older polars 1.x)
        frame = frame.with_row_index("_row").join(tails, on=_METRIC_KEYS, how="left").sort("_row")
        exprs.append(_C("_metrics"))
    return frame.select(pl.concat_str(exprs, separator=",").alias("line")).to_series()


def _chunks(frame: pl.DataFrame, size: int = 100_000) -> Iterator[pl.DataFrame]:
    for offset in range(0, max(frame.height, 1), size):
        yield frame.slice(offset, size)


def write_table(
    path: Path,
    frame: pl.DataFrame,
    header: tuple[str, ...],
    version: str,
    level0: bool,
    *,
    crlf: bool,
    quoted_start: bool = False,
) -> None:
    """Write header + rows, each line ending in the terminator (as csv.writer does)."""
    eol = "\r\n" if crlf else "\n"
    # Wait Time's "first row is 0" rule belongs to the file, not to a chunk
    frame = frame.with_columns((pl.int_range(pl.len()) == 0).alias("_first"))
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write(",".join(header) + eol)
        for chunk in _chunks(frame):
            if chunk.height == 0:
                break
            lines = render_lines(chunk, header, version, level0, quoted_start)
            out.write(eol.join(lines.to_list()) + eol)


def kernel_details_frame(frame: pl.DataFrame, device: int) -> pl.DataFrame:
    return frame.with_columns(pl.lit(device, pl.Int64).alias("device"))


def write_kernel_details(path: Path, frame: pl.DataFrame, variant: Variant, device: int) -> None:
    with_step = frame.height > 0 and frame["step"].is_not_null().any()
    header = kernel_details_header(variant, with_step)
    data = kernel_details_frame(frame, device)
    if variant.version == "2023" and variant.level0:
        # a 2023 CANN op_summary has no Device_id: torch_npu keeps the column, empty
        data = data.with_columns(pl.lit(None, pl.Int64).alias("device"))
    write_table(
        path,
        data,
        header,
        variant.version,
        variant.level0,
        crlf=variant.crlf,
        quoted_start=variant.quoted_start,
    )


def write_op_summary(path: Path, frame: pl.DataFrame, device: int, version: str = "2026") -> None:
    """msprof op_summary_<ts>.csv: LF line ends (real 2026 file), Device_id first."""
    write_table(
        path,
        kernel_details_frame(frame, device),
        op_summary_header(version),
        version,
        False,
        crlf=False,
    )
