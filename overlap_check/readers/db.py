"""ascend_pytorch_profiler*.db (torch_npu) / msprof_*.db (msprof) → kernel rows with streams.

The tables and columns read: docs/formats.md, "SQLite exports"."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from overlap_check.model.errors import InputError, SchemaError
from overlap_check.readers.kernel_csv import finish_frame, input_shapes_text
from overlap_check.readers.metadata import rank_value
from overlap_check.readers.steps import with_steps
from overlap_check.readers.tasktypes import COPY_TASKS


@dataclass(frozen=True)
class DbKernels:
    path: Path
    kernels: pl.DataFrame  # kernel-table columns, unconformed
    rank: int | None  # RANK_DEVICE_MAP, when it names one rank
    session_end_ns: int | None  # SESSION_TIME_INFO.endTimeNs


_TEXT_FIELDS = ("name", "op_type", "accelerator_core")
_ROW_SCHEMA: dict[str, pl.DataType] = {
    **dict.fromkeys(("start_ns", "end_ns", "device", "stream_id", "task_id"), pl.Int64()),
    **dict.fromkeys(_TEXT_FIELDS, pl.String()),
    **dict.fromkeys(("block_num", "mix_block_num"), pl.Int64()),
}
_STEP_SCHEMA: dict[str, pl.DataType] = {
    **dict.fromkeys(("step_start", "step_end"), pl.Int64()),
    "step": pl.String(),
}
_SHAPES_FIELD = "input_shapes"  # table.OPTIONAL_KERNEL_SCHEMA, only when asked for
_COPY_TASK_FIELDS = ("startNs", "endNs", "deviceId", "streamId", "taskId")


def _q(identifier: str) -> str:
    """A quoted SQL identifier (names come from the file's own schema)."""
    return '"' + identifier.replace('"', '""') + '"'


class _Schema:
    """The columns of the tables we read, from the file itself. Only real tables: a view is
    a query the file's author wrote, maybe an endless one (``views`` names them)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        # table → real column name → (declared type, position in the primary key or 0)
        self._declared: dict[str, dict[str, tuple[str, int]]] = {}
        kinds = connection.execute("SELECT type, name FROM sqlite_master").fetchall()
        self._tables = {str(name).lower() for kind, name in kinds if kind == "table"}
        self.views = {str(name).lower() for kind, name in kinds if kind == "view"}

    def declared(self, table: str) -> dict[str, tuple[str, int]]:
        if table not in self._declared:
            query = f"PRAGMA table_info({_q(table)})"
            rows = (
                self._connection.execute(query).fetchall() if table.lower() in self._tables else []
            )
            self._declared[table] = {str(r[1]): (str(r[2] or ""), int(r[5] or 0)) for r in rows}
        return self._declared[table]

    def columns(self, table: str) -> dict[str, str]:
        """Lower-case column name → real name."""
        return {name.lower(): name for name in self.declared(table)}

    def integer_affinity(self, table: str, column: str) -> bool:
        """Declared so that SQLite stores integer-looking text as integers (affinity rule 1)."""
        return "INT" in self.declared(table).get(column, ("", 0))[0].upper()

    def sole_key(self, table: str, column: str) -> bool:
        """The column is the table's whole primary key (so its values are unique)."""
        return [name for name, (_, pk) in self.declared(table).items() if pk] == [column]

    def pick(self, table: str, *candidates: str) -> str | None:
        columns = self.columns(table)
        return next((columns[c.lower()] for c in candidates if c.lower() in columns), None)

    def has_strings(self) -> bool:
        return {"id", "value"} <= set(self.columns("STRING_IDS"))

    @property
    def string_id(self) -> str:
        return self.columns("STRING_IDS")["id"]


# The longest the queries of one file may take, all together: a 1M-kernel export reads
# in seconds; a file that takes minutes is built to stall the gate (docs/errors.md).
QUERY_SECONDS = 300.0
PROGRESS_STEPS = 10_000  # SQLite VM steps between two looks at the clock


class Deadline:
    """SQLite's progress handler: stops the query running when ``seconds`` have passed."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.passed = False

    def __call__(self) -> int:
        self.passed = self.passed or time.monotonic() > self.end
        return int(self.passed)


def _connect(path: Path) -> tuple[sqlite3.Connection, Deadline]:
    if path.stat().st_size == 0:
        raise InputError("empty file", path=path)
    deadline = Deadline(QUERY_SECONDS)
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        connection.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except (sqlite3.Error, UnicodeDecodeError) as err:  # a schema name that is not UTF-8
        raise InputError(f"not an SQLite database ({err})", path=path) from err
    connection.set_progress_handler(deadline, PROGRESS_STEPS)
    return connection, deadline


def _column(alias: str, column: str | None) -> str:
    return f"{alias}.{_q(column)}" if column else "NULL"


def _text(schema: _Schema, alias: str, column: str | None) -> str:
    """SQL for a text field stored as a STRING_IDS id (or as text in older files)."""
    if column is None:
        return "NULL"
    raw = f"{alias}.{_q(column)}"
    if not schema.has_strings():
        return f"CAST({raw} AS TEXT)"
    return f"COALESCE((SELECT s.value FROM STRING_IDS s WHERE s.id = {raw}), CAST({raw} AS TEXT))"


@dataclass(frozen=True)
class _ComputeColumns:
    """The TASK ⋈ COMPUTE_TASK_INFO query's parts: a real column name (or None) per field."""

    source: str  # FROM ... JOIN ... ON ...
    task: dict[str, str | None]  # start_ns ... task_id → TASK column
    info: dict[str, str | None]  # name ... mix_block_num, input_shapes → its column

    @property
    def texts(self) -> tuple[str, ...]:
        """The fields stored as STRING_IDS ids."""
        return _TEXT_FIELDS + ((_SHAPES_FIELD,) if _SHAPES_FIELD in self.info else ())

    @property
    def row_schema(self) -> dict[str, pl.DataType]:
        """The compute rows' columns, in the query's order."""
        return _ROW_SCHEMA | ({_SHAPES_FIELD: pl.String()} if _SHAPES_FIELD in self.info else {})


def _compute_columns(schema: _Schema, path: Path, shapes: bool = False) -> _ComputeColumns:
    for table in ("TASK", "COMPUTE_TASK_INFO"):
        if table.lower() in schema.views:
            raise SchemaError(f"{table} is a view, not a table (not read)", path=path, key=table)
        if not schema.columns(table):
            raise SchemaError(f"no {table} table: not a profiler database", path=path, key=table)
    info = "COMPUTE_TASK_INFO"

    def required(table: str, label: str) -> str:
        column = schema.pick(table, label)
        if column is None:
            raise SchemaError(f"{table} has no {label} column", path=path, key=f"{table}.{label}")
        return column

    start, end, stream, task_key = (
        required("TASK", c) for c in ("startNs", "endNs", "streamId", "globalTaskId")
    )
    info_key = required(info, "globalTaskId")
    # a file without the column has no shapes: the field is left out, as a CSV's would be
    shape_column = schema.pick(info, "inputShapes", "input_shapes") if shapes else None
    return _ComputeColumns(
        source=f"FROM TASK t JOIN COMPUTE_TASK_INFO c ON c.{_q(info_key)} = t.{_q(task_key)}",
        task={
            "start_ns": start,
            "end_ns": end,
            "device": schema.pick("TASK", "deviceId"),
            "stream_id": stream,
            "task_id": schema.pick("TASK", "taskId"),
        },
        info={
            "name": schema.pick(info, "name"),
            "op_type": schema.pick(info, "opType"),
            "accelerator_core": schema.pick(info, "taskType"),
            "block_num": schema.pick(info, "blockNum", "blockDim", "block_num", "block_dim"),
            "mix_block_num": schema.pick(
                info, "mixBlockNum", "mixBlockDim", "mix_block_num", "mix_block_dim"
            ),
            **({_SHAPES_FIELD: shape_column} if shape_column else {}),
        },
    )


def _compute_sql(schema: _Schema, columns: _ComputeColumns) -> str:
    """One row per compute task, text fields looked up in STRING_IDS row by row."""
    fields = [_column("t", c) for c in columns.task.values()]
    fields += [  # in row_schema's order
        _text(schema, "c", c) if f in columns.texts else _column("c", c)
        for f, c in columns.info.items()
    ]
    return f"SELECT {', '.join(fields)} {columns.source}"


def _communication_sql(schema: _Schema) -> str | None:
    table = "COMMUNICATION_OP"
    start, end, name = (schema.pick(table, c) for c in ("startNs", "endNs", "opName"))
    if not (start and end and name):
        return None
    op_type = _text(schema, "o", schema.pick(table, "opType"))
    return (
        f"SELECT o.{_q(start)}, o.{_q(end)}, NULL, NULL, NULL, {_text(schema, 'o', name)}, "
        f"{op_type}, 'COMMUNICATION', 0, NULL FROM COMMUNICATION_OP o"
    )


def _copy_sql(schema: _Schema) -> str | None:
    """Copy tasks: TASK rows (no COMPUTE_TASK_INFO) whose task type is a copy's, the type
    also as the name; None when TASK has no taskType or the file no STRING_IDS."""
    kind = schema.pick("TASK", "taskType")
    task = [schema.pick("TASK", label) for label in _COPY_TASK_FIELDS]
    if kind is None or not schema.has_strings() or None in task:
        return None
    copies = ", ".join(f"'{name}'" for name in sorted(COPY_TASKS))
    value, sid = _q(schema.columns("STRING_IDS")["value"]), _q(schema.string_id)
    type_text = _text(schema, "t", kind)
    fields = [_column("t", c) for c in task] + [type_text, "NULL", type_text, "NULL", "NULL"]
    return (
        f"SELECT {', '.join(fields)} FROM TASK t WHERE t.{_q(kind)} IN (SELECT s.{sid} "
        f"FROM STRING_IDS s WHERE UPPER(REPLACE(TRIM(s.{value}), ' ', '_')) IN ({copies}))"
    )


def _steps_sql(schema: _Schema) -> str | None:
    start, end, step = (schema.pick("STEP_TIME", c) for c in ("startNs", "endNs", "id"))
    if not (start and end and step):
        return None
    return f"SELECT {_q(start)}, {_q(end)}, CAST({_q(step)} AS TEXT) FROM STEP_TIME"


def _single_int(
    connection: sqlite3.Connection, schema: _Schema, table: str, column: str
) -> int | None:
    """The one integer value of ``table.column``; None when absent or not unique."""
    real = schema.pick(table, column)
    if real is None:
        return None
    rows = connection.execute(f"SELECT DISTINCT {_q(real)} FROM {_q(table)}").fetchall()
    values = {row[0] for row in rows if isinstance(row[0], int)}
    return values.pop() if len(values) == 1 else None


def _query(
    connection: sqlite3.Connection, sql: str | None, schema: dict[str, pl.DataType]
) -> pl.DataFrame:
    """The rows of ``sql`` (None: no such table in the file, no rows)."""
    rows = connection.execute(sql).fetchall() if sql else []
    return pl.DataFrame(rows, schema=schema, orient="row")


class _NotPlain(Exception):
    """A value the bulk path does not take as is (the row-by-row query decides it)."""


def _bulk_integers(
    connection: sqlite3.Connection, columns: _ComputeColumns
) -> dict[str, pl.Series]:
    """Every compute-row field as Int64 (text fields as STRING_IDS ids): SQLite joins each column
    into one text (``group_concat``, one pass, NULL as an empty piece), polars splits it (a million
    Python tuples cost seconds). _NotPlain unless every value is an integer or NULL."""
    fields = {f"t.{_q(c)}": f for f, c in columns.task.items() if c is not None}
    fields |= {f"c.{_q(c)}": f for f, c in columns.info.items() if c is not None}
    aggregates = [f"count({e}), group_concat(ifnull({e}, ''), ',')" for e in fields]
    row = connection.execute(
        f"SELECT count(*), {', '.join(aggregates)} {columns.source}"
    ).fetchone()
    total: int = row[0]
    out = {
        f: pl.repeat(None, total, dtype=pl.Int64, eager=True).alias(f) for f in columns.row_schema
    }
    if total == 0:
        return out
    names = list(fields.values())
    texts = pl.DataFrame(
        {f: [row[2 + 2 * i]] for i, f in enumerate(names)}, schema=dict.fromkeys(names, pl.String)
    )
    try:  # columns of unequal piece counts cannot be exploded together
        parsed = (
            texts.lazy()
            .select(pl.all().str.split(","))
            .explode(names)
            .select(pl.all().cast(pl.Int64, strict=False))
            .collect()
        )
    except pl.exceptions.PolarsError as err:
        raise _NotPlain("a value holds a comma") from err
    # nulls: the empty pieces plus whatever is not an integer; they must be exactly the NULLs
    nulls = tuple(total - row[1 + 2 * i] for i in range(len(names)))
    if parsed.height != total or parsed.null_count().row(0) != nulls:
        raise _NotPlain("a value that is not an integer, or holds a comma")
    return out | {f: parsed[f] for f in names}


def _string_values(
    connection: sqlite3.Connection, schema: _Schema, ids: pl.Series
) -> tuple[pl.Series, pl.Series]:
    """STRING_IDS (id, value) for these ids; _NotPlain for an id or value of another type."""
    wanted = ids.drop_nulls().unique().to_list()
    key, value = _q(schema.string_id), _q(schema.columns("STRING_IDS")["value"])
    rows: list[tuple[object, ...]] = []
    for start in range(0, len(wanted), 500):  # well under SQLite's bound-parameter limit
        batch = wanted[start : start + 500]
        marks = ", ".join("?" * len(batch))
        rows += connection.execute(
            f"SELECT {key}, {value} FROM STRING_IDS WHERE {key} IN ({marks})", batch
        ).fetchall()
    try:
        return (
            pl.Series([r[0] for r in rows], dtype=pl.Int64, strict=True),
            pl.Series([r[1] for r in rows], dtype=pl.String, strict=True),
        )
    except TypeError as err:
        raise _NotPlain("STRING_IDS") from err


def _bulk_compute(
    connection: sqlite3.Connection, schema: _Schema, columns: _ComputeColumns
) -> pl.DataFrame | None:
    """The compute rows without a Python object per value; None unless the polars lookup is
    exactly :func:`_compute_sql`'s: integer affinity on both sides, ``id`` the sole key."""
    text_columns = [columns.info[f] for f in columns.texts]
    if not (
        schema.has_strings()
        and schema.sole_key("STRING_IDS", schema.string_id)
        and schema.integer_affinity("STRING_IDS", schema.string_id)
        and all(c is None or schema.integer_affinity("COMPUTE_TASK_INFO", c) for c in text_columns)
    ):
        return None
    try:
        values = _bulk_integers(connection, columns)
        ids, texts = _string_values(
            connection, schema, pl.concat([values[f] for f in columns.texts])
        )
    except (_NotPlain, sqlite3.Error):  # e.g. a column text over SQLite's length limit
        return None
    for field in columns.texts:
        raw = values[field]
        found = raw.replace_strict(ids, texts, default=None, return_dtype=pl.String)
        if found.null_count() > raw.null_count():  # COALESCE(value, CAST(id AS TEXT))
            found = found.fill_null(raw.cast(pl.String))
        values[field] = found
    return pl.DataFrame([values[f].cast(t).alias(f) for f, t in columns.row_schema.items()])


def read_db(path: Path, *, shapes: bool = False) -> DbKernels:
    """Kernels and communication ops of one profiler database (``shapes``: with the
    kernels' Input Shapes, where the file has them)."""
    connection, deadline = _connect(path)
    try:
        schema = _Schema(connection)
        columns = _compute_columns(schema, path, shapes)
        compute = _bulk_compute(connection, schema, columns)
        if compute is None:
            compute = _query(connection, _compute_sql(schema, columns), columns.row_schema)
        comm = _query(connection, _communication_sql(schema), _ROW_SCHEMA)
        copies = _query(connection, _copy_sql(schema), _ROW_SCHEMA)
        steps = _query(connection, _steps_sql(schema), _STEP_SCHEMA)
        rank = _single_int(connection, schema, "RANK_DEVICE_MAP", "rankId")
        session_end = _single_int(connection, schema, "SESSION_TIME_INFO", "endTimeNs")
    except sqlite3.Error as err:
        if deadline.passed:
            raise InputError(
                f"reading the profiler database took more than {QUERY_SECONDS:.0f} s: "
                "not an export the profiler wrote",
                path=path,
            ) from err
        if isinstance(err, sqlite3.OperationalError) and str(err) == "interrupted":
            raise KeyboardInterrupt from None  # Ctrl-C inside the progress handler
        raise InputError(f"unreadable profiler database ({err})", path=path) from err
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError) as err:
        raise SchemaError(f"unexpected value in the profiler database ({err})", path=path) from err
    finally:
        connection.close()
    if _SHAPES_FIELD in compute.columns:
        compute = compute.with_columns(input_shapes_text(_SHAPES_FIELD))
    devices = compute["device"].drop_nulls().unique()
    if devices.len() == 1:  # comm ops carry no device; a one-device db names it
        comm = comm.with_columns(pl.lit(devices[0], pl.Int64).alias("device"))
    # input_shapes on the kernels only, is_copy on the copies only
    frame = (
        pl.concat([compute, comm, copies.with_columns(is_copy=True)], how="diagonal")
        .with_columns(
            pl.col("is_copy").fill_null(False),
            (pl.col("end_ns") - pl.col("start_ns")).alias("duration_ns"),
        )
        .drop("end_ns")
    )
    steps = steps.with_columns(pl.col("step").str.strip_chars().cast(pl.Int64, strict=False))
    frame = with_steps(frame, steps.drop_nulls())
    return DbKernels(path, finish_frame(frame), rank_value(rank), session_end)
