"""ascend_pytorch_profiler_{rank}.db: the SQLite export (docs/formats.md).

Tables and column order copy the real torch_npu Level0 db export. TASK holds
every device task (kernels, event record/wait, memcpy, notify ...) with its
stream even at Level0; COMPUTE_TASK_INFO holds only kernels (join on
globalTaskId); every text field is an id into STRING_IDS. The 2026 variant
names the block columns ``blockNum``/``mixBlockNum`` and adds ``opState``,
``hf32Eligible``, as the current msprof documentation does. ``inputShapes`` holds the
shapes kernel_details.csv shows (a kernel's own ``input_shapes``, else its type's)
without the CSV's quotes; at Level0 it is ``N/A``, as in the real export.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from synth.kernel_csv import input_shapes_expr
from synth.model import DB_TASK_TYPE, task_spelling
from synth.rows import Frames

NONE_ID = 4294967295
_GROUP = "90.91.105.46%enp189s0f0_60000_0_1736407029972691"

_SCHEMA_COMMON = [
    "CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER,endTimeNs INTEGER)",
    "CREATE TABLE HOST_INFO (hostUid TEXT,hostName TEXT)",
    "CREATE TABLE NPU_INFO (id INTEGER,name TEXT)",
    "CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY,name TEXT)",
    "CREATE TABLE TASK (startNs INTEGER,endNs INTEGER,deviceId INTEGER,connectionId INTEGER,"
    "globalTaskId INTEGER,globalPid INTEGER,taskType INTEGER,contextId INTEGER,streamId INTEGER,"
    "taskId INTEGER,modelId INTEGER)",
    "CREATE TABLE CANN_API (startNs INTEGER,endNs INTEGER,type INTEGER,globalTid INTEGER,"
    "connectionId INTEGER PRIMARY KEY,name INTEGER)",
    "CREATE INDEX TaskIndex ON TASK (startNs,globalTaskId)",
    "CREATE TABLE META_DATA (name TEXT,value TEXT)",
    "CREATE TABLE COMMUNICATION_OP (opName INTEGER,startNs INTEGER,endNs INTEGER,"
    "connectionId INTEGER,groupName INTEGER,opId INTEGER PRIMARY KEY,relay INTEGER,retry INTEGER,"
    "dataType INTEGER,algType INTEGER,count NUMERIC,opType INTEGER)",
    "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY,value TEXT)",
    "CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER)",
    "CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER)",
]
_COMPUTE_2025 = (
    "CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,"
    "blockDim INTEGER,mixBlockDim INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,"
    "inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,outputDataTypes INTEGER,"
    "outputShapes INTEGER,attrInfo INTEGER)"
)
_COMPUTE_2026 = (
    "CREATE TABLE COMPUTE_TASK_INFO (name INTEGER,globalTaskId INTEGER PRIMARY KEY,"
    "blockNum INTEGER,mixBlockNum INTEGER,taskType INTEGER,opType INTEGER,inputFormats INTEGER,"
    "inputDataTypes INTEGER,inputShapes INTEGER,outputFormats INTEGER,outputDataTypes INTEGER,"
    "outputShapes INTEGER,attrInfo INTEGER,opState INTEGER,hf32Eligible INTEGER)"
)
_API_TYPES = [
    (5000, "runtime"),
    (5500, "hccl"),
    (10000, "node"),
    (15000, "model"),
    (20000, "acl"),
    (50001, "op"),
    (50002, "queue"),
    (50003, "trace"),
    (50004, "mstx"),
]


@dataclass(frozen=True)
class DbSpec:
    version: str
    level0: bool
    rank: int
    device: int
    pid: int
    steps: tuple[tuple[int, int, int], ...]
    capture_start_ns: int
    capture_end_ns: int


class StringIds:
    """STRING_IDS: ids in order of first use."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def __call__(self, value: str) -> int:
        found = self.ids.get(value)
        if found is None:
            found = self.ids[value] = len(self.ids)
        return found

    def rows(self) -> Iterable[tuple[int, str]]:
        return ((i, v) for v, i in self.ids.items())


def _task_rows(
    frames: Frames, spec: DbSpec, sid: StringIds
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """TASK rows (every device task) and COMPUTE_TASK_INFO rows (kernels only)."""
    k = frames.kernels.filter(~pl.col("is_comm"))
    timeline = pl.concat(
        [
            k.select(
                "start_ns",
                "dur_ns",
                "conn_id",
                "stream_id",
                "task_id",
                pl.col("core").alias("what"),
                pl.lit(True).alias("is_kernel"),
                "name",
                "op_type",
                "block",
                "mix",
                # the shapes text as stored in STRING_IDS: the CSV's without its quotes
                input_shapes_expr().str.strip_chars('"').alias("shapes"),
            ),
            frames.tasks.select(
                "start_ns",
                "dur_ns",
                "conn_id",
                "stream_id",
                "task_id",
                pl.col("kind").alias("what"),
                pl.lit(False).alias("is_kernel"),
                pl.lit(None, pl.String).alias("name"),
                pl.lit(None, pl.String).alias("op_type"),
                pl.lit(0, pl.Int64).alias("block"),
                pl.lit(0, pl.Int64).alias("mix"),
                pl.lit(None, pl.String).alias("shapes"),
            ),
        ]
    )
    comm_stream = _comm_stream(frames)
    if comm_stream is not None:
        # a communication op also has a TASK row (typed AI_CORE, no COMPUTE_TASK_INFO) on the
        # stream that carries its notify/SDMA tasks, as in the real export
        comm = frames.kernels.filter(pl.col("is_comm"))
        timeline = pl.concat(
            [
                timeline,
                comm.select(
                    "start_ns",
                    "dur_ns",
                    "conn_id",
                    pl.lit(comm_stream, pl.Int64).alias("stream_id"),
                    pl.lit(807, pl.Int64).alias("task_id"),
                    pl.lit("AI_CORE").alias("what"),
                    pl.lit(False).alias("is_kernel"),
                    pl.lit(None, pl.String).alias("name"),
                    pl.lit(None, pl.String).alias("op_type"),
                    pl.lit(0, pl.Int64).alias("block"),
                    pl.lit(0, pl.Int64).alias("mix"),
                    pl.lit(None, pl.String).alias("shapes"),
                ),
            ]
        )
    timeline = timeline.sort(["start_ns", "conn_id"]).with_row_index("global_id")
    c = pl.col
    kinds = timeline.filter(~c("is_kernel"))["what"].unique().to_list()
    cores = timeline.filter(c("is_kernel"))["what"].unique().to_list()
    db_types = {kind: task_spelling(kind).db_type for kind in kinds}
    kernel_types = {core: DB_TASK_TYPE.get(core, core) for core in cores}
    timeline = timeline.with_columns(
        pl.when(c("is_kernel"))
        .then(c("what").replace_strict(kernel_types, default=c("what"), return_dtype=pl.String))
        .otherwise(c("what").replace_strict(db_types, default=c("what"), return_dtype=pl.String))
        .alias("db_type")
    )
    # STRING_IDS in order of first use, row by row, then map every text column to its id
    na, shapes = "N/A", '"8192,7168"'  # shapes: every kernel's outputShapes (not read)
    kernels = timeline.filter(c("is_kernel"))
    for series in (timeline["db_type"], kernels["name"], kernels["what"], kernels["op_type"]):
        for value in series.unique(maintain_order=True).to_list():
            sid(value)
    for value in (na, "ND", "DT_BF16", shapes, "dynamic", "NO"):
        sid(value)
    if not spec.level0:  # Level0 writes N/A for every shape
        for value in kernels["shapes"].unique(maintain_order=True).to_list():
            sid(value)

    def ids(column: str) -> pl.Expr:
        return c(column).replace_strict(sid.ids, return_dtype=pl.Int64)

    task_columns = [
        c("start_ns"),
        c("start_ns") + c("dur_ns"),
        pl.lit(spec.device, pl.Int64),
        c("conn_id"),
        c("global_id").cast(pl.Int64),
        pl.lit(spec.pid, pl.Int64),
        ids("db_type"),
        pl.when(c("is_kernel") & c("what").str.starts_with("MIX_"))
        .then(0)
        .otherwise(NONE_ID)
        .cast(pl.Int64),
        c("stream_id"),
        c("task_id"),
        pl.lit(NONE_ID, pl.Int64),
    ]
    tasks = timeline.select(expr.alias(f"t{i}") for i, expr in enumerate(task_columns)).rows()
    text = {value: pl.lit(sid(value), pl.Int64) for value in (na, "ND", "DT_BF16", shapes)}
    if spec.level0:
        detail = [pl.lit(0, pl.Int64), pl.lit(0, pl.Int64), text[na], text[na]]
        detail += [text[na]] * 7
    else:
        detail = [c("block"), c("mix"), ids("what"), ids("op_type"), text["ND"], text["DT_BF16"]]
        detail += [ids("shapes"), text["ND"], text["DT_BF16"], text[shapes], text[na]]
    if spec.version == "2026":
        detail += (
            [text[na], text[na]] if spec.level0 else [pl.lit(sid("dynamic")), pl.lit(sid("NO"))]
        )
    compute = kernels.select(
        ids("name").alias("n"),
        c("global_id").cast(pl.Int64).alias("g"),
        *[expr.alias(f"d{i}") for i, expr in enumerate(detail)],
    ).rows()
    return tasks, compute


def _comm_stream(frames: Frames) -> int | None:
    notify = frames.tasks.filter(pl.col("kind").is_in(["Notify Wait", "SDMA", "Write Value"]))
    return None if notify.height == 0 else int(notify["stream_id"][0])


def _comm_rows(frames: Frames, sid: StringIds) -> list[tuple[int, ...]]:
    comm = frames.kernels.filter(pl.col("is_comm"))
    return [
        (
            sid(r["name"]),
            r["start_ns"],
            r["start_ns"] + r["dur_ns"],
            r["conn_id"],
            sid(_GROUP),
            op_id,
            0,
            0,
            4,
            sid("MESH-RING"),
            4097000,
            sid("N/A"),
        )
        for op_id, r in enumerate(comm.iter_rows(named=True), start=1)
    ]


def write_db(path: Path, frames: Frames, spec: DbSpec) -> None:
    path.unlink(missing_ok=True)
    sid = StringIds()
    tasks, compute = _task_rows(frames, spec, sid)
    comm = _comm_rows(frames, sid)
    # host-side launches, as the export keeps them (times before the device start)
    kernels = frames.kernels.filter(~pl.col("is_comm"))
    launch = sid("launch")
    c = pl.col
    launches = [
        c("start_ns") - 18_620,
        c("start_ns") - 6_310,
        pl.lit(10000, pl.Int64),
        pl.lit((spec.pid << 32) | (spec.pid + 3198), pl.Int64),
        c("conn_id"),
        pl.lit(launch, pl.Int64),
    ]
    cann = kernels.select(expr.alias(f"c{i}") for i, expr in enumerate(launches)).rows()
    schema = [*_SCHEMA_COMMON, _COMPUTE_2026 if spec.version == "2026" else _COMPUTE_2025]
    con = sqlite3.connect(path)
    try:
        for statement in schema:
            con.execute(statement)
        con.execute(
            "INSERT INTO SESSION_TIME_INFO VALUES (?,?)",
            (spec.capture_start_ns, spec.capture_end_ns),
        )
        con.execute("INSERT INTO HOST_INFO VALUES (?,?)", ("3538958389648580163", "localhost"))
        con.execute("INSERT INTO NPU_INFO VALUES (?,?)", (spec.device, "Ascend910B"))
        con.executemany("INSERT INTO ENUM_API_TYPE VALUES (?,?)", _API_TYPES)
        con.executemany("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?)", tasks)
        marks = ",".join("?" * (15 if spec.version == "2026" else 13))
        con.executemany(f"INSERT INTO COMPUTE_TASK_INFO VALUES ({marks})", compute)
        con.executemany("INSERT INTO CANN_API VALUES (?,?,?,?,?,?)", cann)
        con.executemany("INSERT INTO COMMUNICATION_OP VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", comm)
        meta = [
            ("SCHEMA_VERSION_MICRO", "0"),
            ("SCHEMA_VERSION_MINOR", "0"),
            ("SCHEMA_VERSION_MAJOR", "1"),
            ("SCHEMA_VERSION", "1.0.0"),
            ("ENV_VARIABLES", json.dumps({"ASCEND_GLOBAL_LOG_LEVEL": ""})),
        ]
        con.executemany("INSERT INTO META_DATA VALUES (?,?)", meta)
        con.execute("INSERT INTO RANK_DEVICE_MAP VALUES (?,?)", (spec.rank, spec.device))
        con.executemany("INSERT INTO STEP_TIME VALUES (?,?,?)", list(spec.steps))
        con.executemany("INSERT INTO STRING_IDS VALUES (?,?)", list(sid.rows()))
        con.commit()
    finally:
        con.close()
