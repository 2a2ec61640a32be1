"""Module scope of each kernel, from trace_view.json or a Kineto trace (``module:`` plans).

The events read and the rule: docs/formats.md, "Module scope". Opt-in: the file is decoded again
with its flows."""

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
from overlap_check.readers.trace import (  # as the trace reader: one reading of the layout
    _layout,
    _text,  # UNSET (absent key) -> "", as the reader
)
from overlap_check.readers.trace_decode import TraceEvents, read_trace_events

MODULE_PREFIX = "nn.Module: "
FLOW = "torch_to_npu"
_INSTANCE = re.compile(r"^(.*)_(\d+)$")


def _ts(events: list[Any]) -> pl.Series:
    """The events' ``ts`` as exact ns."""
    texts = pl.Series(list(map(ts_text, map(attrgetter("ts"), events))), dtype=pl.String)
    return pl.DataFrame({"ts": texts}).select(us_text_to_ns(pl.col("ts"))).to_series()


def _thread(events: list[Any]) -> pl.Series:
    """(pid, tid) as one comparable text key (ids are ints or strings in traces)."""
    ids = zip(map(attrgetter("pid"), events), map(attrgetter("tid"), events), strict=True)
    return pl.Series(list(map(repr, ids)), dtype=pl.String)


def _names(events: list[Any]) -> pl.Series:
    return pl.Series(list(map(_text, map(attrgetter("name"), events))), dtype=pl.String)


def _calls(events: TraceEvents) -> pl.DataFrame:
    """The nn.Module calls: thread, start_ns, end_ns, name (without the prefix)."""
    keep = _names(events.complete).str.starts_with(MODULE_PREFIX).to_numpy()
    picked = list(compress(events.complete, keep))
    numeric = [isinstance(e.dur, (int, float)) and not isinstance(e.dur, bool) for e in picked]
    picked = list(compress(picked, numeric))
    if not picked:
        return pl.DataFrame(schema=_CALLS)
    start = _ts(picked)
    return pl.DataFrame(
        {
            "thread": _thread(picked),
            "start_ns": start,
            "end_ns": start + us_float_to_ns(list(map(attrgetter("dur"), picked))),
            "name": _names(picked).str.slice(len(MODULE_PREFIX)),
        },
        schema=_CALLS,
    ).filter(pl.col("end_ns") > pl.col("start_ns"))  # an empty call holds no launch


_CALLS = {"thread": pl.String, "start_ns": pl.Int64, "end_ns": pl.Int64, "name": pl.String}


def _flows(events: TraceEvents, streams: dict[str, int]) -> pl.DataFrame:
    """torch_to_npu flows ending on a Stream thread: host thread, launch_ns, stream_id,
    start_ns (the kernel's start)."""

    def frame(flows: list[Any]) -> pl.DataFrame:
        flows = list(compress(flows, _names(flows) == FLOW))
        ids = pl.Series(list(map(repr, map(attrgetter("id"), flows))), dtype=pl.String)
        return pl.DataFrame({"id": ids, "thread": _thread(flows), "ts": _ts(flows)})

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
    """The module calls (``module``, ``instance`` split from the name) and launches."""
    if kineto:
        from overlap_check.readers.kineto import kineto_launches

        calls, flows = kineto_launches(path)
    else:
        events = read_trace_events(path, flows=True)
        streams = {repr(key): stream for key, stream in _layout(events.metadata).streams.items()}
        calls, flows = _calls(events), _flows(events, streams)
    parts = calls.get_column("name").str.extract_groups(_INSTANCE.pattern)
    calls = calls.with_columns(
        parts.struct.field("1").fill_null(calls.get_column("name")).alias("module"),
        parts.struct.field("2").cast(pl.Int64).alias("instance"),
    )
    return calls, flows


def scope_column(module: str) -> str:
    """The kernel-table column of a ``module:`` selection: the instance of ``module``
    each kernel was launched in, at any depth (null: outside every call of it)."""
    return f"{MODULE_SCOPE}{module}"


def module_scopes(path: Path, modules: Sequence[str], kineto: bool = False) -> pl.DataFrame:
    """``stream_id, start_ns`` and per module a :func:`scope_column`: the instance of the
    call a kernel was launched in, directly or in a submodule."""
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
    """``kernels`` with the columns of ``modules``, matched on (stream_id, start_ns)."""
    return kernels.join(modules, on=["stream_id", "start_ns"], how="left", nulls_equal=False)


def capture_with_modules(
    capture: Capture, traces: Sequence[Path], modules: Sequence[str]
) -> Capture:
    """``capture`` with a :func:`scope_column` per module, from its trace_view.json (first of
    ``traces``) or Kineto trace; unchanged without one (the selection then selects nothing)."""
    if capture.source == "kineto":
        scopes = module_scopes(Path(capture.path), modules, kineto=True)
    elif (trace := next((t for t in traces if t.name == "trace_view.json"), None)) is not None:
        scopes = module_scopes(trace, modules)
    else:
        return capture
    return replace(capture, kernels=with_modules(capture.kernels, scopes))
