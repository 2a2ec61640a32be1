"""The events of a PyTorch profiler (Kineto) trace as msgspec decodes them (only the keys
the readers use, times kept as their raw JSON text), and as one polars frame.

Why: a trace holds millions of events; each field is pulled out with C-level maps and
typed in polars, never a Python call per event. docs/formats.md gives the rules."""

from __future__ import annotations

from itertools import compress, repeat
from operator import attrgetter, is_, is_not
from typing import Any

import msgspec
import polars as pl

from overlap_check.readers.numbers import us_text_to_ns


class Args(msgspec.Struct, gc=False):
    device: Any = None
    stream: Any = None
    correlation: Any = None
    grid: msgspec.Raw = msgspec.Raw()


class Event(msgspec.Struct, gc=False):
    ph: Any = None
    cat: Any = None
    name: Any = None
    pid: Any = None
    tid: Any = None
    ts: msgspec.Raw = msgspec.Raw()
    dur: msgspec.Raw = msgspec.Raw()
    args: Args | None = None


# a launch grid [x, y, z] of three JSON integers
_GRID = r"^\[\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*\]$"


def raw_texts(raws: list[msgspec.Raw]) -> pl.Series:
    """Raw JSON values as their text ("" where absent): one join, one split (a NUL is
    never part of a JSON value's text)."""
    text = b"\0".join(raws).decode("utf-8", "replace")
    return pl.Series([text]).str.split("\0").explode().head(len(raws))


def _spread(values: pl.Series, mask: pl.Series) -> pl.Series:
    """``values`` (one per True of ``mask``) at those places, null elsewhere."""
    if mask.all():
        return values
    empty = pl.repeat(None, mask.len(), dtype=values.dtype, eager=True).alias(values.name)
    return empty.scatter(mask.arg_true(), values)


def of_type(values: list[Any], kind: type, dtype: type[pl.DataType]) -> pl.Series:
    """The values that are exactly a ``kind`` (an int column has no bools), null elsewhere
    (ints beyond Int64 too)."""
    if set(map(type, values)) <= {kind, type(None)}:
        return pl.Series(values, dtype=dtype, strict=False)
    mask = pl.Series(list(map(is_, map(type, values), repeat(kind))), dtype=pl.Boolean)
    return _spread(pl.Series(list(compress(values, mask)), dtype=dtype, strict=False), mask)


def _args_frame(events: list[Event]) -> pl.DataFrame:
    """device, stream, correlation (ints, else null), stream_given and ctas (grid x*y*z)
    per event."""
    args = list(map(attrgetter("args"), events))
    present = pl.Series(list(map(is_not, args, repeat(None))), dtype=pl.Boolean)
    given = list(compress(args, present))
    keys = ("device", "stream", "correlation")
    found = pl.DataFrame({k: of_type(list(map(attrgetter(k), given)), int, pl.Int64) for k in keys})
    # a stream given but not an int (text, bool, beyond Int64) is no stream: the row is unusable
    streams = map(attrgetter("stream"), given)
    found = found.with_columns(pl.Series("stream_given", list(map(is_not, streams, repeat(None)))))
    grid = raw_texts(list(map(attrgetter("grid"), given))).str.extract_groups(_GRID)
    sizes = [grid.struct.field(str(i)).cast(pl.Int64, strict=False) for i in (1, 2, 3)]
    found = found.with_columns((sizes[0] * sizes[1] * sizes[2]).alias("ctas"))
    return pl.DataFrame([_spread(column, present) for column in found.iter_columns()])


def event_frame(events: list[Event]) -> pl.DataFrame:
    """One row per event: ``x`` (ph X), ``cat`` / ``name`` (text, else null), ``cat_null``,
    ``pid`` / ``tid`` (ints, else null), the args columns, ``ts`` / ``dur`` raw text and
    ``start_ns`` / ``dur_ns`` exact."""
    field = {key: list(map(attrgetter(key), events)) for key in ("ph", "cat", "name", "pid", "tid")}
    frame = pl.DataFrame(
        {
            "x": (of_type(field["ph"], str, pl.String) == "X").fill_null(False),
            "cat": of_type(field["cat"], str, pl.String),
            "cat_null": pl.Series(list(map(is_, field["cat"], repeat(None))), dtype=pl.Boolean),
            "name": of_type(field["name"], str, pl.String),
            "pid": of_type(field["pid"], int, pl.Int64),
            "tid": of_type(field["tid"], int, pl.Int64),
            "ts": raw_texts(list(map(attrgetter("ts"), events))),
            "dur": raw_texts(list(map(attrgetter("dur"), events))),
        }
    )
    return pl.concat([frame, _args_frame(events)], how="horizontal").with_columns(
        us_text_to_ns(pl.col("ts")).alias("start_ns"), us_text_to_ns(pl.col("dur")).alias("dur_ns")
    )


def threads(events: list[Event], mask: pl.Series) -> pl.Series:
    """The host thread key ``repr((pid, tid))`` of the events under ``mask``."""
    picked = list(compress(events, mask.to_list()))
    pairs = zip(map(attrgetter("pid"), picked), map(attrgetter("tid"), picked), strict=True)
    return pl.Series(list(map(repr, pairs)), dtype=pl.String)


def name_texts(events: list[Event], mask: pl.Series) -> pl.Series:
    """``str(name)`` of the events under ``mask`` (a cpu_op's name may be any JSON value)."""
    return pl.Series(
        list(map(str, map(attrgetter("name"), compress(events, mask.to_list())))), dtype=pl.String
    )
