"""Write kernels as a minimal Kineto (PyTorch profiler) trace, the input HTA reads.

One ``X`` event per kernel with ``cat: "kernel"``, ``ts`` / ``dur`` in µs with
three decimals (Kineto's own format; exact decimal text of the integer ns), and
``args`` with ``device``, ``stream``, ``correlation`` and ``External id``, as
``cudaLaunchKernel`` kernels carry them. HTA needs ``distributedInfo.rank`` to
map the file to a rank (``hta/common/trace_file.py``) and finds kernels by a
non-negative ``stream`` arg. No ``ProfilerStep#`` annotations are written, so
HTA keeps every kernel (it otherwise drops kernels whose launch is not inside a
complete profiler step, ``Trace._filter_irrelevant_gpu_kernels``).

Lines are built with polars string expressions: ``json.dumps`` of a million
dicts would dominate the benchmark's generation time.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl


def _us_text(ns: pl.Expr) -> pl.Expr:
    """Exact µs decimal text of a non-negative int64 ns value: 1234567 -> "1234.567"."""
    return pl.concat_str(
        [(ns // 1000).cast(pl.String), pl.lit("."), (ns % 1000).cast(pl.String).str.zfill(3)]
    )


def kernel_events(kernels: pl.DataFrame, device: int = 0, pid: int = 0) -> pl.Series:
    """One JSON object (text) per compute kernel of a synth kernel frame."""
    compute = kernels.filter(pl.col("stream_id").is_not_null()).with_row_index("corr", offset=1)
    # JSON-escape each distinct name once (a few names, a million rows)
    distinct = compute.get_column("name").unique().to_list()
    names = compute.get_column("name").replace_strict(
        {name: json.dumps(name) for name in distinct}, return_dtype=pl.String
    )
    line = pl.concat_str(
        [
            pl.lit('{"ph": "X", "cat": "kernel", "name": '),
            pl.col("_name_json"),
            pl.lit(f', "pid": {pid}, "tid": '),
            pl.col("stream_id").cast(pl.String),
            pl.lit(', "ts": '),
            _us_text(pl.col("start_ns")),
            pl.lit(', "dur": '),
            _us_text(pl.col("dur_ns")),
            pl.lit(f', "args": {{"device": {device}, "stream": '),
            pl.col("stream_id").cast(pl.String),
            pl.lit(', "correlation": '),
            pl.col("corr").cast(pl.String),
            pl.lit(', "External id": '),
            pl.col("corr").cast(pl.String),
            pl.lit("}}"),
        ]
    )
    return compute.with_columns(names.alias("_name_json")).select(line.alias("event")).to_series()


def write_kineto_trace(
    kernels: pl.DataFrame, path: Path, *, rank: int = 0, base_time_ns: int = 0
) -> Path:
    """Write ``path`` (``*.json``) holding the compute kernels of ``kernels``."""
    header = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "synthetic", "totalGlobalMem": 0}],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 1},
        "baseTimeNanoseconds": base_time_ns,
    }
    events = kernel_events(kernels)
    head = json.dumps(header, indent=1)[:-2]  # drop the closing "\n}" to append traceEvents
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        out.write(head + ',\n "traceEvents": [\n')
        out.write(",\n".join(events.to_list()))
        out.write("\n ]\n}\n")
    return path
