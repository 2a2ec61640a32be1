"""trace_view.json (torch_npu) / msprof_*.json (msprof) → kernel rows with streams.

Chrome-trace events, a bare array (FORMATS.md §4). Kernels are the X events of
the process named ``Ascend Hardware``; each ``Stream N`` thread is one stream.
Processes and threads are found through their ``process_name`` /
``thread_name`` metadata, never by decoding pids (the pid encoding changed
between versions). Non-kernel tasks (event wait/record, notify, memcpy ...)
are dropped (``readers.tasktypes``). Communication ops (threads ``Group N
Communication`` of the ``HCCL`` / ``Communication`` process) become
communication rows without a stream. The device comes from ``process_labels``
(``NPU 3`` → 3; a bare ``NPU`` → unknown). A kernel's step is the
``ProfilerStep#N`` host range containing its start, if any.

``ts`` is decimal text, parsed exactly; ``dur`` is a float µs, converted with
``round(dur * 1000)``.

Cost: the file is parsed with ``json.loads`` (the whole array of dicts lives in
memory once); the events we keep are then turned into column lists in one
pass. A streaming parser for multi-hundred-MB traces is left to a later
benchmark issue.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from overlap_check.errors import InputError, SchemaError
from overlap_check.readers.kernel_csv import finish_frame
from overlap_check.readers.numbers import ts_text, us_float_to_ns, us_text_to_ns
from overlap_check.readers.steps import with_steps
from overlap_check.readers.tasktypes import is_kernel_task

HARDWARE_PROCESS = "Ascend Hardware"
COMMUNICATION_PROCESSES = ("HCCL", "Communication")
_STREAM_THREAD = re.compile(r"^\s*Stream\s+(\d+)\s*$")
_NPU_LABEL = re.compile(r"^\s*NPU\s+(\d+)\s*$")
_STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")


@dataclass(frozen=True)
class TraceKernels:
    path: Path
    kernels: pl.DataFrame  # kernel-table columns, unconformed
    devices: tuple[int, ...]  # devices named by the hardware processes' labels
    dropped_tasks: int  # non-kernel hardware tasks left out


def load_events(path: Path) -> list[dict[str, Any]]:
    """The event list; InputError for unreadable/invalid JSON, SchemaError for a non-trace."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", path=path) from err
    if not data.strip():
        raise InputError("empty file", path=path)
    try:
        parsed = json.loads(data)
    except UnicodeDecodeError as err:
        raise InputError("not UTF-8 text, not a JSON trace", path=path) from err
    except json.JSONDecodeError as err:
        raise InputError(
            f"invalid or truncated JSON: {err.msg} (column {err.colno})", path=path, line=err.lineno
        ) from err
    if isinstance(parsed, dict) and isinstance(parsed.get("traceEvents"), list):
        parsed = parsed["traceEvents"]
    if not isinstance(parsed, list):
        raise SchemaError("not a Chrome trace: expected a JSON array of events", path=path)
    return [e for e in parsed if isinstance(e, dict)]


@dataclass
class _Layout:
    hardware: dict[Any, int | None]  # pid → device
    communication: set[Any]
    streams: dict[tuple[Any, Any], int]  # (pid, tid) → stream id from "Stream N"
    comm_threads: set[tuple[Any, Any]]


def _layout(events: list[dict[str, Any]]) -> _Layout:
    names: dict[Any, str] = {}
    labels: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for event in events:
        if event.get("ph") != "M":
            continue
        args = event.get("args")
        if not isinstance(args, dict):
            continue
        kind = event.get("name")
        if kind == "process_name":
            names[event.get("pid")] = str(args.get("name", ""))
        elif kind == "process_labels":
            labels[event.get("pid")] = str(args.get("labels", ""))
        elif kind == "thread_name":
            threads[(event.get("pid"), event.get("tid"))] = str(args.get("name", ""))
    hardware: dict[Any, int | None] = {}
    for pid, name in names.items():
        if name.strip() == HARDWARE_PROCESS:
            match = _NPU_LABEL.match(labels.get(pid, ""))
            hardware[pid] = int(match.group(1)) if match else None
    communication = {p for p, n in names.items() if n.strip() in COMMUNICATION_PROCESSES}
    streams: dict[tuple[Any, Any], int] = {}
    comm_threads: set[tuple[Any, Any]] = set()
    for key, name in threads.items():
        if key[0] in hardware:
            match = _STREAM_THREAD.match(name)
            if match:
                streams[key] = int(match.group(1))
        elif key[0] in communication and name.strip().endswith("Communication"):
            comm_threads.add(key)
    return _Layout(hardware, communication, streams, comm_threads)


def _arg_stream(args: object) -> int | None:
    """Stream from the event's args when its thread has no ``Stream N`` name."""
    if isinstance(args, dict):
        for key in ("Physic Stream Id", "Stream Id", "stream id"):
            value = args.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _steps(events: list[dict[str, Any]]) -> pl.DataFrame:
    """Host ``ProfilerStep#N`` ranges: columns step_start, step_end, step (sorted by start)."""
    texts: list[str | None] = []
    durs: list[float] = []
    numbers: list[int] = []
    for event in events:
        if event.get("ph") == "X":
            match = _STEP_NAME.match(str(event.get("name", "")))
            dur = event.get("dur")
            if match and isinstance(dur, (int, float)):
                texts.append(ts_text(event.get("ts")))
                durs.append(float(dur))
                numbers.append(int(match.group(1)))
    return (
        pl.DataFrame(
            {
                "ts": pl.Series(texts, dtype=pl.String),
                "dur": pl.Series(us_float_to_ns(durs), dtype=pl.Int64),
                "step": pl.Series(numbers, dtype=pl.Int64),
            }
        )
        .select(
            us_text_to_ns(pl.col("ts")).alias("step_start"),
            (us_text_to_ns(pl.col("ts")) + pl.col("dur")).alias("step_end"),
            "step",
        )
        .drop_nulls()
        .sort("step_start")
    )


def read_trace(path: Path) -> TraceKernels:
    """Kernels (and communication ops) of one trace file."""
    events = load_events(path)
    layout = _layout(events)
    if not layout.hardware:
        raise SchemaError(
            f"no {HARDWARE_PROCESS!r} process in the trace (no device tasks)",
            path=path,
            hint="profile with ProfilerActivity.NPU",
        )
    rows_stream: list[int | None] = []
    rows_device: list[int | None] = []
    rows_name: list[str] = []
    rows_type: list[str | None] = []
    rows_task: list[int | None] = []
    rows_ts: list[str | None] = []
    rows_dur: list[float] = []
    rows_comm: list[bool] = []
    for event in events:
        if event.get("ph") != "X":
            continue
        pid = event.get("pid")
        key = (pid, event.get("tid"))
        dur = event.get("dur")
        if not isinstance(dur, (int, float)) or isinstance(dur, bool):
            continue
        args = event.get("args")
        if pid in layout.hardware:
            stream = layout.streams.get(key)
            if stream is None:
                stream = _arg_stream(args)
            arg = args if isinstance(args, dict) else {}
            task = arg.get("Task Id")
            rows_stream.append(stream)
            rows_device.append(layout.hardware[pid])
            rows_type.append(str(arg["Task Type"]) if "Task Type" in arg else None)
            rows_task.append(task if isinstance(task, int) else None)
            rows_comm.append(False)
        elif key in layout.comm_threads:
            rows_stream.append(None)
            rows_device.append(None)
            rows_type.append("COMMUNICATION")
            rows_task.append(None)
            rows_comm.append(True)
        else:
            continue
        rows_name.append(str(event.get("name", "")))
        rows_ts.append(ts_text(event.get("ts")))
        rows_dur.append(float(dur))
    frame = pl.DataFrame(
        {
            "stream_id": pl.Series(rows_stream, dtype=pl.Int64),
            "device": pl.Series(rows_device, dtype=pl.Int32),
            "name": pl.Series(rows_name, dtype=pl.String),
            "accelerator_core": pl.Series(rows_type, dtype=pl.String),
            "task_id": pl.Series(rows_task, dtype=pl.Int64),
            "ts": pl.Series(rows_ts, dtype=pl.String),
            "duration_ns": pl.Series(us_float_to_ns(rows_dur), dtype=pl.Int64),
            "comm": pl.Series(rows_comm, dtype=pl.Boolean),
        }
    ).with_columns(us_text_to_ns(pl.col("ts")).alias("start_ns"))
    kernel = pl.col("comm") | is_kernel_task(pl.col("accelerator_core"), pl.col("name"))
    usable = pl.col("start_ns").is_not_null() & (pl.col("comm") | pl.col("stream_id").is_not_null())
    kept = frame.filter(kernel & usable)
    dropped = frame.height - kept.height
    kept = with_steps(kept, _steps(events))
    kernels = finish_frame(kept.drop("ts", "comm"))
    devices = tuple(sorted({d for d in layout.hardware.values() if d is not None}))
    return TraceKernels(path=path, kernels=kernels, devices=devices, dropped_tasks=dropped)
