"""trace_view.json (torch_npu) / msprof_*.json (msprof) → kernel rows with streams.

The format and its rules: docs/formats.md, "trace_view.json". Cost: decoding
(``readers.trace_decode``) takes most of the time; the columns are then built with
C-level ``map``/``compress`` and handed to polars as whole lists, GC paused, and a
column is converted value by value only when polars' strict build rejects it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, not_, or_
from pathlib import Path
from typing import Any

import polars as pl

from overlap_check.model.errors import SchemaError
from overlap_check.readers.kernel_csv import finish_frame
from overlap_check.readers.numbers import (
    ts_text,
    us_clean_text_to_ns,
    us_float_to_ns,
    us_text_to_ns,
)
from overlap_check.readers.steps import with_steps
from overlap_check.readers.tasktypes import NOTIFY_TASKS, is_copy_task, is_kernel_task, task_key
from overlap_check.readers.trace_decode import (
    UNSET,
    CompleteEvent,
    EventArgs,
    MetadataEvent,
    TraceEvents,
    gc_paused,
    read_trace_events,
)

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
    dropped_tasks: int  # non-kernel, non-copy hardware tasks (or on no stream) left out


def load_events(path: Path) -> TraceEvents:
    """The X and M events; InputError for unreadable/invalid JSON, SchemaError for a non-trace."""
    return read_trace_events(path)


def _text(value: Any) -> str:  # str(mapping.get(key, "")) of a field UNSET when absent
    return "" if value is UNSET else str(value)


@dataclass
class _Layout:
    hardware: dict[Any, int | None]  # pid → device
    communication: set[Any]
    streams: dict[tuple[Any, Any], int]  # (pid, tid) → stream id from "Stream N"
    comm_threads: set[tuple[Any, Any]]


def _layout(events: list[MetadataEvent]) -> _Layout:
    names: dict[Any, str] = {}
    labels: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for event in events:
        if (args := event.args) is None:
            continue
        if event.name == "process_name":
            names[event.pid] = _text(args.name)
        elif event.name == "process_labels":
            labels[event.pid] = _text(args.labels)
        elif event.name == "thread_name":
            threads[(event.pid, event.tid)] = _text(args.name)
    hardware: dict[Any, int | None] = {}
    for pid, name in names.items():
        if name.strip() == HARDWARE_PROCESS:
            match = _NPU_LABEL.match(labels.get(pid, ""))
            hardware[pid] = int(match.group(1)) if match else None
    communication = {p for p, n in names.items() if n.strip() in COMMUNICATION_PROCESSES}
    streams: dict[tuple[Any, Any], int] = {}
    comm_threads: set[tuple[Any, Any]] = set()
    for key, name in threads.items():
        if key[0] in hardware and (match := _STREAM_THREAD.match(name)):
            streams[key] = int(match.group(1))
        elif key[0] in communication and name.strip().endswith("Communication"):
            comm_threads.add(key)
    return _Layout(hardware, communication, streams, comm_threads)


def _arg_stream(args: EventArgs | None) -> int | None:
    """Stream from the event's args when its thread has no ``Stream N`` name."""
    if args is not None:
        for value in (args.physic_stream_id, args.stream_id, args.lower_stream_id):
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _steps(events: list[CompleteEvent]) -> pl.DataFrame:
    """Host ``ProfilerStep#N`` ranges among ``events`` (those of the processes other than
    Ascend Hardware): columns step_start, step_end, step, sorted by start."""
    # only text names can match; the prefix test spares the regex for the other events
    found = [
        (ts_text(e.ts), float(e.dur), int(m.group(1)))
        for e in events
        if isinstance(e.name, str)
        and e.name.startswith("ProfilerStep#")
        and (m := _STEP_NAME.match(e.name))
        and isinstance(e.dur, (int, float))
    ]
    start = us_text_to_ns(pl.col("ts"))
    return (
        pl.DataFrame(
            {
                "ts": pl.Series([f[0] for f in found], dtype=pl.String),
                "dur": us_float_to_ns([f[1] for f in found]),
                "step": pl.Series([f[2] for f in found], dtype=pl.Int64),
            }
        )
        .select(start.alias("step_start"), (start + pl.col("dur")).alias("step_end"), "step")
        .drop_nulls()
        .sort("step_start")
    )


# JSON numbers that are durations: ``isinstance(dur, (int, float))`` minus bool
# (values come from a JSON decoder, so there are no other subclasses)
_NUMBER_TYPES = frozenset({int, float})
_NO_ARGS = EventArgs()  # what an absent / null ``args`` reads as
_INT64 = (-(2**63), 2**63 - 1)
_PID, _TID, _TS, _DUR = (attrgetter(f) for f in ("pid", "tid", "ts", "dur"))
_NAME, _ARGS = attrgetter("name"), attrgetter("args")
_TASK_TYPE, _TASK_ID = attrgetter("task_type"), attrgetter("task_id")


def _int64(value: Any) -> int | None:
    """An int (bool included, as ``isinstance`` says) that fits Int64, else None."""
    return value if isinstance(value, int) and _INT64[0] <= value <= _INT64[1] else None


def _texts(values: list[Any], convert: Callable[[Any], str | None]) -> pl.Series:
    """Text values as they are (polars' strict build takes an all-text list whole); null
    and any other value through ``convert``."""
    try:
        column = pl.Series(values, dtype=pl.String)
        if not column.null_count():
            return column
    except (TypeError, ValueError):  # polars' errors for a value it cannot take as text
        pass
    return pl.Series([v if type(v) is str else convert(v) for v in values], dtype=pl.String)


def _ints(values: list[Any]) -> pl.Series:
    """Int values (bools as 0/1) as they are, anything else (or beyond Int64) null."""
    try:
        return pl.Series(values, dtype=pl.Int64)  # strict: fails on text, floats, big ints
    except (TypeError, ValueError):
        return pl.Series(list(map(_int64, values)), dtype=pl.Int64)


def _start_ns(texts: pl.Series) -> pl.Series:
    """``us_text_to_ns``, skipping its strip when no value needs it (trace ts are bare)."""
    frame = pl.DataFrame({"ts": texts})
    start = frame.select(us_clean_text_to_ns(pl.col("ts"))).to_series()
    if start.null_count() > texts.null_count():
        start = frame.select(us_text_to_ns(pl.col("ts"))).to_series()
    return start.alias("start_ns")


def _durations_ns(durations: list[Any]) -> pl.Series:
    """``round(dur * 1000)``; null (malformed) for a dur null, missing, text or past int64 ns."""
    if _NUMBER_TYPES.issuperset(map(type, durations)):
        return us_float_to_ns(durations)
    timed = pl.Series([type(d) in _NUMBER_TYPES for d in durations], dtype=pl.Boolean)
    ns = us_float_to_ns(list(compress(durations, timed)))
    return pl.repeat(None, len(durations), dtype=pl.Int64, eager=True).scatter(timed.arg_true(), ns)


def _task_rows(
    events: list[CompleteEvent], layout: _Layout
) -> tuple[pl.DataFrame, list[CompleteEvent]]:
    """A row per hardware task and communication op, in file order; and the events of the
    other processes (host, communication ...)."""
    pids = list(map(_PID, events))
    on_hardware = list(map(layout.hardware.__contains__, pids))
    others = list(compress(events, map(not_, on_hardware)))
    threads = layout.comm_threads
    comm_pids = {pid for pid, _ in threads}
    in_comm = zip(pids, map(_TID, events), strict=True)
    comm = [p in comm_pids and (p, t) in threads for p, t in in_comm] if threads else []
    is_task = list(map(or_, on_hardware, comm)) if any(comm) else on_hardware
    tasks = list(compress(events, is_task))
    n = len(tasks)
    by_pid: dict[Any, dict[Any, int]] = {}
    for (pid, tid), stream in layout.streams.items():
        by_pid.setdefault(pid, {})[tid] = stream
    tids = list(map(_TID, tasks))
    if len(layout.hardware) == 1 and is_task is on_hardware:  # every task on one process
        ((pid, device),) = layout.hardware.items()
        streams = pl.Series(list(map(by_pid.get(pid, {}).get, tids)), dtype=pl.Int64)
        devices = pl.repeat(device, n, dtype=pl.Int32, eager=True)
    else:
        pids = list(compress(pids, is_task))
        found = [by_pid.get(p, {}).get(t) for p, t in zip(pids, tids, strict=True)]
        streams = pl.Series(found, dtype=pl.Int64)
        devices = pl.Series(list(map(layout.hardware.get, pids)), dtype=pl.Int32)
    if streams.null_count():  # threads not named "Stream N": the args name the stream
        unnamed = streams.is_null()
        from_args = [_int64(_arg_stream(e.args)) for e in compress(tasks, unnamed)]
        streams = streams.scatter(unnamed.arg_true(), pl.Series(from_args, dtype=pl.Int64))
    args = list(map(_ARGS, tasks))
    try:  # the args fields straight from the structs, when every event has args
        types, task_ids = list(map(_TASK_TYPE, args)), list(map(_TASK_ID, args))
    except AttributeError:  # some have none (absent or null): they read as empty args
        args = [_NO_ARGS if a is None else a for a in args]
        types, task_ids = list(map(_TASK_TYPE, args)), list(map(_TASK_ID, args))
    frame = pl.DataFrame(
        {
            "stream_id": streams,
            "device": devices,
            "name": _texts(list(map(_NAME, tasks)), _text),
            "accelerator_core": _texts(types, lambda v: None if v is UNSET else str(v)),
            "task_id": _ints(task_ids),
            "start_ns": _start_ns(_texts(list(map(_TS, tasks)), ts_text)),
            "comm": pl.Series(list(compress(comm, is_task)) or [False] * n, dtype=pl.Boolean),
            "duration_ns": _durations_ns(list(map(_DUR, tasks))),
        }
    )
    if is_task is on_hardware:
        return frame, others
    # communication ops: no stream, device or task id of their own
    hardware = ~pl.col("comm")
    return frame.with_columns(
        *(pl.when(hardware).then(pl.col(c)).alias(c) for c in ("stream_id", "device", "task_id")),
        pl.when(hardware).then("accelerator_core").otherwise(pl.lit("COMMUNICATION")),
    ), others


def _hccl_tasks(others: list[CompleteEvent], layout: _Layout) -> pl.DataFrame:
    """(stream_id, start_ns) of the collectives' steps the communication process lists on
    its ``Plane N`` threads: the hardware tasks at these keys are not kernels."""
    pids = layout.communication
    if not pids:
        return pl.DataFrame(schema={"stream_id": pl.Int64, "start_ns": pl.Int64})
    listed = [
        e
        for e in compress(others, map(pids.__contains__, map(_PID, others)))
        if (e.pid, e.tid) not in layout.comm_threads
        and e.args is not None
        and _int64(e.args.lower_stream_id) is not None
    ]
    streams = [_int64(e.args.lower_stream_id) for e in listed if e.args is not None]
    starts = _start_ns(_texts(list(map(_TS, listed)), ts_text))
    # a step without a time is no key: a task without one stays (counted as malformed)
    keys = pl.DataFrame({"stream_id": pl.Series(streams, dtype=pl.Int64), "start_ns": starts})
    return keys.drop_nulls()


def read_trace(path: Path) -> TraceKernels:
    """Kernels (and communication ops) of one trace file."""
    with gc_paused():
        events = load_events(path)
        try:
            kernels = _kernels(path, events)
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError) as err:
            # JSON allows any value anywhere: a pid that is a list, a stream number past int64
            raise SchemaError(f"unexpected value in the trace events ({err})", path=path) from err
        del events  # freed before the collector runs again
    return kernels


def _kernels(path: Path, events: TraceEvents) -> TraceKernels:
    layout = _layout(events.metadata)
    if not layout.hardware:
        raise SchemaError(
            f"no {HARDWARE_PROCESS!r} process in the trace (no device tasks)",
            path=path,
            hint="profile with ProfilerActivity.NPU",
        )
    frame, others = _task_rows(events.complete, layout)
    # is_kernel_task / is_copy_task once per distinct (task type, name): a few hundred
    # pairs, whose string work costs more than the whole filter on 100k+ rows
    pair = ["accelerator_core", "name"]
    core, name = pl.col("accelerator_core").first(), pl.col("name").first()
    flags = frame.select(
        is_kernel_task(core, name).over(pair).alias("kernel"),
        is_copy_task(core, name).over(pair).alias("copy"),
    )
    hccl = _hccl_tasks(others, layout)
    own = ~pl.col("comm")
    if hccl.height:  # a collective's steps: neither kernels nor copies
        keys = pl.Series(hccl.to_struct()).implode()
        own &= ~pl.struct("stream_id", "start_ns").is_in(keys).fill_null(False)
    # a copy on a stream that waits on notifies (a collective's stream: 910A streams 11-13,
    # no Plane threads at Level0) is one of the collective's steps, not a copy plan's copy
    names = frame.select(pl.col("name").unique()).filter(
        task_key(pl.col("name")).is_in(NOTIFY_TASKS)
    )
    notified = frame.filter(pl.col("name").is_in(names["name"].implode()))["stream_id"]
    # a copy on no stream is on no notified stream: it stays a copy (readers.capture counts it)
    on_notified = pl.col("stream_id").is_in(notified.drop_nulls().unique().implode())
    copy = flags["copy"] & ~on_notified.fill_null(False)
    frame = frame.with_columns((own & copy).alias("is_copy"))
    kernel = pl.col("comm") | (own & flags["kernel"]) | pl.col("is_copy")
    # a task without a time stays (null start or end): readers.capture counts it as malformed;
    # one on no stream stays too (its thread is no "Stream N"): counted with those without one
    kept = frame.filter(kernel)
    kernels = finish_frame(with_steps(kept, _steps(others)).drop("comm"))
    devices = tuple(sorted({d for d in layout.hardware.values() if d is not None}))
    return TraceKernels(path, kernels, devices, dropped_tasks=frame.height - kept.height)
