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

Cost: the file is decoded with msgspec into structs holding only the fields
used here (``readers.trace_decode``; ``json.loads`` only for files msgspec
rejects), then the task columns are built one by one with C-level
``map``/``compress`` and comprehensions over the X events, not a loop of
Python statements per event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from overlap_check.errors import SchemaError
from overlap_check.readers.kernel_csv import finish_frame
from overlap_check.readers.numbers import ts_text, us_float_to_ns, us_text_to_ns
from overlap_check.readers.steps import with_steps
from overlap_check.readers.tasktypes import is_kernel_task
from overlap_check.readers.trace_decode import (
    UNSET,
    CompleteEvent,
    EventArgs,
    MetadataEvent,
    TraceEvents,
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
    dropped_tasks: int  # non-kernel hardware tasks left out


def load_events(path: Path) -> TraceEvents:
    """The X and M events; InputError for unreadable/invalid JSON, SchemaError for a non-trace."""
    return read_trace_events(path)


def _text(value: Any) -> str:
    """``str(mapping.get(key, ""))`` for a struct field that is UNSET when the key is absent."""
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
        args = event.args
        if args is None:
            continue
        kind = event.name
        if kind == "process_name":
            names[event.pid] = _text(args.name)
        elif kind == "process_labels":
            labels[event.pid] = _text(args.labels)
        elif kind == "thread_name":
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
        if key[0] in hardware:
            match = _STREAM_THREAD.match(name)
            if match:
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
    """Host ``ProfilerStep#N`` ranges: columns step_start, step_end, step (sorted by start)."""
    texts: list[str | None] = []
    durs: list[float] = []
    numbers: list[int] = []
    for event in events:
        name = event.name
        # only text names can match (str() of any other JSON value cannot); the
        # prefix test spares the regex for the other events
        if not (isinstance(name, str) and name.startswith("ProfilerStep#")):
            continue
        match = _STEP_NAME.match(name)
        dur = event.dur
        if match and isinstance(dur, (int, float)):
            texts.append(ts_text(event.ts))
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


# JSON numbers that are durations: ``isinstance(dur, (int, float))`` minus bool
# (values come from a JSON decoder, so there are no other subclasses)
_NUMBER_TYPES = frozenset({int, float})
_NO_ARGS = EventArgs()  # what an absent / null ``args`` reads as
_PID, _TID, _TS, _DUR = (attrgetter(f) for f in ("pid", "tid", "ts", "dur"))
_NAME, _ARGS = attrgetter("name"), attrgetter("args")
_TASK_TYPE, _TASK_ID = attrgetter("task_type"), attrgetter("task_id")


def _frame(events: list[CompleteEvent], **columns: pl.Series) -> pl.DataFrame:
    """The task rows: the given per-kind columns plus name, ts and duration from the events."""
    # the type tests spare a call for the usual text values
    names = [n if type(n) is str else _text(n) for n in map(_NAME, events)]
    texts = [t if type(t) is str else ts_text(t) for t in map(_TS, events)]
    durations = np.fromiter(map(_DUR, events), dtype=np.float64, count=len(events))
    return pl.DataFrame(
        {
            "stream_id": columns["stream_id"],
            "device": columns["device"],
            "name": pl.Series(names, dtype=pl.String),
            "accelerator_core": columns["accelerator_core"],
            "task_id": columns["task_id"],
            "ts": pl.Series(texts, dtype=pl.String),
            "duration_ns": pl.Series(us_float_to_ns(durations), dtype=pl.Int64),
            "comm": columns["comm"],
        }
    )


def _thread_streams(pids: list[Any], tids: list[Any], layout: _Layout) -> list[int | None]:
    """``layout.streams[(pid, tid)]`` per task, None where the thread is no ``Stream N``."""
    by_pid: dict[Any, dict[Any, int]] = {}
    for (pid, tid), stream in layout.streams.items():
        by_pid.setdefault(pid, {})[tid] = stream
    if len(layout.hardware) == 1:  # one device: every task is on that pid
        return list(map(by_pid.get(next(iter(layout.hardware)), {}).get, tids))
    return [by_pid.get(p, {}).get(t) for p, t in zip(pids, tids, strict=True)]


def _hardware_rows(events: list[CompleteEvent], pids: list[Any], layout: _Layout) -> pl.DataFrame:
    streams = _thread_streams(pids, list(map(_TID, events)), layout)
    if None in streams:  # threads not named "Stream N": the args name the stream
        streams = [
            s if s is not None else _arg_stream(e.args)
            for s, e in zip(streams, events, strict=True)
        ]
    args = list(map(_ARGS, events))
    if None in args:
        args = [a if a is not None else _NO_ARGS for a in args]
    types = [t if type(t) is str else None if t is UNSET else str(t) for t in map(_TASK_TYPE, args)]
    tasks = [t if isinstance(t, int) else None for t in map(_TASK_ID, args)]
    if len(layout.hardware) == 1:
        devices = [next(iter(layout.hardware.values()))] * len(events)
    else:
        devices = list(map(layout.hardware.__getitem__, pids))
    return _frame(
        events,
        stream_id=pl.Series(streams, dtype=pl.Int64),
        device=pl.Series(devices, dtype=pl.Int32),
        accelerator_core=pl.Series(types, dtype=pl.String),
        task_id=pl.Series(tasks, dtype=pl.Int64),
        comm=pl.Series([False] * len(events), dtype=pl.Boolean),
    )


def _communication_rows(events: list[CompleteEvent]) -> pl.DataFrame:
    n = len(events)
    return _frame(
        events,
        stream_id=pl.Series([None] * n, dtype=pl.Int64),
        device=pl.Series([None] * n, dtype=pl.Int32),
        accelerator_core=pl.Series(["COMMUNICATION"] * n, dtype=pl.String),
        task_id=pl.Series([None] * n, dtype=pl.Int64),
        comm=pl.Series([True] * n, dtype=pl.Boolean),
    )


def _task_rows(events: list[CompleteEvent], layout: _Layout) -> pl.DataFrame:
    """A row per hardware task and communication op with a numeric ``dur``, in file order.

    Built column by column from the structs (C-level ``map``/``compress`` and
    comprehensions): hundreds of thousands of tasks.
    """
    timed = [e for e in events if type(e.dur) in _NUMBER_TYPES]
    pids = list(map(_PID, timed))
    on_hardware = list(map(layout.hardware.__contains__, pids))
    hardware = _hardware_rows(
        list(compress(timed, on_hardware)), list(compress(pids, on_hardware)), layout
    )
    threads = layout.comm_threads
    comm_pids = {pid for pid, _ in threads}
    in_comm = (
        [
            not hw and pid in comm_pids and (pid, e.tid) in threads
            for hw, pid, e in zip(on_hardware, pids, timed, strict=True)
        ]
        if threads
        else []
    )
    if not any(in_comm):
        return hardware
    communication = _communication_rows(list(compress(timed, in_comm)))
    positions = range(len(timed))  # to interleave both kinds in file order
    order = pl.Series(
        [*compress(positions, on_hardware), *compress(positions, in_comm)], dtype=pl.Int64
    )
    return (
        pl.concat([hardware, communication])
        .with_columns(order.alias("__order"))
        .sort("__order")
        .drop("__order")
    )


def _kernel_flags(frame: pl.DataFrame) -> pl.Series:
    """:func:`is_kernel_task` per row, evaluated once per distinct (task type, name).

    Its string normalisation costs more than the whole filter on 100k+ rows,
    and a trace has a few hundred distinct pairs. Null types are keyed apart
    from empty text, so that the join needs no null matching.
    """
    keys = frame.select(
        pl.col("accelerator_core").fill_null(""),
        pl.col("accelerator_core").is_null().alias("__null"),
        "name",
    )
    pairs = keys.unique().with_columns(
        is_kernel_task(
            pl.when(~pl.col("__null")).then(pl.col("accelerator_core")), pl.col("name")
        ).alias("__kernel")
    )
    return (
        keys.with_row_index("__row")
        .join(pairs, on=["accelerator_core", "__null", "name"], how="left")
        .sort("__row")["__kernel"]
    )


def read_trace(path: Path) -> TraceKernels:
    """Kernels (and communication ops) of one trace file."""
    events = load_events(path)
    layout = _layout(events.metadata)
    if not layout.hardware:
        raise SchemaError(
            f"no {HARDWARE_PROCESS!r} process in the trace (no device tasks)",
            path=path,
            hint="profile with ProfilerActivity.NPU",
        )
    frame = _task_rows(events.complete, layout).with_columns(
        us_text_to_ns(pl.col("ts")).alias("start_ns")
    )
    kernel = pl.col("comm") | _kernel_flags(frame)
    usable = pl.col("start_ns").is_not_null() & (pl.col("comm") | pl.col("stream_id").is_not_null())
    kept = frame.filter(kernel & usable)
    dropped = frame.height - kept.height
    kept = with_steps(kept, _steps(events.complete))
    kernels = finish_frame(kept.drop("ts", "comm"))
    devices = tuple(sorted({d for d in layout.hardware.values() if d is not None}))
    return TraceKernels(path=path, kernels=kernels, devices=devices, dropped_tasks=dropped)
