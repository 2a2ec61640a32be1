"""Module scope of each kernel, from trace_view.json (eager / npugraph_ex with_modules=True).

The Python process records each ``nn.Module`` call as a ``python_function``
X event named ``nn.Module: <Name>_<N>`` (N: the instance, i.e. the layer for a
repeated block), and each launch as a ``torch_to_npu`` flow: its start (``s``)
lies inside the launching op on the host thread, its end (``f``) on the
hardware task, at the kernel's start on its ``Stream N`` thread. A kernel's
module is the innermost module call that contains its flow start, on the same
host thread.

Opt-in (only a ``module:`` selection needs it): the file is decoded again with
the flows (readers.trace_decode, ``flows=True``). Vectorised: module calls nest
properly, so sorting each host thread's call bounds (an end before a start at
the same time) and a running depth cut time into stretches owned by one
innermost call: after a start, that call; after an end at depth d, the last call
that started at depth d (an as-of join by depth). Each flow start then finds its
stretch by an as-of join on time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import Any

import polars as pl

from overlap_check.model import MODULE_SCOPE, Capture
from overlap_check.readers.calls import innermost_calls
from overlap_check.readers.numbers import ts_text, us_float_to_ns, us_text_to_ns
from overlap_check.readers.trace import (
    HARDWARE_PROCESS,
    _text,  # UNSET (absent key) -> "", as the reader
)
from overlap_check.readers.trace_decode import TraceEvents, read_trace_events

MODULE_PREFIX = "nn.Module: "
FLOW = "torch_to_npu"
_INSTANCE = re.compile(r"^(.*)_(\d+)$")
_STREAM_THREAD = re.compile(r"^\s*Stream\s+(\d+)\s*$")
SCHEMA = {"stream_id": pl.Int64, "start_ns": pl.Int64, "module": pl.String, "instance": pl.Int64}


def _ns(texts: pl.Series) -> pl.Series:
    return pl.DataFrame({"ts": texts}).select(us_text_to_ns(pl.col("ts"))).to_series()


def _ts(values: list[Any]) -> pl.Series:
    return _ns(pl.Series(list(map(ts_text, values)), dtype=pl.String))


def _thread(pid: list[Any], tid: list[Any]) -> pl.Series:
    """(pid, tid) as one comparable text key (ids are ints or strings in traces)."""
    return pl.Series(list(map(repr, zip(pid, tid, strict=True))), dtype=pl.String)


def _stream_threads(events: TraceEvents) -> dict[str, int]:
    """Thread key -> Stream ID of the ``Stream N`` threads of the Ascend Hardware process
    (metadata events: a few per thread)."""
    hardware = {
        e.pid
        for e in events.metadata
        if e.name == "process_name"
        and e.args is not None
        and str(e.args.name).strip() == HARDWARE_PROCESS
    }
    streams: dict[str, int] = {}
    for e in events.metadata:
        if e.name == "thread_name" and e.pid in hardware and e.args is not None:
            match = _STREAM_THREAD.match(str(e.args.name))
            if match:
                streams[repr((e.pid, e.tid))] = int(match.group(1))
    return streams


def _calls(events: TraceEvents) -> pl.DataFrame:
    """The nn.Module calls: thread, start_ns, end_ns, name (without the prefix)."""
    complete = events.complete
    names = pl.Series(list(map(_text, map(attrgetter("name"), complete))), dtype=pl.String)
    keep = names.str.starts_with(MODULE_PREFIX).to_numpy()
    picked = list(compress(complete, keep))
    durations = list(map(attrgetter("dur"), picked))
    numeric = [isinstance(d, (int, float)) and not isinstance(d, bool) for d in durations]
    picked = list(compress(picked, numeric))
    if not picked:
        return pl.DataFrame(schema=_CALLS)
    start = _ts(list(map(attrgetter("ts"), picked)))
    dur = us_float_to_ns(list(compress(durations, numeric)))
    return pl.DataFrame(
        {
            "thread": _thread(
                list(map(attrgetter("pid"), picked)), list(map(attrgetter("tid"), picked))
            ),
            "start_ns": start,
            "end_ns": start + pl.Series(dur),
            "name": names.filter(pl.Series(keep))
            .filter(pl.Series(numeric))
            .str.slice(len(MODULE_PREFIX)),
        },
        schema=_CALLS,
    ).filter(pl.col("end_ns") > pl.col("start_ns"))  # an empty call holds no launch


_CALLS = {"thread": pl.String, "start_ns": pl.Int64, "end_ns": pl.Int64, "name": pl.String}


def _flows(events: TraceEvents, streams: dict[str, int]) -> pl.DataFrame:
    """torch_to_npu flows ending on a Stream thread: host thread, launch_ns, stream_id,
    start_ns (the kernel's start)."""

    def frame(flows: list[Any]) -> pl.DataFrame:
        named = [_text(f.name) == FLOW for f in flows]
        flows = list(compress(flows, named))
        return pl.DataFrame(
            {
                "id": pl.Series(list(map(repr, map(attrgetter("id"), flows))), dtype=pl.String),
                "thread": _thread(
                    list(map(attrgetter("pid"), flows)), list(map(attrgetter("tid"), flows))
                ),
                "ts": _ts(list(map(attrgetter("ts"), flows))),
            },
            schema={"id": pl.String, "thread": pl.String, "ts": pl.Int64},
        )

    known = pl.DataFrame(
        {"thread": list(streams), "stream_id": list(streams.values())},
        schema={"thread": pl.String, "stream_id": pl.Int64},
    )
    ends = (
        frame(events.flow_ends)
        .join(known, on="thread")
        .select("id", "stream_id", pl.col("ts").alias("start_ns"))
    )
    starts = frame(events.flow_starts).unique("id", keep="last", maintain_order=True)
    return starts.rename({"ts": "launch_ns"}).join(ends, on="id").drop_nulls(["launch_ns"])


def _launches(path: Path, kineto: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The module calls (with ``module`` and ``instance`` split from the name) and the
    flows of one trace (a Kineto trace: its launches, found by correlation)."""
    if kineto:
        from overlap_check.readers.kineto import kineto_launches

        calls, flows = kineto_launches(path)
    else:
        events = read_trace_events(path, flows=True)
        calls, flows = _calls(events), _flows(events, _stream_threads(events))
    parts = calls.get_column("name").str.extract_groups(_INSTANCE.pattern)
    calls = calls.with_columns(
        parts.struct.field("1").fill_null(calls.get_column("name")).alias("module"),
        parts.struct.field("2").cast(pl.Int64).alias("instance"),
    )
    return calls, flows


def kernel_modules(path: Path) -> pl.DataFrame:
    """``stream_id, start_ns, module, instance`` for each kernel launched inside an
    ``nn.Module`` call, its innermost one (joins the kernel table on stream and start).
    Empty when the capture recorded no module scope."""
    calls, flows = _launches(path)
    if calls.is_empty() or flows.is_empty():
        return pl.DataFrame(schema=SCHEMA)
    launched = flows.with_columns(innermost_calls(calls, flows).alias("call")).drop_nulls("call")
    call = launched.get_column("call")
    return pl.DataFrame(
        {
            "stream_id": launched.get_column("stream_id"),
            "start_ns": launched.get_column("start_ns"),
            "module": calls.get_column("module").gather(call),
            "instance": calls.get_column("instance").gather(call),
        },
        schema=SCHEMA,
    )


def scope_column(module: str) -> str:
    """The kernel-table column of a ``module:`` selection: the instance of ``module``
    each kernel was launched in, at any depth (null: outside every call of it)."""
    return f"{MODULE_SCOPE}{module}"


def module_scopes(path: Path, modules: Sequence[str], kineto: bool = False) -> pl.DataFrame:
    """``stream_id, start_ns`` and one :func:`scope_column` per module name: the kernels
    launched inside a call of that module, directly or in a submodule (a SharedExpert's
    kernels run inside its Linear layers), with the call's instance."""
    calls, flows = _launches(path, kineto)
    out = flows.select("stream_id", "start_ns")
    for module in dict.fromkeys(modules):
        mine = calls.filter(pl.col("module") == module)
        column = scope_column(module)
        if mine.is_empty() or flows.is_empty():
            out = out.with_columns(pl.lit(None, pl.Int64).alias(column))
            continue
        owner = innermost_calls(mine, flows)
        out = out.with_columns(mine.get_column("instance").gather(owner).alias(column))
    return out.unique(["stream_id", "start_ns"], keep="first", maintain_order=True)


def with_modules(kernels: pl.DataFrame, modules: pl.DataFrame) -> pl.DataFrame:
    """The kernel table with ``module`` and ``instance`` beside it (null: launched outside
    any module call), matched on (stream_id, start_ns). Not part of the canonical
    schema: only a ``module:`` selection adds it."""
    return kernels.join(modules, on=["stream_id", "start_ns"], how="left", nulls_equal=False)


def capture_with_modules(
    capture: Capture, traces: Sequence[Path], modules: Sequence[str]
) -> Capture:
    """``capture`` with a :func:`scope_column` per module name, from its trace_view.json
    (the first of ``traces`` named so), or the Kineto trace it was read from; unchanged
    when it has none (a ``module:`` selection then selects nothing, and the plan says so)."""
    if capture.source == "kineto":
        scopes = module_scopes(Path(capture.path), modules, kineto=True)
        return replace(capture, kernels=with_modules(capture.kernels, scopes))
    trace = next((t for t in traces if t.name == "trace_view.json"), None)
    if trace is None:
        return capture
    return replace(capture, kernels=with_modules(capture.kernels, module_scopes(trace, modules)))
