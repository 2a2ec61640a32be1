"""Chrome-trace JSON → the few event fields the trace reader uses.

Why: ``json.loads`` builds a dict per event and an object per value, most of the reading time
for millions of events. msgspec decodes into small structs naming only the fields used; events
are a union tagged by ``ph``, other phases decode to empty structs. Values keep their JSON types
(``Any``). Whatever msgspec rejects (invalid JSON, a ``{"traceEvents": ...}`` object, an unknown
``ph``, ``NaN``, a BOM ...) is decoded again with ``json.loads``, giving its result or error. A
missing key and a JSON ``null`` differ where the reader tells them apart: those fields default
to UNSET."""

from __future__ import annotations

import gc
import json
import mmap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import is_
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Union

import msgspec

from overlap_check.model.errors import InputError, SchemaError

if TYPE_CHECKING:
    from typing_extensions import Buffer

UNSET: Any = msgspec.UNSET


class EventArgs(msgspec.Struct, gc=False):
    """The ``args`` keys the reader looks at (hardware tasks, metadata names)."""

    task_type: Any = msgspec.field(name="Task Type", default=UNSET)
    task_id: Any = msgspec.field(name="Task Id", default=None)
    physic_stream_id: Any = msgspec.field(name="Physic Stream Id", default=None)
    stream_id: Any = msgspec.field(name="Stream Id", default=None)
    lower_stream_id: Any = msgspec.field(name="stream id", default=None)
    name: Any = UNSET
    labels: Any = UNSET


class CompleteEvent(msgspec.Struct, tag_field="ph", tag="X", gc=False):
    """``ph: "X"``: a slice with a start and a duration."""

    pid: Any = None
    tid: Any = None
    ts: Any = None
    dur: Any = None
    name: Any = UNSET
    args: EventArgs | None = None  # None: absent, null or (json path) not an object


class MetadataEvent(msgspec.Struct, tag_field="ph", tag="M", gc=False):
    """``ph: "M"``: process/thread names and labels."""

    pid: Any = None
    tid: Any = None
    name: Any = None
    args: EventArgs | None = None


class _Flow(msgspec.Struct, gc=False):
    """A flow event's fields (torch_npu's ``torch_to_npu``: a kernel launch)."""

    pid: Any = None
    tid: Any = None
    ts: Any = None
    id: Any = None
    name: Any = UNSET


class FlowStart(_Flow, tag_field="ph", tag="s", gc=False):
    """``ph: "s"``: a flow's start (torch_npu: on the host thread, inside the launching op)."""


class FlowEnd(_Flow, tag_field="ph", tag="f", gc=False):
    """``ph: "f"``: a flow's end (torch_npu: at the hardware task's start)."""


# Every other phase of the Chrome trace event format: parsed, nothing kept.
_OTHER_PHASES = "BEiICbneSTpFstfPNODVvRc()"


def _others(skip: str) -> tuple[type[msgspec.Struct], ...]:
    return tuple(
        msgspec.defstruct(f"Phase{ord(p)}Event", [], tag_field="ph", tag=p, gc=False)
        for p in _OTHER_PHASES
        if p not in skip
    )


# the members named first: mypy for Python 3.10 reads a starred item inside Union[...]
# as 3.11's unparenthesised form
_EVENTS = (CompleteEvent, MetadataEvent, *_others(""))
_ANY_EVENT: Any = Union[_EVENTS]  # noqa: UP007 (a tuple built at run time)
_EVENT_LIST: Any = list[_ANY_EVENT]
_DECODER: msgspec.json.Decoder[list[Any]] = msgspec.json.Decoder(_EVENT_LIST)
# with the flows decoded too (readers.modules, opt-in: only a module: selection needs them)
_FLOW_EVENTS = (CompleteEvent, MetadataEvent, FlowStart, FlowEnd, *_others("sf"))
_WITH_FLOWS: Any = Union[_FLOW_EVENTS]  # noqa: UP007
_FLOW_LIST: Any = list[_WITH_FLOWS]
_FLOW_DECODER: msgspec.json.Decoder[list[Any]] = msgspec.json.Decoder(_FLOW_LIST)


@dataclass(frozen=True)
class TraceEvents:
    complete: list[CompleteEvent]  # ph "X", in file order
    metadata: list[MetadataEvent]  # ph "M", in file order
    flow_starts: list[FlowStart] = field(default_factory=list)  # ph "s" (with flows=True)
    flow_ends: list[FlowEnd] = field(default_factory=list)  # ph "f" (with flows=True)


def _split(events: list[Any], flows: bool) -> TraceEvents:
    types = list(map(type, events))  # C-level filters: there are millions of events

    def of(kind: type[Any]) -> list[Any]:
        return list(compress(events, map(is_, types, repeat(kind))))

    if not flows:
        return TraceEvents(of(CompleteEvent), of(MetadataEvent))
    return TraceEvents(of(CompleteEvent), of(MetadataEvent), of(FlowStart), of(FlowEnd))


def fast_decode(data: Buffer, flows: bool = False) -> TraceEvents | None:
    """The events, or None when msgspec rejects the text (the caller then uses json)."""
    try:
        return _split((_FLOW_DECODER if flows else _DECODER).decode(data), flows)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def events_from_dicts(events: list[Any], flows: bool = False) -> TraceEvents:
    """The structs :func:`fast_decode` gives, from ``json.loads``' objects (non-objects and
    other phases skipped, ``args`` that is not an object read as None)."""
    phases = ("X", "M", "s", "f") if flows else ("X", "M")
    kept = [
        {**e, "args": a if isinstance(a := e.get("args"), dict) else None}
        for e in events
        if isinstance(e, dict) and e.get("ph") in phases
    ]
    return _split(msgspec.convert(kept, _FLOW_LIST if flows else _EVENT_LIST), flows)


def json_decode(data: bytes, path: Path, flows: bool = False) -> TraceEvents:
    """The events via ``json.loads``: InputError for invalid JSON, SchemaError for a non-trace."""
    try:
        parsed = json.loads(data)
    except UnicodeDecodeError as err:
        raise InputError("not UTF-8 text, not a JSON trace", path=path) from err
    except json.JSONDecodeError as err:
        raise InputError(
            f"invalid or truncated JSON: {err.msg} (column {err.colno})", path=path, line=err.lineno
        ) from err
    except RecursionError as err:  # no trace nests more than a few levels
        raise InputError("JSON nested too deeply to be a trace", path=path) from err
    if isinstance(parsed, dict) and isinstance(parsed.get("traceEvents"), list):
        parsed = parsed["traceEvents"]
    if not isinstance(parsed, list):
        raise SchemaError("not a Chrome trace: expected a JSON array of events", path=path)
    return events_from_dicts(parsed, flows)


def _map(handle: BinaryIO) -> mmap.mmap | None:
    """The file mapped in memory (no copy of a multi-hundred-MB file), None if it cannot be."""
    try:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # an empty file, a pipe, no mmap support: read it instead
        return None


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: its passes would walk the lists of millions of
    events again and again (the events hold no cycles)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_trace_events(path: Path, flows: bool = False) -> TraceEvents:
    """The X and M events (``flows``: and flow starts/ends) of a trace file; InputError for
    an unreadable, empty or invalid file, SchemaError for JSON that is not a trace."""
    try:
        with path.open("rb") as handle:
            view = _map(handle)
            if view is not None:
                with view:
                    events = fast_decode(view, flows)
                if events is not None:
                    return events
            handle.seek(0)
            data = handle.read()
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", path=path) from err
    if not data or data.isspace():  # `not data.strip()` without copying the file
        raise InputError("empty file", path=path)
    events = fast_decode(data, flows) if view is None else None  # msgspec rejected the mapping
    return events if events is not None else json_decode(data, path, flows)
