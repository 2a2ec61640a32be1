"""The msprof CLI's PROF_* directory and the task_time table (docs/formats.md).

``PROF_000001_<17-digit start>_<16 alnum>/`` with ``device_N/info.json.N``
(DeviceInfo ai_core_num / aiv_num), ``host/`` and, unless torch_npu simplified
the data away, ``mindstudio_profiler_output/{op_summary,task_time,msprof}_<ts>.*``.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

import polars as pl

from synth import fmt, kernel_csv, trace
from synth.model import Scenario, task_spelling
from synth.rows import Frames

TASK_TIME_HEADER = (
    "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)"
)


def binary_kernel_name(name: str, op_type: str) -> str:
    """task_time's kernel_name: the compiled kernel, not the op (GroupedMatmul_0d2d…_102439707)."""
    digest = hashlib.md5(name.encode(), usedforsecurity=False).hexdigest()
    return f"{op_type}_{digest}_{zlib.crc32(name.encode()) % 1_000_000_000}"


def task_time_frame(frames: Frames) -> pl.DataFrame:
    """Kernels and non-kernel tasks, start order, with task_time's names and types."""
    k = frames.kernels.filter(~pl.col("is_comm"))
    names = {
        n: binary_kernel_name(n, t) for n, t in k.select("name", "op_type").unique().iter_rows()
    }
    kinds = {
        kind: task_spelling(kind).msprof_type for kind in frames.tasks["kind"].unique().to_list()
    }
    kernel_rows = k.select(
        pl.col("name").replace_strict(names, return_dtype=pl.String).alias("kernel_name")
        if names
        else pl.col("name").alias("kernel_name"),
        pl.col("core").alias("kernel_type"),
        "stream_id",
        "task_id",
        "start_ns",
        "dur_ns",
        "conn_id",
    )
    task_rows = frames.tasks.select(
        pl.lit("N/A").alias("kernel_name"),
        pl.col("kind").replace_strict(kinds, return_dtype=pl.String).alias("kernel_type")
        if kinds
        else pl.col("kind").alias("kernel_type"),
        "stream_id",
        "task_id",
        "start_ns",
        "dur_ns",
        "conn_id",
    )
    return pl.concat([kernel_rows, task_rows]).sort(["start_ns", "conn_id"])


def write_task_time(path: Path, frames: Frames, device: int, *, crlf: bool) -> None:
    rows = task_time_frame(frames)
    c = pl.col
    line = pl.concat_str(
        [
            pl.lit(str(device)),
            fmt.csv_quote_expr(c("kernel_name")),
            c("kernel_type"),
            c("stream_id").cast(pl.String),
            c("task_id").cast(pl.String),
            fmt.us3_expr(c("dur_ns")),
            pl.concat_str([fmt.us3_expr(c("start_ns")), pl.lit("\t")]),
            pl.concat_str([fmt.us3_expr(c("start_ns") + c("dur_ns")), pl.lit("\t")]),
        ],
        separator=",",
    )
    eol = "\r\n" if crlf else "\n"
    lines = [TASK_TIME_HEADER, *rows.select(line).to_series().to_list()]
    path.write_bytes((eol.join(lines) + eol).encode())


def device_info(scenario: Scenario, pid: int, rank_id: int) -> dict[str, Any]:
    """device_N/info.json.N, modelled on a real msprof capture (20/40 cores there)."""
    dev = scenario.device
    return {
        "cpuCores": 1,
        "cpuNums": 192,
        "memoryTotal": 2112305968,
        "DeviceInfo": [
            {
                "aic_frequency": "1800",
                "ai_cpu": "2,3,4,5,6",
                "env_type": 3,
                "ctrl_cpu_id": "ARMv8_Cortex_A55",
                "ctrl_cpu_core_num": 1,
                "ai_core_id": 0,
                "ctrl_cpu": "0",
                "aiv_frequency": "1800",
                "ctrl_cpu_endian_little": 1,
                "hwts_frequency": "49.999001",
                "id": dev,
                "ts_cpu_core_num": 0,
                "ai_cpu_core_num": 6,
                "ai_core_num": scenario.aicore,
                "aiv_num": scenario.vectorcore,
                "ai_cpu_core_id": 2,
                "aicpu_occupy_bitmap": 252,
            }
        ],
        "drvVersion": 467992,
        "jobInfo": "NA",
        "rank_id": rank_id,
        "OS": "Linux-5.10.0-182.0.0.95.oe2203sp3.aarch64-#1 SMP",
        "version": "1.0",
        "pid_name": "python",
        "platform_version": "5",
        "hostname": "localhost.localdomain",
        "hwtype": "aarch64",
        "devices": str(dev),
        "sysClockFreq": 100,
        "platform": "",
        "pid": str(pid),
    }


def host_info(pid: int) -> dict[str, Any]:
    return {
        "cpuCores": 1,
        "cpuNums": 192,
        "memoryTotal": 2112305968,
        "DeviceInfo": [],
        "jobInfo": "NA",
        "version": "1.0",
        "pid_name": "python",
        "hostname": "localhost.localdomain",
        "hwtype": "aarch64",
        "devices": "",
        "sysClockFreq": 100,
        "pid": str(pid),
    }


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def write_prof_skeleton(prof: Path, scenario: Scenario, pid: int, rank_id: int) -> None:
    dev = scenario.device
    (prof / f"device_{dev}").mkdir(parents=True, exist_ok=True)
    (prof / f"device_{dev}" / f"info.json.{dev}").write_text(
        _compact(device_info(scenario, pid, rank_id))
    )
    (prof / "host").mkdir(exist_ok=True)
    (prof / "host" / "info.json").write_text(_compact(host_info(pid)))


def write_mindstudio_output(
    prof: Path, frames: Frames, spec: trace.TraceSpec, stamp: str, version: str = "2026"
) -> None:
    """mindstudio_profiler_output/: op_summary, task_time (LF, as the CLI writes), timeline."""
    out = prof / "mindstudio_profiler_output"
    out.mkdir(parents=True, exist_ok=True)
    kernel_csv.write_op_summary(
        out / f"op_summary_{stamp}.csv", frames.kernels, spec.device, version
    )
    write_task_time(out / f"task_time_{stamp}.csv", frames, spec.device, crlf=False)
    trace.write_trace(out / f"msprof_{stamp}.json", frames, spec, msprof=True)
