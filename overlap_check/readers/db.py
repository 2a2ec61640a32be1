"""ascend_pytorch_profiler*.db (torch_npu) / msprof_*.db (msprof) → kernel rows with streams.

SQLite (FORMATS.md §1.5). Kernels are ``TASK`` rows joined to
``COMPUTE_TASK_INFO`` on ``globalTaskId``: the join itself leaves out the
non-kernel tasks (event record/wait, memcpy, notify ...), and it works at
Level0, where ``TASK.streamId`` is filled too. Text fields are ids into
``STRING_IDS``. Times are integer ns already. Block columns are ``blockNum`` /
``blockDim`` / ``block_dim`` (and the mix ones alike) depending on the version.
Communication ops (``COMMUNICATION_OP``) become communication rows; steps come
from ``STEP_TIME``. Unknown extra tables and columns are ignored.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from overlap_check.errors import InputError, SchemaError
from overlap_check.readers.kernel_csv import finish_frame
from overlap_check.readers.steps import with_steps


@dataclass(frozen=True)
class DbKernels:
    path: Path
    kernels: pl.DataFrame  # kernel-table columns, unconformed
    rank: int | None  # RANK_DEVICE_MAP, when it names one rank
    session_end_ns: int | None  # SESSION_TIME_INFO.endTimeNs


_ROW_SCHEMA: dict[str, pl.DataType] = {
    "start_ns": pl.Int64(),
    "end_ns": pl.Int64(),
    "device": pl.Int64(),
    "stream_id": pl.Int64(),
    "task_id": pl.Int64(),
    "name": pl.String(),
    "op_type": pl.String(),
    "accelerator_core": pl.String(),
    "block_num": pl.Int64(),
    "mix_block_num": pl.Int64(),
}


def _q(identifier: str) -> str:
    """A quoted SQL identifier (names come from the file's own schema)."""
    return '"' + identifier.replace('"', '""') + '"'


class _Schema:
    """Lower-case column names of the tables we read, from the file itself."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self._cache: dict[str, dict[str, str]] = {}

    def columns(self, table: str) -> dict[str, str]:
        if table not in self._cache:
            rows = self._connection.execute(f"PRAGMA table_info({_q(table)})").fetchall()
            self._cache[table] = {str(r[1]).lower(): str(r[1]) for r in rows}
        return self._cache[table]

    def pick(self, table: str, *candidates: str) -> str | None:
        columns = self.columns(table)
        for candidate in candidates:
            if candidate.lower() in columns:
                return columns[candidate.lower()]
        return None

    def has_strings(self) -> bool:
        return {"id", "value"} <= set(self.columns("STRING_IDS"))


def _connect(path: Path) -> sqlite3.Connection:
    if path.stat().st_size == 0:
        raise InputError("empty file", path=path)
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        connection.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as err:
        raise InputError(f"not an SQLite database ({err})", path=path) from err
    return connection


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


def _compute_sql(schema: _Schema, path: Path) -> str:
    for table in ("TASK", "COMPUTE_TASK_INFO"):
        if not schema.columns(table):
            raise SchemaError(f"no {table} table: not a profiler database", path=path, key=table)
    task: dict[str, str] = {}
    for label in ("startNs", "endNs", "streamId", "globalTaskId"):
        column = schema.pick("TASK", label)
        if column is None:
            raise SchemaError(f"TASK has no {label} column", path=path, key=f"TASK.{label}")
        task[label] = column
    info_key = schema.pick("COMPUTE_TASK_INFO", "globalTaskId")
    if info_key is None:
        raise SchemaError(
            "COMPUTE_TASK_INFO has no globalTaskId column",
            path=path,
            key="COMPUTE_TASK_INFO.globalTaskId",
        )
    info = "COMPUTE_TASK_INFO"
    fields = [
        _column("t", task["startNs"]),
        _column("t", task["endNs"]),
        _column("t", schema.pick("TASK", "deviceId")),
        _column("t", task["streamId"]),
        _column("t", schema.pick("TASK", "taskId")),
        _text(schema, "c", schema.pick(info, "name")),
        _text(schema, "c", schema.pick(info, "opType")),
        _text(schema, "c", schema.pick(info, "taskType")),
        _column("c", schema.pick(info, "blockNum", "blockDim", "block_num", "block_dim")),
        _column(
            "c", schema.pick(info, "mixBlockNum", "mixBlockDim", "mix_block_num", "mix_block_dim")
        ),
    ]
    return (
        f"SELECT {', '.join(fields)} FROM TASK t JOIN COMPUTE_TASK_INFO c "
        f"ON c.{_q(info_key)} = t.{_q(task['globalTaskId'])}"
    )


def _communication_sql(schema: _Schema) -> str | None:
    table = "COMMUNICATION_OP"
    start, end = schema.pick(table, "startNs"), schema.pick(table, "endNs")
    name = schema.pick(table, "opName")
    if not (start and end and name):
        return None
    fields = [
        _column("o", start),
        _column("o", end),
        "NULL",
        "NULL",
        "NULL",
        _text(schema, "o", name),
        _text(schema, "o", schema.pick(table, "opType")),
        "'COMMUNICATION'",
        "0",
        "NULL",
    ]
    return f"SELECT {', '.join(fields)} FROM COMMUNICATION_OP o"


def _steps_sql(schema: _Schema) -> str | None:
    start, end = schema.pick("STEP_TIME", "startNs"), schema.pick("STEP_TIME", "endNs")
    step = schema.pick("STEP_TIME", "id")
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
    connection: sqlite3.Connection, sql: str, schema: dict[str, pl.DataType]
) -> pl.DataFrame:
    return pl.DataFrame(connection.execute(sql).fetchall(), schema=schema, orient="row")


def read_db(path: Path) -> DbKernels:
    """Kernels and communication ops of one profiler database."""
    connection = _connect(path)
    try:
        schema = _Schema(connection)
        compute = _query(connection, _compute_sql(schema, path), _ROW_SCHEMA)
        comm_sql = _communication_sql(schema)
        comm = (
            _query(connection, comm_sql, _ROW_SCHEMA)
            if comm_sql
            else pl.DataFrame(schema=_ROW_SCHEMA)
        )
        steps_sql = _steps_sql(schema)
        step_schema = {"step_start": pl.Int64(), "step_end": pl.Int64(), "step": pl.String()}
        steps = (
            _query(connection, steps_sql, step_schema)
            if steps_sql
            else pl.DataFrame(schema=step_schema)
        )
        rank = _single_int(connection, schema, "RANK_DEVICE_MAP", "rankId")
        session_end = _single_int(connection, schema, "SESSION_TIME_INFO", "endTimeNs")
    except sqlite3.Error as err:
        raise InputError(f"unreadable profiler database ({err})", path=path) from err
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError) as err:
        raise SchemaError(f"unexpected value in the profiler database ({err})", path=path) from err
    finally:
        connection.close()
    devices = compute["device"].drop_nulls().unique()
    if devices.len() == 1:  # comm ops carry no device; a one-device db names it
        comm = comm.with_columns(pl.lit(devices[0], pl.Int64).alias("device"))
    frame = (
        pl.concat([compute, comm])
        .drop_nulls(["start_ns", "end_ns"])
        .with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("duration_ns"))
        .drop("end_ns")
    )
    steps = steps.with_columns(pl.col("step").str.strip_chars().cast(pl.Int64, strict=False))
    frame = with_steps(frame, steps.drop_nulls())
    return DbKernels(
        path=path,
        kernels=finish_frame(frame),
        rank=rank if rank is None or rank >= 0 else None,
        session_end_ns=session_end,
    )
