"""How each trace version spells processes, pids and events (docs/formats.md).

pid encoding ``(pid << 10) | (sort_index << 5) | device`` (2025+; host layer device
31 in msprof files), small plain pids in 2023/2024 files; key order of events as in
real files; ``json_object`` renders a JSON object from polars expressions so that
per-kernel events need no Python loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from synth import fmt

SUBTASK_NONE = 4294967295
MODEL_ID_NONE = 4294967295
# sub-ns tails of real `dur` values (53.7410625, 6.280125 ...); all below 0.5 ns
DUR_TAILS = ("0625", "", "03125", "025", "", "0125", "021875", "")
LAUNCH_LEAD_NS = 18_620  # host launch (Node@launch) precedes the device start


@dataclass(frozen=True)
class Style:
    """What differs between trace versions."""

    version: str
    compact: bool  # msprof json: no spaces after separators
    hardware_pid: int
    cann_pid: int
    comm_pid: int
    overlap_pid: int
    freq_pid: int
    label: str  # "NPU" | "NPU 0"
    stream_key: str  # "Stream Id" (old) | "Physic Stream Id"
    comm_process: str  # "HCCL" | "Communication"
    hardware_sort: int
    cann_sort: int
    comm_sort: int
    overlap_sort: int
    overlap_tids: tuple[tuple[str, int], ...]

    @property
    def item(self) -> str:
        return "," if self.compact else ", "

    @property
    def colon(self) -> str:
        return ":" if self.compact else ": "


def _encoded(pid: int, sort_index: int, device: int) -> int:
    return (pid << 10) | (sort_index << 5) | device


def style_for(version: str, pid: int, device: int, *, compact: bool = False) -> Style:
    tids_2025 = (
        ("Computing", 0),
        ("Communication", 1),
        ("Communication(Not Overlapped)", 2),
        ("Free", 3),
    )
    if version == "2023":
        # 2023/2024 torch_npu: small plain pids, label "NPU", args "Stream Id"
        return Style(
            version,
            compact,
            800,
            pid * 100 + 2,
            pid * 10000 + 1000,
            pid * 10000 + 1100,
            pid * 10000 + 900,
            "NPU",
            "Stream Id",
            "HCCL",
            8,
            2,
            10,
            11,
            tids_2025,
        )
    if version == "2025":
        return Style(
            version,
            compact,
            _encoded(pid, 13, device),
            _encoded(pid, 7, device),
            _encoded(pid, 15, device),
            _encoded(pid, 23, device),
            _encoded(pid, 14, device),
            "NPU",
            "Physic Stream Id",
            "HCCL",
            13,
            7,
            15,
            23,
            tids_2025,
        )
    tids_2026 = (
        ("Communication", 0),
        ("Communication(Not Overlapped)", 1),
        ("Computing", 2),
        ("Free", 3),
    )
    return Style(
        version,
        compact,
        _encoded(pid, 13, device),
        _encoded(pid, 7, 31),
        _encoded(pid, 15, device),
        _encoded(pid, 30, device),
        _encoded(pid, 14, device),
        f"NPU {device}",
        "Physic Stream Id",
        "Communication",
        13,
        7,
        15,
        30,
        tids_2026,
    )


def json_object(pairs: list[tuple[str, pl.Expr]], style: Style) -> pl.Expr:
    """A JSON object from (key, already-JSON value) pairs, in order."""
    parts: list[pl.Expr] = [pl.lit("{")]
    for i, (key, value) in enumerate(pairs):
        prefix = ("" if i == 0 else style.item) + json.dumps(key) + style.colon
        parts += [pl.lit(prefix), value]
    parts.append(pl.lit("}"))
    return pl.concat_str(parts)


# ------------------------------------------------------------------ small dict events


def meta_event(style: Style, name: str, pid: int, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    if style.version == "2026":
        return {"name": name, "pid": pid, "tid": tid, "ph": "M", "args": args}
    return {"name": name, "pid": pid, "tid": tid, "args": args, "ph": "M"}


def process_events(
    style: Style, pid: int, name: str, label: str, sort: int, threads: list[tuple[int, str]]
) -> list[dict[str, Any]]:
    events = [meta_event(style, "process_name", pid, 0, {"name": name})]
    for tid, tname in threads:
        events.append(meta_event(style, "thread_name", pid, tid, {"name": tname}))
        events.append(meta_event(style, "thread_sort_index", pid, tid, {"sort_index": tid}))
    events.append(meta_event(style, "process_labels", pid, 0, {"labels": label}))
    events.append(meta_event(style, "process_sort_index", pid, 0, {"sort_index": sort}))
    return events


def x_event(
    style: Style,
    name: str,
    pid: int,
    tid: int,
    start_ns: int,
    dur_ns: int,
    args: dict[str, Any] | None = None,
    dur: float | None = None,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": fmt.us3(start_ns),
        "dur": dur if dur is not None else dur_number(dur_ns),
    }
    if style.version == "2026":
        event["ph"] = "X"
        event["args"] = args or {}
    else:
        if args is not None:
            event["args"] = args
        event["ph"] = "X"
    return event


def dur_number(ns: int) -> float | int:
    return 0 if ns == 0 else float(fmt.us_repr(ns))
