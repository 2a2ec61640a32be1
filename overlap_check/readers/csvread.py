"""Read the columns a reader needs from a profiler CSV, by header name, fast and exactly.

A polars query over the file, or over each block of whole records of a large one
(``readers.csvblocks``), with cheap checks that flag a suspect file; a suspect file is read
again record by record with Python's ``csv``, which knows field counts and line numbers.
The rules: docs/formats.md, "kernel_details.csv and op_summary_*.csv"."""

from __future__ import annotations

import csv
import io
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl

from overlap_check.model.errors import InputError, SchemaError
from overlap_check.readers import csvblocks
from overlap_check.readers.csvblocks import RecordTooLong, map_in_order, record_blocks
from overlap_check.readers.numbers import (
    int_text,
    is_na_text,
    na_to_null,
    us_clean_text_to_ns,
    us_text_to_ns,
)

Kind = Literal["int", "us", "str"]

_HEADER_PROBE_BYTES = 1 << 20
_SURPLUS = "__surplus_field"
# No profiler field comes near this (the longest, Input Shapes, holds a few KB): a larger
# one is an error naming its line, not a value to hold in memory many times over.
MAX_FIELD_BYTES = 1 << 20
# A file up to this size is one streamed polars query over the file: its mapped pages add
# as much to the peak while it is read. 66 MB, 1 polars thread: 0.11 s of CPU, not 0.15 s
# in blocks; 328 MB: 0.1 s less for `analyze`, but a peak 0-60 MB higher (docs/benchmarks.md).
WHOLE_FILE_BYTES = 128 << 20


@dataclass(frozen=True)
class Column:
    """A column a reader wants. ``us``: decimal µs → int64 ns, a row whose value is not a
    number (missing if required, negative if ``nonnegative``) is malformed. ``tab``: msprof
    writes a TAB after each value. ``na``: ``N/A`` / blank text is null."""

    field: str
    aliases: tuple[str, ...]
    kind: Kind
    required: bool = False
    nonnegative: bool = False
    tab: bool = False
    na: bool = False


@dataclass(frozen=True)
class CsvTable:
    path: Path
    frame: pl.DataFrame  # one column per field found; us columns already in ns
    fields: frozenset[str]  # fields whose column exists in the header
    header: tuple[str, ...]
    skipped_lines: tuple[int, ...]  # 1-based line numbers of skipped rows


def normalise(name: str) -> str:
    """Header name for matching: no BOM, case, spaces or underscores."""
    return "".join(ch for ch in name.lstrip("\ufeff").lower() if ch not in " _\t")


def read_header(path: Path) -> list[str]:
    """The header fields, or InputError for an empty, binary or non-UTF-8 file."""
    try:
        with path.open("rb") as handle:
            probe = handle.read(_HEADER_PROBE_BYTES)
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", path=path) from err
    if not probe.strip():
        raise InputError("empty file", path=path)
    if b"\x00" in probe:
        raise InputError("binary data, not a CSV text file", path=path, line=1)
    try:
        text = probe.split(b"\n", 1)[0].decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError("not UTF-8 text, not a CSV file", path=path, line=1) from err
    try:
        header = next(csv.reader(io.StringIO(text)))
    except (csv.Error, StopIteration) as err:
        raise SchemaError("unreadable CSV header", path=path, line=1) from err
    return [field.strip() for field in header]


def match_columns(
    header: Sequence[str], columns: Sequence[Column], *, path: Path, what: str
) -> dict[str, int]:
    """Field → index of its column in the header; SchemaError when a required one is absent."""
    index = {normalise(name): at for at, name in reversed(list(enumerate(header)))}  # first wins
    found: dict[str, int] = {}
    for column in columns:
        at = next((index[n] for a in column.aliases if (n := normalise(a)) in index), None)
        if at is not None:
            found[column.field] = at
    missing = [c.aliases[0] for c in columns if c.required and c.field not in found]
    if missing:
        raise SchemaError(
            f"not a {what} file: no column {' / '.join(repr(m) for m in missing)} in its header",
            path=path,
            line=1,
            hint="expected a header with "
            + ", ".join(repr(c.aliases[0]) for c in columns if c.required),
        )
    return found


Finish = Callable[[pl.LazyFrame], pl.LazyFrame]


def read_csv_table(
    path: Path, columns: Sequence[Column], *, what: str, finish: Finish | None = None
) -> CsvTable:
    """Read the wanted columns of one CSV; malformed rows are skipped and counted.
    ``finish`` (lazy, row-wise, keeps unknown columns) runs in each block's query."""
    header = read_header(path)
    found = match_columns(header, columns, path=path, what=what)
    wanted = [c for c in columns if c.field in found]
    finish = finish or (lambda frame: frame)
    frame = _fast(path, header, wanted, found, finish)
    skipped: tuple[int, ...] = ()
    if frame is None:
        frame, skipped = _slow(path, header, wanted, found, finish)
    return CsvTable(path, frame, frozenset(found), tuple(header), skipped)


def _convert(
    schema: pl.Schema, wanted: Sequence[Column], names: dict[str, str], *, fast: bool
) -> tuple[list[pl.Expr], pl.Expr, list[str]]:
    """``values``, then ``bad`` on the results: each value parsed once; ``scratch``: the raw
    text columns ``values`` also keeps for ``bad``, dropped afterwards."""
    values: list[pl.Expr] = []
    bad: list[pl.Expr] = []
    scratch: list[str] = []

    def raw(column: Column) -> pl.Expr:
        """The source text, kept under a scratch name for the second step."""
        name = f"__raw_{column.field}"
        values.append(pl.col(names[column.field]).alias(name))
        scratch.append(name)
        return pl.col(name)

    for column in wanted:
        source = pl.col(names[column.field])
        out = pl.col(column.field)
        if column.kind == "int":
            if schema[names[column.field]] == pl.String:
                values.append(int_text(source).alias(column.field))
                bad.append(out.is_null() & ~is_na_text(raw(column)))
            else:
                values.append(source.cast(pl.Int64).alias(column.field))
        elif column.kind == "us":
            # the fast path strips only the expected TAB; the slow path anything
            tabbed = source.str.strip_chars_end("\t") if column.tab else source
            ns = us_clean_text_to_ns(tabbed) if fast else us_text_to_ns(source)
            values.append(ns.alias(column.field))
            bad.append(
                out.is_null() if column.required else out.is_null() & ~is_na_text(raw(column))
            )
            if column.nonnegative:
                bad.append(out < 0)
        elif column.na and not fast:  # the fast path nulls N/A while reading
            values.append(na_to_null(source).alias(column.field))
        else:
            values.append(source.alias(column.field))
            if column.required:  # a blank Name: a malformed row, listed by its line
                bad.append(out.is_null() | (out == ""))
    flag = pl.any_horizontal(bad).fill_null(True) if bad else pl.lit(False)
    return values, flag, scratch


_quiet_lock = threading.Lock()
_quiet: list[int] = []  # fd 2 as it was (-1: none), one entry per thread parsing


def _to_devnull() -> int:
    if sys.__stderr__ is None:  # started without fd 2: a file opened since may hold it
        return -1
    try:
        saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except OSError:  # started without fd 2: nothing to silence
        return -1
    os.dup2(null, 2)
    os.close(null)
    return saved


@contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """fd 2 on /dev/null while polars parses: its reader panics on some broken quoting (a
    PanicException; the slow path reads the file), and Rust's panic hook writes that and a
    backtrace to fd 2 itself, raw on the user's terminal."""
    with _quiet_lock:
        saved = _quiet[0] if _quiet else _to_devnull()
        _quiet.append(saved)
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet.pop()
            if not _quiet and saved >= 0:
                os.dup2(saved, 2)
                os.close(saved)


def _fast(
    path: Path,
    header: Sequence[str],
    wanted: Sequence[Column],
    found: dict[str, int],
    finish: Finish,
    *,
    block_bytes: int | None = None,
) -> pl.DataFrame | None:
    """Polars read, whole or block by block (``block_bytes``: always blocks, of that size);
    None at the first sign of a bad row (the slow path)."""
    names = {c.field: header[found[c.field]] for c in wanted}
    if len(set(header)) != len(header):
        return None  # duplicate header names: polars would rename them; read by position
    last = header[-1]
    # Every header column, typed, by position; plus one more: a row with too many
    # fields puts its first surplus field there (polars maps a given schema by
    # position and ignores surplus fields silently otherwise).
    schema: dict[str, pl.DataType] = {name: pl.String() for name in header}
    null_values: dict[str, str] = {}
    for column in wanted:
        name = names[column.field]
        if column.kind == "int" and name != last:
            schema[name] = pl.Int64()
            null_values[name] = "N/A"
        elif column.na and name != last:
            null_values[name] = "N/A"
    schema[_SURPLUS] = pl.String()
    values, bad, scratch = _convert(pl.Schema(schema), wanted, names, fast=True)
    too_long = pl.col(_SURPLUS).is_not_null()  # a field too many
    texts = [names[c.field] for c in wanted if c.kind == "str"]
    if texts:  # a field too long: the slow path names its line
        long_text = pl.any_horizontal(pl.col(t).str.len_bytes() > MAX_FIELD_BYTES for t in texts)
        too_long = too_long | long_text.fill_null(False)
    short = pl.col(last).is_null()  # a missing field (or an empty last one)
    checks = [short.alias("__short"), too_long.alias("__long")]
    suspect = (bad | pl.col("__short") | pl.col("__long")).alias("__suspect")

    def parse(source: bytes | Path) -> pl.DataFrame:
        scan = pl.LazyFrame(schema=schema)  # no body (polars 1.39 loses an empty scan's schema)
        if source != b"":  # a whole file (a path): its header line skipped
            scan = pl.scan_csv(source, has_header=False, skip_lines=int(isinstance(source, Path)),
                               schema=schema, missing_columns="insert",
                               null_values=null_values or None, raise_if_empty=False)  # fmt: skip
        query = scan.select(*values, *checks).with_columns(suspect)
        streamed = isinstance(source, Path)  # a whole file: parsed and converted in morsels
        query = finish(query.drop("__short", "__long", *scratch))
        return query.collect(engine="streaming") if streamed else query.collect()

    frames: list[pl.DataFrame] = []
    try:
        info = path.stat()  # polars takes a path as text: a name not UTF-8 is not printable
        whole = block_bytes is None and stat.S_ISREG(info.st_mode) and str(path).isprintable()
        with path.open("rb", buffering=0) as handle:
            blocks = record_blocks(handle, block_bytes, skip_first=True)
            # one block or less (a header alone, too) is no bigger than a block: read as one
            whole = whole and csvblocks.BLOCK_BYTES < info.st_size <= WHOLE_FILE_BYTES
            sources: Iterable[bytes | Path] = [path] if whole else blocks
            with _native_stderr_silenced(), closing(map_in_order(parse, sources)) as parsed:
                for frame in parsed:
                    if frame["__suspect"].any():
                        return None  # closing: the blocks still being parsed are waited for
                    frames.append(frame.drop("__suspect"))
        if not frames:
            frames.append(parse(b"").drop("__suspect"))  # no rows: the typed, empty table
    except (pl.exceptions.PolarsError, OSError, RecordTooLong):
        return None  # a non-integer in an integer column, bad UTF-8, a stray quote ...
    except pl.exceptions.PanicException:  # (a BaseException) polars' reader on odd quoting
        return None
    # One chunk per block, as a whole-file parse leaves one per morsel: no rechunk
    # (it would hold the table twice).
    return pl.concat(frames, rechunk=False)


def _slow(
    path: Path,
    header: Sequence[str],
    wanted: Sequence[Column],
    found: dict[str, int],
    finish: Finish,
) -> tuple[pl.DataFrame, tuple[int, ...]]:
    """Record by record with Python's csv module: exact field counts and line numbers."""
    positions = [found[c.field] for c in wanted]
    cells: list[list[str]] = [[] for _ in positions]
    lines: list[int] = []
    short_or_long: list[int] = []
    consumed = 1
    try:
        with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
            csv.field_size_limit(MAX_FIELD_BYTES)  # process-wide; Python's default is 128 KiB
            reader = csv.reader(handle)
            next(reader, None)
            consumed = reader.line_num
            for record in reader:
                first_line = consumed + 1
                consumed = reader.line_num
                if not record:
                    continue  # blank line
                if len(record) != len(header):
                    # A bad record over several lines is a stray quote that swallowed the
                    # lines after it: each of them is malformed, not one "row".
                    short_or_long.extend(range(first_line, consumed + 1))
                    continue
                for target, position in zip(cells, positions, strict=True):
                    target.append(record[position])
                lines.append(first_line)
    except csv.Error as err:
        message = f"unreadable CSV: {err}"
        if "field larger than field limit" in str(err):
            message = f"a field over {MAX_FIELD_BYTES >> 20} MiB: not a value a profiler writes"
        raise InputError(message, path=path, line=consumed + 1) from err
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", path=path) from err
    names = {c.field: f"__c{i}" for i, c in enumerate(wanted)}
    schema = {**dict.fromkeys(names.values(), pl.String), "__line": pl.Int64}
    raw = pl.DataFrame([*cells, lines], schema=schema, orient="col")
    values, bad, scratch = _convert(raw.schema, wanted, names, fast=False)
    converted = (
        raw.lazy()
        .select(*values, "__line")
        .with_columns(bad.alias("__bad"))
        .drop(scratch)
        .collect()
    )
    bad_values = converted.filter(pl.col("__bad"))["__line"].to_list()
    good = finish(converted.lazy().filter(~pl.col("__bad")).drop("__bad", "__line")).collect()
    return good, tuple(sorted(short_or_long + bad_values))
