"""trace_view.json (torch_npu) and msprof_*.json (msprof CLI): Chrome trace, bare array.

Layout of real files (docs/formats.md): ``Python`` process (ProfilerStep#N, async_npu
flow starts), ``CANN`` (host launches; its process_name is pruned at Level0 and
only orphan thread names and flow starts stay), ``Ascend Hardware`` (one
``Stream N`` thread per stream; X events for kernels AND non-kernel tasks; ``ts``
a string with 3 decimals, ``dur`` a float with a sub-ns tail), ``HCCL`` /
``Communication`` (comm ops), ``Overlap Analysis`` (four named threads, tids by
version) and an ``AI Core Freq`` counter. Hardware events are rendered with polars
string expressions so a benchmark-sized capture needs no Python loop per kernel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from synth import fmt
from synth.overlap_analysis import overlap_lines
from synth.rows import Frames
from synth.trace_events import hardware_frame, hardware_lines, host_lines
from synth.trace_style import (
    MODEL_ID_NONE,
    Style,
    dur_number,
    meta_event,
    process_events,
    style_for,
    x_event,
)


@dataclass(frozen=True)
class TraceSpec:
    """Everything a trace needs besides the frames."""

    version: str
    level0: bool
    pid: int
    device: int
    steps: tuple[tuple[int, int, int], ...]  # (step, start_ns, end_ns) of ProfilerStep#N
    capture_start_ns: int
    capture_end_ns: int


def _python_events(spec: TraceSpec, launch_tid: int) -> list[dict[str, Any]]:
    pid = spec.pid
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "Python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": 0}},
    ]
    for tid, sort in ((pid, pid), (launch_tid, launch_tid)):
        events.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": f"Thread {tid}"},
            }
        )
        events.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
                "tid": tid,
                "args": {"sort_index": sort},
            }
        )
    for step, start, end in spec.steps:
        events.append(
            {
                "ph": "X",
                "name": f"ProfilerStep#{step}",
                "pid": pid,
                "tid": pid,
                "ts": fmt.us3(start),
                "dur": dur_number(end - start),
                "cat": "cpu_op",
                "args": {"Sequence number": -1, "Fwd thread id": 0},
            }
        )
    return events


def _comm_events(frames: Frames, style: Style, level0: bool) -> list[dict[str, Any]]:
    comm = frames.kernels.filter(pl.col("is_comm"))
    if comm.height == 0:
        return []
    # the Plane thread is named at every level; its small tasks only appear above Level0
    planes = [(1, "Plane 0")]
    events = process_events(
        style,
        style.comm_pid,
        style.comm_process,
        style.label,
        style.comm_sort,
        [(0, "Group 0 Communication"), *planes],
    )
    for row in comm.iter_rows(named=True):
        args = {
            "connection_id": row["conn_id"],
            "model id": MODEL_ID_NONE,
            "data_type": "FP32",
            "alg_type": "MESH-RING",
            "count": 4097000,
        }
        events.append(
            x_event(style, row["name"], style.comm_pid, 0, row["start_ns"], row["dur_ns"], args)
        )
        if not level0:
            # one plane task per op: its args carry a "stream id" that is not a compute stream
            plane = {
                "notify_id": "0",
                "duration estimated(us)": 0.6,
                "stream id": 4,
                "task id": 807,
                "context id": 0,
                "task type": "Notify Wait",
                "src rank": 0,
                "dst rank": 1,
                "transport type": "SDMA",
                "size(Byte)": 0,
                "data type": "INVALID_TYPE",
                "link type": "HCCS",
                "bandwidth(GB/s)": 0,
                "model id": MODEL_ID_NONE,
            }
            events.append(
                x_event(style, "Notify Wait", style.comm_pid, 1, row["start_ns"], 600, plane)
            )
    return events


def _counter(style: Style, ts_ns: int) -> dict[str, Any]:
    if style.version == "2026":
        return {
            "name": "AI Core Freq",
            "pid": style.freq_pid,
            "tid": 0,
            "ts": fmt.us3(ts_ns),
            "ph": "C",
            "args": {"MHz": 1800},
        }
    return {
        "name": "AI Core Freq",
        "ts": fmt.us3(ts_ns),
        "pid": style.freq_pid,
        "tid": 0,
        "args": {"MHz": 1800},
        "ph": "C",
    }


def trace_lines(frames: Frames, spec: TraceSpec, *, msprof: bool = False) -> list[str]:
    """Every event of a trace_view.json (or, ``msprof=True``, an msprof_*.json) as JSON text."""
    style = style_for(spec.version, spec.pid, spec.device, compact=msprof)
    separators = (style.item, style.colon)
    launch_tid = spec.pid + 3198
    dicts: list[dict[str, Any]] = [] if msprof else _python_events(spec, launch_tid)
    cann_threads = [(spec.pid, f"Thread {spec.pid}"), (launch_tid, f"Thread {launch_tid}")]
    with_cann = msprof or not spec.level0
    if with_cann:
        dicts += process_events(style, style.cann_pid, "CANN", "CPU", style.cann_sort, cann_threads)
    else:
        # Level0 prunes the CANN process_name but leaves its thread names (orphan pid)
        for tid, name in cann_threads:
            dicts.append(meta_event(style, "thread_name", style.cann_pid, tid, {"name": name}))
            dicts.append(
                meta_event(style, "thread_sort_index", style.cann_pid, tid, {"sort_index": tid})
            )
    streams = sorted(
        set(frames.kernels.filter(~pl.col("is_comm"))["stream_id"].to_list())
        | set(frames.tasks["stream_id"].to_list())
    )
    dicts += process_events(
        style,
        style.hardware_pid,
        "Ascend Hardware",
        style.label,
        style.hardware_sort,
        [(s, f"Stream {s}") for s in streams],
    )
    dicts += _comm_events(frames, style, spec.level0)
    dicts += process_events(
        style,
        style.overlap_pid,
        "Overlap Analysis",
        style.label,
        style.overlap_sort,
        [(tid, name) for name, tid in sorted(style.overlap_tids, key=lambda p: p[1])],
    )
    dicts += process_events(style, style.freq_pid, "AI Core Freq", style.label, 14, [])
    dicts += [_counter(style, spec.capture_start_ns), _counter(style, spec.capture_end_ns)]
    lines = [json.dumps(e, separators=separators) for e in dicts]
    lines += host_lines(
        frames,
        style,
        python_pid=spec.pid,
        launch_tid=launch_tid,
        with_cann=with_cann,
        with_python=not msprof,
    )
    lines += hardware_lines(hardware_frame(frames, spec.version), style)
    lines += overlap_lines(frames, style)
    return lines


def write_trace(path: Any, frames: Frames, spec: TraceSpec, *, msprof: bool = False) -> None:
    style_item = "," if msprof else ", "
    with open(path, "w", encoding="utf-8", newline="") as out:
        out.write("[")
        out.write(style_item.join(trace_lines(frames, spec, msprof=msprof)))
        out.write("]")
