"""Module scope of each kernel, from trace_view.json (eager / npugraph_ex with_modules=True).

The Python process records each ``nn.Module`` call as a ``python_function``
X event named ``nn.Module: <Name>_<N>`` (N: the instance, i.e. the layer for a
repeated block), and each launch as a ``torch_to_npu`` flow: its start (``s``)
lies inside the launching op on the host thread, its end (``f``) on the
hardware task, at the kernel's start on its ``Stream N`` thread. A kernel's
module is the innermost module call that contains its flow start, on the same
host thread.

Opt-in (only a ``module:`` selection needs it): the file is parsed again with
``json``, as flows are not among the events the kernel reader decodes. Module
calls nest properly, so one pass over them per thread (a stack; there are far
fewer module calls than kernels) cuts time into stretches owned by one innermost
module, and each flow start finds its stretch by binary search.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from overlap_check.errors import InputError, SchemaError
from overlap_check.readers.numbers import us_text_to_ns
from overlap_check.readers.trace import HARDWARE_PROCESS

MODULE_PREFIX = "nn.Module: "
FLOW = "torch_to_npu"
_INSTANCE = re.compile(r"^(.*)_(\d+)$")
_STREAM_THREAD = re.compile(r"^\s*Stream\s+(\d+)\s*$")
SCHEMA = {"stream_id": pl.Int64, "start_ns": pl.Int64, "module": pl.String, "instance": pl.Int64}


def _events(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_bytes())
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", path=path) from err
    except ValueError as err:
        raise InputError(f"invalid JSON: {err}", path=path) from err
    if isinstance(data, dict):
        data = data.get("traceEvents")
    if not isinstance(data, list):
        raise SchemaError("not a Chrome trace (no event array)", path=path)
    return [e for e in data if isinstance(e, dict)]


def _ns(texts: list[str]) -> np.ndarray:
    frame = pl.DataFrame({"ts": pl.Series(texts, dtype=pl.String)})
    return frame.select(us_text_to_ns(pl.col("ts"))).to_series().to_numpy()


def _innermost(starts: np.ndarray, ends: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Per point, the index of the innermost interval holding it (-1: none); properly
    nested intervals."""
    order = np.lexsort((-ends, starts))  # outer before inner when they start together
    cuts: list[int] = []
    owner: list[int] = []
    stack: list[int] = []
    for i in order.tolist():  # one pass over the module calls (not over kernels)
        s = int(starts[i])
        while stack and int(ends[stack[-1]]) <= s:
            closed = stack.pop()
            cuts.append(int(ends[closed]))
            owner.append(stack[-1] if stack else -1)
        cuts.append(s)
        owner.append(i)
        stack.append(i)
    while stack:
        closed = stack.pop()
        cuts.append(int(ends[closed]))
        owner.append(stack[-1] if stack else -1)
    if not cuts:
        return np.full(points.size, -1, dtype=np.int64)
    at = np.searchsorted(np.asarray(cuts, dtype=np.int64), points, side="right") - 1
    owners = np.asarray(owner, dtype=np.int64)
    return np.where(at >= 0, owners[np.maximum(at, 0)], -1)


def kernel_modules(path: Path) -> pl.DataFrame:
    """``stream_id, start_ns, module, instance`` for each kernel launched inside an
    ``nn.Module`` call (joins the kernel table on stream and start). Empty when the
    capture recorded no module scope."""
    events = _events(path)
    hardware = {
        e.get("pid")
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "process_name"
        and str((e.get("args") or {}).get("name", "")).strip() == HARDWARE_PROCESS
    }
    streams: dict[tuple[Any, Any], int] = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid") in hardware:
            match = _STREAM_THREAD.match(str((e.get("args") or {}).get("name", "")))
            if match:
                streams[(e.get("pid"), e.get("tid"))] = int(match.group(1))
    modules = [
        e
        for e in events
        if e.get("ph") == "X"
        and str(e.get("name", "")).startswith(MODULE_PREFIX)
        and isinstance(e.get("dur"), (int, float))
    ]
    starts_s = {e.get("id"): e for e in events if e.get("ph") == "s" and e.get("name") == FLOW}
    flows = [
        (starts_s[e.get("id")], streams[(e.get("pid"), e.get("tid"))], e)
        for e in events
        if e.get("ph") == "f"
        and e.get("name") == FLOW
        and e.get("id") in starts_s
        and (e.get("pid"), e.get("tid")) in streams
    ]
    if not modules or not flows:
        return pl.DataFrame(schema=SCHEMA)
    m_start = _ns([str(e["ts"]) for e in modules])
    m_end = m_start + np.round(np.asarray([e["dur"] for e in modules]) * 1000).astype(np.int64)
    m_thread = [(e.get("pid"), e.get("tid")) for e in modules]
    s_ts = _ns([str(s["ts"]) for s, _, _ in flows])
    owner = np.full(len(flows), -1, dtype=np.int64)
    f_thread = [(s.get("pid"), s.get("tid")) for s, _, _ in flows]
    for thread in set(f_thread):  # one search per host thread
        mine = np.flatnonzero([t == thread for t in m_thread])
        points = np.flatnonzero([t == thread for t in f_thread])
        if mine.size:
            found = _innermost(m_start[mine], m_end[mine], s_ts[points])
            owner[points] = np.where(found >= 0, mine[np.maximum(found, 0)], -1)
    names = [str(e["name"])[len(MODULE_PREFIX) :] for e in modules]
    rows = np.flatnonzero(owner >= 0)
    split = [_INSTANCE.match(names[int(owner[r])]) for r in rows]
    return pl.DataFrame(
        {
            "stream_id": [flows[int(r)][1] for r in rows],
            "start_ns": _ns([str(flows[int(r)][2]["ts"]) for r in rows]),
            "module": [
                m.group(1) if m else names[int(owner[r])] for m, r in zip(split, rows, strict=True)
            ],
            "instance": [int(m.group(2)) if m else None for m in split],
        },
        schema=SCHEMA,
    )


def with_modules(kernels: pl.DataFrame, modules: pl.DataFrame) -> pl.DataFrame:
    """The kernel table with ``module`` and ``instance`` beside it (null: launched outside
    any module call), matched on (stream_id, start_ns). Not part of the canonical
    schema: only a ``module:`` selection adds it."""
    return kernels.join(modules, on=["stream_id", "start_ns"], how="left", nulls_equal=False)
