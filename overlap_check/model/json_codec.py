"""The JSON report and its reader: one codec, derived from the model's dataclasses, both
ways (docs/contract.md, "How the JSON is derived": durations, points, the tables below).
A document that is not a report is an InputError naming the file and the key."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields, is_dataclass
from functools import cache
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import msgspec

from overlap_check.model import (
    SCHEMA_VERSION,
    ContentionInterval,
    CoresResult,
    DeviceCores,
    LayerFigures,
    PlanResult,
    PlanRun,
    ReferenceDelta,
    Report,
    RunInfo,
)
from overlap_check.model.errors import InputError

JSON = dict[str, Any]
Origins = dict[tuple[Any, Any], Any]  # (rank, run) -> origin_ns, as read

# absolute points in time, by field name in any class: "exact" writes x_ns and x_ns_str,
# "relative" x_us (from the run's origin), "both" all three. Every other *_ns field is a
# duration, written as x_us.
POINTS = {
    "capture_time_ns": "exact",
    "origin_ns": "exact",
    "start_ns": "both",
    "side_start_ns": "both",
    "dom_start_ns": "both",
    "side_end_ns": "relative",
    "dom_end_ns": "relative",
}
RENAMED: dict[tuple[type, str], str] = {
    (RunInfo, "communication"): "communication_rows",
    (PlanRun, "fake"): "fake_occurrences",
    (PlanRun, "hidden_counts"): "verdict_counts",
    (PlanResult, "shapes"): "input_shapes",
    (ReferenceDelta, "steps_before"): "warm_steps_before",
    (ReferenceDelta, "steps_after"): "warm_steps_after",
    (ContentionInterval, "demand"): "{kind}_demand",
    (ContentionInterval, "maximum"): "{kind}_max",
    (Report, "fake_share"): "thresholds.fake_share",
}
COUNTS = ("real", "partial", "fake")  # judged occurrences per hidden_pct band
AS_OBJECTS: dict[tuple[type, str], tuple[str, ...]] = {
    (PlanRun, "hidden_counts"): COUNTS,
    (PlanResult, "verdict_counts"): COUNTS,
    (LayerFigures, "step_walls"): ("step", "wall_ns"),
    (CoresResult, "over_limit_by_rank"): ("rank", "over_limit_ns"),
}
# the keys a reader of the document sees first (the rest follow in field order)
LEADING: dict[type, tuple[str, ...]] = {
    Report: ("schema_version", "tool_version", "config_path", "verdict", "exit_code",
             "thresholds", "warmup", "min_runs", "per", "fail_on", "strict", "gate_reasons",
             "evidence_summary", "notes", "worst_rank"),
}  # fmt: skip
# a count no source gives is 0 in the model and null in the document (never a 0 core count)
ZERO_AS_NULL = frozenset({(DeviceCores, "aicore"), (DeviceCores, "vectorcore")})
# keys written for the document's readers, computed from the object (not read back)
DERIVED: dict[type, dict[str, Callable[[Any], Any]]] = {
    DeviceCores: {"guessed": lambda device: device.source == "observed"},
}
# only a plan read with a reference has input_shapes, only a non-compute plan a side_kind
OMITTED_AT_DEFAULT = {(PlanResult, "shapes"), (PlanResult, "side_kind")}
FRACTIONS = frozenset(
    {"overlap_pct", "busy_overlap_pct", "hidden_pct", "dominator_pct", "overlap_min",
     "overlap_max", "real", "fake", "fake_share", "base", "head"}
)  # fmt: skip


def us(ns: float | None) -> float | None:
    """Microseconds rounded to 3 decimals (ns resolution). An int below 2**53 needs no round
    (5x slower): its quotient by 1000 is already the double nearest to the 3 decimals."""
    if type(ns) is int and -(2**53) < ns < 2**53:
        return ns / 1000
    return None if ns is None else round(ns / 1000, 3)


def _ns(value: Any) -> Any:
    """JSON microseconds -> integer nanoseconds; anything else as is (msgspec says why)."""
    return round(value * 1000) if _is_number(value) and math.isfinite(value) else value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class _Field:
    name: str
    key: str  # the JSON key of the value itself (x_us for a time)
    time: str | None  # None, "us" (a duration) or a POINTS kind
    cls: type | None  # the dataclass of a nested object, or of a list's items
    is_list: bool  # a variable-length tuple: a JSON list
    names: tuple[str, ...]  # AS_OBJECTS: the keys of the tuple's items
    omit: bool
    default: Any
    fraction: bool  # its JSON key is one of FRACTIONS
    zero_null: bool  # ZERO_AS_NULL
    plain: bool  # written as it is, under its own name
    direct: bool  # its key is neither a template nor dotted


def _time_kind(name: str) -> str | None:
    if name in POINTS:
        return POINTS[name]
    return "us" if name == "ns" or name.endswith("_ns") else None


def _us_key(name: str) -> str:
    return name[:-2] + "us"  # x_ns -> x_us, ns -> us


@cache
def _spec(cls: type) -> tuple[_Field, ...]:
    hints = get_type_hints(cls)
    specs = []
    leading = LEADING.get(cls, ())
    order = {name: number for number, name in enumerate(leading)}
    for f in sorted(fields(cls), key=lambda f: order.get(f.name, len(leading))):
        kind = _time_kind(f.name)
        key = RENAMED.get((cls, f.name), f.name)
        nested, names = _dataclass_in(hints[f.name]), AS_OBJECTS.get((cls, f.name), ())
        omit, zero_null = (cls, f.name) in OMITTED_AT_DEFAULT, (cls, f.name) in ZERO_AS_NULL
        specs.append(
            _Field(
                name=f.name,
                key=_us_key(key) if kind in ("us", "relative", "both") else key,
                time=kind,
                cls=nested,
                is_list=_is_list(hints[f.name]),
                names=names,
                omit=omit,
                default=None if f.default is MISSING else f.default,
                fraction=key.rpartition(".")[2] in FRACTIONS,
                zero_null=zero_null,
                plain=key == f.name and not (kind or nested or names or omit or zero_null),
                direct="{" not in key and "." not in key,
            )
        )
    return tuple(specs)


def _dataclass_in(hint: Any) -> type | None:
    if isinstance(hint, type) and is_dataclass(hint):
        return hint
    return next(filter(None, map(_dataclass_in, get_args(hint))), None)


def _is_list(hint: Any) -> bool:
    if get_origin(hint) is tuple:
        return get_args(hint)[-1:] == (Ellipsis,)
    return any(_is_list(arg) for arg in get_args(hint) if arg is not type(None))


@cache
def _scoped(cls: type) -> bool:
    """Whether its objects name a rank or a run (the origin of the points inside)."""
    return any(f.name in ("rank", "run") for f in fields(cls))


@dataclass(frozen=True)
class _Where:
    """The origins of the runs, the nearest ``rank`` and ``run`` around a value, and the
    origin of that run (None: unknown)."""

    origins: Origins
    rank: int | None = None
    run: int | None = None
    origin: int | None = None

    def within(self, get: Any) -> _Where:
        rank, run = get("rank"), get("run")
        if rank is MISSING and run is MISSING:
            return self
        rank = self.rank if rank is MISSING else rank
        run = self.run if run is MISSING else run
        origin = None
        if _is_key(rank) and _is_key(run):  # else not a rank or a run: msgspec names it
            origin = self.origins.get((rank, run))
        return _Where(self.origins, rank, run, origin if _is_key(origin) else None)


def _is_key(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _write(obj: object, where: _Where) -> JSON:
    cls: type = type(obj)
    if (fast := _compiled(cls)) is not None:
        return fast(obj, where)
    if _scoped(cls):
        where = where.within(lambda name: getattr(obj, name, MISSING))
    out: JSON = {}
    for f in _spec(cls):
        value = getattr(obj, f.name)
        if f.plain:  # most fields: the value as it is
            out[f.key] = list(value) if type(value) is tuple else value
            continue
        if f.omit and value == f.default:
            continue
        if f.names:
            value = _write_tuple(f, value)
        elif f.cls is not None and value is not None:
            value = [_write(v, where) for v in value] if f.is_list else _write(value, where)
        elif isinstance(value, tuple):
            value = list(value)
        elif f.zero_null and value == 0:
            value = None
        target, key = (out, f.key) if f.direct else _place(out, f.key.format_map(out))
        if f.time == "us":
            target[key] = us(value)
        if f.time in ("relative", "both"):
            origin = where.origin
            target[key] = None if value is None or origin is None else us(value - origin)
        if f.time in ("exact", "both"):
            target[f.name] = value
            target[f"{f.name}_str"] = None if value is None else str(value)
        if f.time is None:
            target[key] = value
    for key, derive in DERIVED.get(cls, {}).items():
        out[key] = derive(obj)
    return out


@cache
def _compiled(cls: type) -> Callable[[Any, _Where], JSON] | None:
    """For a class of plain and time fields only (a report lists thousands of Occurrences),
    what :func:`_write` does, as one dict display built once from its spec."""
    specs = _spec(cls)
    if (
        _scoped(cls)
        or cls in DERIVED
        or any(f.cls or f.names or f.omit or f.zero_null or not f.direct for f in specs)
    ):
        return None
    items = []
    for f in specs:
        v = f"o.{f.name}"
        if f.time is None:
            items.append(f"{f.key!r}: list({v}) if type({v}) is tuple else {v}")
        if f.time == "us":
            items.append(f"{f.key!r}: us({v})")
        if f.time in ("relative", "both"):
            items.append(
                f"{f.key!r}: None if {v} is None or w.origin is None else us({v} - w.origin)"
            )
        if f.time in ("exact", "both"):
            items.append(f"{f.name!r}: {v}, '{f.name}_str': None if {v} is None else str({v})")
    writer: Callable[[Any, _Where], JSON] = eval(f"lambda o, w: {{{', '.join(items)}}}", {"us": us})
    return writer


def _write_tuple(f: _Field, value: tuple[Any, ...]) -> Any:
    def one(items: tuple[Any, ...]) -> JSON:
        return {
            _us_key(n) if _time_kind(n) else n: us(v) if _time_kind(n) else v
            for n, v in zip(f.names, items, strict=True)
        }

    return [one(v) for v in value] if f.is_list else one(value)


def _place(out: JSON, key: str) -> tuple[JSON, str]:
    """The object a (dotted) key goes in, and its last part."""
    *parents, last = key.split(".")
    for parent in parents:
        out = out[parent]
    return out, last


def to_dict(report: Report) -> JSON:
    """The report as plain JSON-ready data (schema_version 1)."""
    return _write(report, _Where({(r.rank, r.index): r.origin_ns for r in report.runs}))


def indented(data: JSON) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)``, ~8x faster (msgspec's compact
    output, re-indented by msgspec), but for a float json.dumps writes with an exponent
    (``1e-8`` for ``1e-08``: the same number) and NaN, written null (a report never holds
    one: judge.sanity). A lone surrogate (a report read back from \\ud800): json.dumps'."""
    try:
        return msgspec.json.format(msgspec.json.encode(data), indent=2).decode()
    except UnicodeEncodeError:
        return json.dumps(data, indent=2, ensure_ascii=False)


class _Keys(dict[str, Any]):
    """A JSON object's keys for a RENAMED template (a missing one reads as None)."""

    def __missing__(self, key: str) -> None:
        return None


def _read(doc: Any, cls: type, where: _Where, at: str, path: str | Path | None) -> Any:
    """The JSON object ``doc`` in the dataclass's shape (field names, integer ns), checked
    for shares outside [0, 1] and non-numbers; the rest msgspec checks."""
    if not isinstance(doc, dict):
        return doc
    where = where.within(lambda name: doc.get(name, MISSING))
    out: JSON = {}
    for f in _spec(cls):
        source: Any = doc
        key = f.key.format_map(_Keys(doc))
        if "." in key:
            parent, key = key.split(".")
            source = doc.get(parent) if isinstance(doc.get(parent), dict) else {}
        name = f"{at}.{key}" if at else key
        if f.time in ("exact", "both") and f.name in source:
            exact = f"{at}.{f.name}" if at else f.name
            out[f.name] = _checked(f, source[f.name], exact, path)
        elif f.time in ("relative", "both") and key in source:
            relative, origin = _ns(_checked(f, source[key], name, path)), where.origin
            if isinstance(relative, int):
                relative = None if origin is None else origin + relative
            out[f.name] = relative  # None stays None, anything else msgspec names
        elif key in source and f.time != "exact":
            out[f.name] = _read_value(f, source[key], where, name, path)
    return out


def _read_value(f: _Field, value: Any, where: _Where, at: str, path: str | Path | None) -> Any:
    if f.names:
        return (
            [_read_tuple(f, v) for v in value] if isinstance(value, list) else _read_tuple(f, value)
        )
    if f.cls is not None and isinstance(value, list) and f.is_list:
        return [_read(v, f.cls, where, f"{at}[{n}]", path) for n, v in enumerate(value)]
    if f.cls is not None:
        return _read(value, f.cls, where, at, path)
    value = _checked(f, value, at, path)
    if f.zero_null and value is None:
        return 0
    return _ns(value) if f.time == "us" else value


def _checked(f: _Field, value: Any, at: str, path: str | Path | None) -> Any:
    """The value, unless it is a number no report holds (NaN, or a share outside [0, 1])."""
    bad = isinstance(value, float) and not math.isfinite(value)
    if bad or (f.fraction and _is_number(value) and not 0 <= value <= 1):
        raise InputError(f"unexpected value {value!r}", path=path, key=at)
    return value


def _read_tuple(f: _Field, value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return [_ns(value.get(_us_key(n))) if _time_kind(n) else value.get(n) for n in f.names]


def from_dict(document: Any, path: str | Path | None = None) -> Report:
    """The Report a JSON document (already parsed) describes; InputError naming the key."""
    if not isinstance(document, dict) or document.get("schema_version") != SCHEMA_VERSION:
        raise InputError(
            f"not an overlap-check JSON report (schema_version {SCHEMA_VERSION})",
            path=path,
            hint="write one with --format json or --output FILE.json",
        )
    runs = document.get("runs")
    origins: Origins = {}
    for run in runs if isinstance(runs, list) else ():
        if isinstance(run, dict) and _is_key(run.get("index")) and _is_key(run.get("rank")):
            origins[(run.get("rank"), run.get("index"))] = run.get("origin_ns")
    shaped = _read(document, Report, _Where(origins), "", path)
    try:
        return msgspec.convert(shaped, Report)
    except msgspec.ValidationError as err:
        raise _explained(err, document, path) from None


def _explained(err: msgspec.ValidationError, document: JSON, path: str | Path | None) -> InputError:
    """msgspec's error at ``$.plans[0].per_run`` (field names) as the JSON key and value."""
    text, _, at = str(err).partition(" - at `$")
    steps = re.findall(r"\.(\w+)|\[(\d+)\]", at)
    missing = re.match(r"Object missing required field `(\w+)`", text)
    if missing:
        steps.append((missing[1], ""))
    node: Any = document
    cls: type | None = Report
    found: _Field | None = None
    keys: list[str] = []
    for name, index in steps:
        if index:
            keys[-1] += f"[{index}]"
            node = node[int(index)] if isinstance(node, list) and int(index) < len(node) else None
            continue
        found = {f.name: f for f in _spec(cls)}.get(name) if cls else None
        obj = node if isinstance(node, dict) else {}
        key = name if found is None or (found.time == "both" and name in obj) else found.key
        key = key.format_map(_Keys(obj))
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        keys.append(key)
        cls = None if found is None else found.cls
    if found is not None and found.is_list and not isinstance(node, list):
        message = "expected a list"
    elif "`object`" in text and not isinstance(node, dict):
        message = f"expected an object, got {node!r}"
    else:
        message = f"unexpected value {node!r}"
    return InputError(message, path=path, key=".".join(keys) or None)
