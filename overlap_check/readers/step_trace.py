"""The profiler's own compute-vs-communication figures per step (docs/formats.md,
"step_trace_time.csv and analysis.db"): a cross-check, so a bad row is an error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import polars as pl

from overlap_check.model import ProfilerStepTime
from overlap_check.model.errors import InputError, SchemaError
from overlap_check.readers.csvread import Column, read_csv_table
from overlap_check.readers.db import PROGRESS_STEPS, QUERY_SECONDS, Deadline
from overlap_check.readers.numbers import int_text, is_na_text, us_text_to_ns

_FIGURES = ("computing", "not_overlapped", "overlapped", "communication", "free")

_COLUMNS = (
    Column("step", ("Step",), "int", required=True),
    Column("device", ("Device_id", "Device ID"), "int"),
    Column("computing", ("Computing",), "us"),
    Column("not_overlapped", ("Communication(Not Overlapped)",), "us"),
    Column("overlapped", ("Overlapped",), "us"),
    Column("communication", ("Communication",), "us"),
    Column("free", ("Free",), "us"),
)

# analysis.db StepTraceTime: column names of the db export
_DB_COLUMNS = {
    "step": "step",
    "computing": "computing",
    "not_overlapped": "communication_not_overlapped",
    "overlapped": "overlapped",
    "communication": "communication",
    "free": "free",
}


def _rows(frame: pl.DataFrame) -> tuple[ProfilerStepTime, ...]:
    """One ProfilerStepTime per row (a handful: one per profiled step); Int64 columns."""
    return tuple(
        ProfilerStepTime(
            step=row.get("step"),
            device=row.get("device"),
            **{f"{name}_ns": row.get(name) for name in _FIGURES},
        )
        for row in frame.iter_rows(named=True)
    )


def read_step_trace_csv(path: Path) -> tuple[ProfilerStepTime, ...]:
    """step_trace_time.csv, one entry per row; InputError naming the first bad line."""
    table = read_csv_table(path, _COLUMNS, what="step_trace_time.csv")
    # the figures compared must be in the header; a value may still be N/A
    missing = [c.aliases[0] for c in _COLUMNS[2:5] if c.field not in table.fields]
    if missing:
        raise SchemaError(
            f"not a step_trace_time.csv file: no column {', '.join(map(repr, missing))}",
            path=path,
            line=1,
        )
    if table.skipped_lines:
        raise InputError(
            f"malformed step_trace_time.csv row ({len(table.skipped_lines)} in all): "
            "a field missing, or a value not a number or negative",
            path=path,
            line=table.skipped_lines[0],
        )
    negative = table.frame.select(
        pl.any_horizontal(pl.col(n) < 0 for n in _FIGURES if n in table.fields).fill_null(False)
    ).to_series()
    if negative.any():  # (nonnegative columns would also reject N/A)
        raise InputError(
            "malformed step_trace_time.csv row: a negative time",
            path=path,
            line=int(negative.arg_true()[0]) + 2,  # after the header, one row a line
        )
    return _rows(table.frame)


def read_step_trace_db(path: Path) -> tuple[ProfilerStepTime, ...]:
    """The StepTraceTime table of a db export's analysis.db; () when it has none."""
    deadline = Deadline(QUERY_SECONDS)
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            db.set_progress_handler(deadline, PROGRESS_STEPS)
            kinds = dict(db.execute("SELECT name, type FROM sqlite_master").fetchall())
            if kinds.get("StepTraceTime", "table") != "table":  # a view may never answer
                raise InputError(
                    "StepTraceTime is a view, not a table (views are not read)", path=path
                )
            if "StepTraceTime" not in kinds:
                return ()
            have = {r[1] for r in db.execute("PRAGMA table_info(StepTraceTime)")}
            missing = sorted(c for c in _DB_COLUMNS.values() if c not in have)
            if missing:
                raise InputError(f"StepTraceTime has no column {', '.join(missing)}", path=path)
            names = ", ".join(f'CAST("{c}" AS TEXT)' for c in _DB_COLUMNS.values())
            rows = db.execute(f"SELECT {names} FROM StepTraceTime ORDER BY rowid").fetchall()
    except sqlite3.Error as err:
        if deadline.passed:
            raise InputError(f"reading took more than {QUERY_SECONDS:.0f} s", path=path) from err
        raise InputError(f"unreadable analysis.db: {err}", path=path) from err
    raw = pl.DataFrame(
        [list(r) for r in rows], schema={k: pl.String() for k in _DB_COLUMNS}, orient="row"
    )
    parsed = raw.with_columns(
        int_text(pl.col("step")).alias("_step"),
        *(us_text_to_ns(pl.col(n)).alias(f"_{n}") for n in _FIGURES),
    )
    bad = parsed.select(
        pl.any_horizontal(
            pl.col(f"_{n}").is_null() & ~is_na_text(pl.col(n)) for n in ("step", *_FIGURES)
        )
    ).to_series()
    if bad.any():
        first = int(bad.arg_true()[0]) + 1
        raise InputError(f"StepTraceTime row {first}: a value that is not a number", path=path)
    return _rows(parsed.select(pl.col(f"_{n}").alias(n) for n in ("step", *_FIGURES)))
