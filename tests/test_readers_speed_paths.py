"""The fast paths of the trace and db readers give the results of simple references.

trace_view.json: msgspec structs and column-wise row building
(``readers.trace_decode``, ``readers.trace``) against ``json.loads`` dicts and
one loop per event, the way the reader worked before (:func:`reference_trace`).
Level0 streams: ``readers.streams.attach_streams`` (a binary search for starts
held by one task) against two plain joins (:func:`reference_attach`).
Profiler db: the bulk ``group_concat`` path of ``readers.db`` against its
row-by-row query (the fallback, with a STRING_IDS subquery per row).

Equality of results only; the speed itself is measured by the benchmarks.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from overlap_check.model.errors import InputError, SchemaError
from overlap_check.readers import db as db_reader
from overlap_check.readers import trace as trace_reader
from overlap_check.readers import trace_decode
from overlap_check.readers.kernel_csv import finish_frame
from overlap_check.readers.numbers import ts_text, us_float_to_ns, us_text_to_ns
from overlap_check.readers.steps import with_steps
from overlap_check.readers.streams import attach_streams
from overlap_check.readers.tasktypes import NOTIFY_TASKS, is_copy_task, is_kernel_task

# ---------------------------------------------------------------------------
# trace_view.json


def reference_trace(path: Path) -> tuple[pl.DataFrame, tuple[int, ...], int]:
    """(kernels, devices, dropped tasks) by plain loops over ``json.loads`` dicts."""
    parsed = json.loads(path.read_bytes())
    if isinstance(parsed, dict) and isinstance(parsed.get("traceEvents"), list):
        parsed = parsed["traceEvents"]
    events = [e for e in parsed if isinstance(e, dict)]
    names: dict[Any, str] = {}
    labels: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for e in events:
        args = e.get("args")
        if e.get("ph") != "M" or not isinstance(args, dict):
            continue
        if e.get("name") == "process_name":
            names[e.get("pid")] = str(args.get("name", ""))
        elif e.get("name") == "process_labels":
            labels[e.get("pid")] = str(args.get("labels", ""))
        elif e.get("name") == "thread_name":
            threads[(e.get("pid"), e.get("tid"))] = str(args.get("name", ""))
    hardware: dict[Any, int | None] = {}
    for pid, name in names.items():
        if name.strip() == "Ascend Hardware":
            label = re.match(r"^\s*NPU\s+(\d+)\s*$", labels.get(pid, ""))
            hardware[pid] = int(label.group(1)) if label else None
    if not hardware:
        raise SchemaError("no hardware process", path=path)
    communication = {p for p, n in names.items() if n.strip() in ("HCCL", "Communication")}
    streams: dict[tuple[Any, Any], int] = {}
    comm_threads = set()
    for key, name in threads.items():
        stream = re.match(r"^\s*Stream\s+(\d+)\s*$", name)
        if key[0] in hardware:
            if stream:
                streams[key] = int(stream.group(1))
        elif key[0] in communication and name.strip().endswith("Communication"):
            comm_threads.add(key)
    rows: dict[str, list[Any]] = {
        k: [] for k in ("stream_id", "device", "name", "core", "task", "ts", "dur", "comm")
    }
    steps: dict[str, list[Any]] = {"ts": [], "dur": [], "step": []}
    planes: list[tuple[int, str]] = []  # (stream id, ts) of the HCCL Plane threads' tasks
    for e in events:
        if e.get("ph") != "X":
            continue
        dur, args, key = e.get("dur"), e.get("args"), (e.get("pid"), e.get("tid"))
        if e.get("pid") in communication and key not in comm_threads and isinstance(args, dict):
            plane_stream = args.get("stream id")
            if isinstance(plane_stream, int) and -(2**63) <= plane_stream < 2**63:
                planes.append((int(plane_stream), ts_text(e.get("ts"))))
        step = re.match(r"^ProfilerStep#(\d+)$", str(e.get("name", "")))
        # steps are host ranges: a device task is never one
        if step and isinstance(dur, (int, float)) and e.get("pid") not in hardware:
            steps["ts"].append(ts_text(e.get("ts")))
            steps["dur"].append(float(dur))
            steps["step"].append(int(step.group(1)))
        if not isinstance(dur, (int, float)) or isinstance(dur, bool):
            dur = None  # a kernel without a duration stays: readers.capture counts it
        arg = args if isinstance(args, dict) else {}
        if e.get("pid") in hardware:
            stream = streams.get(key)
            for name in ("Physic Stream Id", "Stream Id", "stream id"):
                value = arg.get(name)
                if stream is None and isinstance(value, int) and not isinstance(value, bool):
                    stream = value
            task = arg.get("Task Id")
            rows["stream_id"].append(stream)
            rows["device"].append(hardware[e.get("pid")])
            rows["core"].append(str(arg["Task Type"]) if "Task Type" in arg else None)
            rows["task"].append(task if isinstance(task, int) else None)
            rows["comm"].append(False)
        elif key in comm_threads:
            rows["stream_id"].append(None)
            rows["device"].append(None)
            rows["core"].append("COMMUNICATION")
            rows["task"].append(None)
            rows["comm"].append(True)
        else:
            continue
        rows["name"].append(str(e.get("name", "")))
        rows["ts"].append(ts_text(e.get("ts")))
        rows["dur"].append(None if dur is None else int(us_float_to_ns([float(dur)])[0]))
    frame = pl.DataFrame(
        {
            "stream_id": pl.Series(rows["stream_id"], dtype=pl.Int64),
            "device": pl.Series(rows["device"], dtype=pl.Int32),
            "name": pl.Series(rows["name"], dtype=pl.String),
            "accelerator_core": pl.Series(rows["core"], dtype=pl.String),
            "task_id": pl.Series(rows["task"], dtype=pl.Int64),
            "ts": pl.Series(rows["ts"], dtype=pl.String),
            "duration_ns": pl.Series(rows["dur"], dtype=pl.Int64),
            "comm": pl.Series(rows["comm"], dtype=pl.Boolean),
        }
    ).with_columns(us_text_to_ns(pl.col("ts")).alias("start_ns"))
    plane_starts = (
        pl.DataFrame({"ts": pl.Series([t for _, t in planes], dtype=pl.String)})
        .select(us_text_to_ns(pl.col("ts")))["ts"]
        .to_list()
    )
    keys = {(s, t) for (s, _), t in zip(planes, plane_starts, strict=True) if t is not None}
    starts, streams_of = frame["start_ns"].to_list(), frame["stream_id"].to_list()
    steps_of_collective = [(s, t) in keys for s, t in zip(streams_of, starts, strict=True)]
    notified = {
        s
        for s, n in zip(streams_of, frame["name"].to_list(), strict=True)
        if n.strip().upper().replace(" ", "_") in NOTIFY_TASKS and s is not None
    }
    own = ~pl.col("comm") & ~pl.Series(steps_of_collective, dtype=pl.Boolean)
    on_notified = pl.Series([s in notified for s in streams_of], dtype=pl.Boolean)
    copy = own & is_copy_task(pl.col("accelerator_core"), pl.col("name")) & ~on_notified
    frame = frame.with_columns(copy.alias("is_copy"))  # copy tasks stay, as copy rows
    kernel = (
        pl.col("comm")
        | (own & is_kernel_task(pl.col("accelerator_core"), pl.col("name")))
        | pl.col("is_copy")
    )
    kept = frame.filter(kernel)  # a kernel on no stream stays: readers.capture notes it
    step_frame = (
        pl.DataFrame(
            {
                "ts": pl.Series(steps["ts"], dtype=pl.String),
                "dur": pl.Series(us_float_to_ns(steps["dur"]), dtype=pl.Int64),
                "step": pl.Series(steps["step"], dtype=pl.Int64),
            }
        )
        .select(
            us_text_to_ns(pl.col("ts")).alias("step_start"),
            (us_text_to_ns(pl.col("ts")) + pl.col("dur")).alias("step_end"),
            "step",
        )
        .drop_nulls()
        .sort("step_start")
    )
    kernels = finish_frame(with_steps(kept, step_frame).drop("ts", "comm"))
    devices = tuple(sorted({d for d in hardware.values() if d is not None}))
    return kernels, devices, frame.height - kept.height


def assert_trace_like_reference(path: Path) -> None:
    try:
        expected = reference_trace(path)
    except SchemaError:
        with pytest.raises(SchemaError):
            trace_reader.read_trace(path)
        return
    got = trace_reader.read_trace(path)
    assert_frame_equal(got.kernels, expected[0])
    assert (got.devices, got.dropped_tasks) == expected[1:]


T0 = 1_736_408_883_704_643  # µs epoch of the real samples

# pids: two hardware processes (one as text), a comm process, the host
HW, HW_TEXT, COMM, HOST = 3_170_820_512, "800", 3_170_820_320, 3_096_504
METADATA = [
    {"ph": "M", "name": "process_name", "pid": HW, "tid": 0, "args": {"name": "Ascend Hardware"}},
    {"ph": "M", "name": "process_labels", "pid": HW, "tid": 0, "args": {"labels": "NPU 3"}},
    {"name": "process_name", "pid": HW_TEXT, "args": {"name": " Ascend Hardware "}, "ph": "M"},
    {"name": "process_labels", "pid": HW_TEXT, "args": {"labels": "NPU"}, "ph": "M"},
    {"ph": "M", "name": "process_name", "pid": COMM, "tid": 0, "args": {"name": "HCCL"}},
    {"ph": "M", "name": "process_name", "pid": HOST, "tid": 0, "args": {"name": "Python"}},
    {"ph": "M", "name": "thread_name", "pid": HW, "tid": 2, "args": {"name": "Stream 2"}},
    {"ph": "M", "name": "thread_name", "pid": HW, "tid": 3, "args": {"name": "Stream 3"}},
    {"ph": "M", "name": "thread_name", "pid": HW_TEXT, "tid": "7", "args": {"name": "Stream 7"}},
    {
        "ph": "M",
        "name": "thread_name",
        "pid": COMM,
        "tid": 9,
        "args": {"name": "Group 0 Communication"},
    },
    {"ph": "M", "name": "thread_name", "pid": COMM, "tid": 10, "args": {"name": "Plane 0"}},
]

MISSING = object()  # a key left out of the event
texts = st.sampled_from(
    ["aclnnAdd_AddAiCore_Add", "MEMCPY_ASYNC", "EVENT_WAIT_SQE", "N/A", "", "Notify Wait"]
)
kernel_names = st.sampled_from(["aclnnMatmul_MatMulV3Common_MatMulV3", "Cast", "hcom_x__1"])
task_types = st.one_of(
    st.sampled_from(["AI_CORE", "AI_VECTOR_CORE", "EVENT_RECORD_SQE", "STARS_COMMON", "Other"]),
    st.sampled_from([None, MISSING, 4, "SDMA"]),
)
ints = st.one_of(st.integers(0, 70_000), st.sampled_from([None, MISSING, True, "5", 4294967295]))
stream_args = st.one_of(st.integers(0, 40), st.sampled_from([None, MISSING, False, "2"]))
exact_text = st.integers(0, 10**9).map(lambda ns: f"{T0 + ns // 1000}.{ns % 1000:03d}")
timestamps = st.one_of(  # mostly the real form, so that most events become rows
    *[exact_text] * 6,
    st.integers(0, 10**6).map(lambda ns: f"{T0}.{ns:06d}"[:21]),  # 4+ decimals
    st.integers(0, 10**6).map(lambda us: T0 + us),  # a JSON number
    st.floats(0, 1e6, allow_nan=False),
    st.sampled_from([None, MISSING, " 1736408883704643.5\t", "x"]),
)
durations = st.one_of(
    *[st.floats(0, 1e4, allow_nan=False)] * 4,
    st.integers(0, 10_000),
    st.sampled_from([None, MISSING, True, "3.5"]),
)


@st.composite
def args_objects(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["dict", "dict", "dict", "missing", "null"]))
    if kind != "dict":
        return MISSING if kind == "missing" else None
    fields = {
        "Model Id": 4294967295,
        "Task Type": draw(task_types),
        "Physic Stream Id": draw(stream_args),
        "Stream Id": draw(stream_args),
        "stream id": draw(stream_args),
        "Task Id": draw(ints),
        "connection_id": draw(ints),
        "name": draw(texts),  # args.name of an X event: ignored
    }
    return {k: v for k, v in fields.items() if v is not MISSING}


@st.composite
def complete_events(draw: st.DrawFn) -> dict[str, Any]:
    step = draw(st.integers(1, 3))
    fields = {
        "ph": "X",
        "name": draw(
            st.one_of(kernel_names, kernel_names, texts, st.just(f"ProfilerStep#{step}"), st.none())
        ),
        "pid": draw(st.sampled_from([HW, HW, HW, HW_TEXT, COMM, HOST, 12])),
        "tid": draw(st.sampled_from([2, 3, 2, 3, "7", 7, 9, 10, 11, MISSING])),
        "ts": draw(timestamps),
        "dur": draw(durations),
        "cat": "cpu_op",
        "args": draw(args_objects()),
    }
    return {k: v for k, v in fields.items() if v is not MISSING}


other_events = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["s", "f", "C", "i", "b", "e"]),
        "name": texts,
        "pid": st.sampled_from([HW, HOST]),
        "tid": st.integers(0, 5),
        "ts": timestamps.filter(lambda t: t is not MISSING),
        "id": st.integers(0, 10**19),  # a flow id beyond int64, as torch_to_npu writes
    }
)


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    kinds = st.one_of(complete_events(), complete_events(), complete_events(), other_events)
    events = draw(st.lists(kinds, min_size=20, max_size=60))
    # each metadata event mostly present, anywhere in the array; keys in any order
    for meta in METADATA:
        if draw(st.integers(0, 9)):
            events.insert(draw(st.integers(0, len(events))), meta)
    return [dict(draw(st.permutations(list(e.items())))) for e in events]


def write_trace(path: Path, events: list[Any], *, compact: bool = False) -> Path:
    separators = (",", ":") if compact else (", ", ": ")
    path.write_text(json.dumps(events, separators=separators), encoding="utf-8")
    return path


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=traces(), compact=st.booleans())
def test_trace_reader_matches_the_reference(
    tmp_path_factory: pytest.TempPathFactory, events: list[dict[str, Any]], compact: bool
) -> None:
    path = write_trace(tmp_path_factory.mktemp("t") / "trace_view.json", events, compact=compact)
    assert trace_decode.fast_decode(path.read_bytes()) is not None  # the msgspec path ran
    assert_trace_like_reference(path)


@settings(max_examples=80, deadline=None)
@given(events=traces())
def test_msgspec_and_json_decoding_give_the_same_events(events: list[dict[str, Any]]) -> None:
    data = json.dumps(events).encode()
    fast = trace_decode.fast_decode(data)
    assert fast is not None
    assert fast == trace_decode.json_decode(data, Path("trace_view.json"))


def a_trace(tmp_path: Path) -> list[dict[str, Any]]:
    kernel = {
        "name": "aclnnMul_MulAiCore_Mul",
        "pid": HW,
        "tid": 2,
        "ts": f"{T0}.250",
        "dur": 6.280125,
        "args": {"Task Type": "AI_VECTOR_CORE", "Physic Stream Id": 2, "Task Id": 11},
        "ph": "X",
    }
    comm = {"ph": "X", "name": "hcom_allReduce__1", "pid": COMM, "tid": 9, "ts": T0, "dur": 40}
    return [*METADATA, kernel, comm, {**kernel, "tid": 3, "ts": f"{T0 + 1}.001"}]


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda evs: {"traceEvents": evs}, id="traceEvents-object"),
        pytest.param(lambda evs: [*evs, {"ph": "Z", "name": "x"}], id="unknown-phase"),
        pytest.param(lambda evs: [*evs, {"name": "no phase"}], id="no-phase"),
        pytest.param(lambda evs: [*evs, 5, "text", None], id="non-object-elements"),
        pytest.param(lambda evs: [*evs, {**evs[-1], "args": ["a"]}], id="args-not-object"),
        pytest.param(lambda evs: [*evs, {**evs[-1], "ts": 1e400}], id="huge-float"),
    ],
)
def test_traces_msgspec_rejects_read_like_the_reference(tmp_path: Path, spoil: Any) -> None:
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(spoil(a_trace(tmp_path))))
    assert trace_decode.fast_decode(path.read_bytes()) is None  # json decides these
    assert_trace_like_reference(path)
    assert trace_reader.read_trace(path).kernels.height >= 3  # 2 kernels + 1 comm op at least


def test_trace_json_only_text_reads_like_the_reference(tmp_path: Path) -> None:
    # NaN and a BOM are accepted by json.loads (json.loads(bytes) reads utf-8-sig), not msgspec
    nan = {"ph": "X", "pid": HW, "tid": 2, "ts": float("nan"), "dur": 1}
    text = json.dumps([*a_trace(tmp_path), nan])
    path = tmp_path / "trace_view.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert trace_decode.fast_decode(path.read_bytes()) is None
    assert_trace_like_reference(path)


def test_trace_without_mmap_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_trace(tmp_path / "trace_view.json", a_trace(tmp_path))
    mapped = trace_reader.read_trace(path)
    monkeypatch.setattr(trace_decode, "_map", lambda handle: None)
    assert_frame_equal(trace_reader.read_trace(path).kernels, mapped.kernels)
    table = mapped.kernels  # file order: kernel, comm op, kernel
    assert table["start_ns"].to_list() == [T0 * 1000 + 250, T0 * 1000, (T0 + 1) * 1000 + 1]
    # dur 6.280125 µs → round(6280.125) ns; the comm op's int dur 40 µs → 40000 ns
    assert (table["end_ns"] - table["start_ns"]).to_list() == [6280, 40_000, 6280]
    assert table["stream_id"].to_list() == [2, None, 3]
    assert table["task_id"].to_list() == [11, None, 11]


@pytest.mark.parametrize("content", [b"", b"  \n\t "])
def test_empty_trace_is_an_input_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "trace_view.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match="empty file"):
        trace_reader.read_trace(path)


def test_truncated_trace_names_the_line(tmp_path: Path) -> None:
    text = json.dumps(a_trace(tmp_path), indent=1)
    path = tmp_path / "trace_view.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(InputError) as caught:
        trace_reader.read_trace(path)
    assert str(path) in str(caught.value)
    expected_line = text[: len(text) // 2].count("\n") + 1  # json stops at the end
    assert caught.value.line == expected_line


# ---------------------------------------------------------------------------
# Level0 streams: attach_streams against the plain join of its rule


def reference_attach(kernels: pl.DataFrame, tasks: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """The rule in plain Python: rows and tasks paired one to one by (start, name, duration),
    then (start, name), then (start, duration), the n-th of equals with the n-th; a row
    left over takes the stream of the tasks left at its start when they are on one stream."""
    work = kernels
    for column in ("stream_id", "task_id"):
        if column not in work.columns:
            work = work.with_columns(pl.lit(None, pl.Int64).alias(column))
    if "task_id" not in tasks.columns:
        tasks = tasks.with_columns(pl.lit(None, pl.Int64).alias("task_id"))
    has_dur = "duration_ns" in tasks.columns
    known = [
        t
        for t in tasks.to_dicts()
        if not t["is_communication"] and t["start_ns"] is not None and t["stream_id"] is not None
    ]
    rows = work.to_dicts()
    given: dict[int, dict[str, Any]] = {}
    used: set[int] = set()

    def by_duration(items: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
        """The n-th shortest row takes the n-th shortest task; equal durations in file order."""
        return sorted(
            enumerate(items),
            key=lambda item: (
                item[1].get("duration_ns") is None,
                item[1].get("duration_ns") or 0,
                item[0],
            ),
        )

    for keys in (
        ("start_ns", "name", "duration_ns"),
        ("start_ns", "name"),
        ("start_ns", "duration_ns"),
    ):
        for i, row in by_duration(rows):
            if row["is_communication"] or i in given:
                continue
            key = tuple(row.get(k) for k in keys)
            if None in key or ("duration_ns" in keys and not has_dur):
                continue
            for j, task in by_duration(known):
                if j not in used and tuple(task.get(k) for k in keys) == key:
                    given[i], _ = task, used.add(j)
                    break
    for i, row in enumerate(rows):
        if row["is_communication"] or i in given:
            continue
        left = [
            t for j, t in enumerate(known) if j not in used and t["start_ns"] == row["start_ns"]
        ]
        if left and len({t["stream_id"] for t in left}) == 1:
            given[i] = left[0]
    streams = [
        None
        if r["is_communication"]
        else r["stream_id"]
        if r["stream_id"] is not None
        else given[i]["stream_id"]
        if i in given
        else None
        for i, r in enumerate(rows)
    ]
    ids = [
        r["task_id"]
        if r["is_communication"] or r["task_id"] is not None
        else given[i]["task_id"]
        if i in given
        else None
        for i, r in enumerate(rows)
    ]
    out = work.with_columns(
        pl.Series("stream_id", streams, dtype=pl.Int64), pl.Series("task_id", ids, dtype=pl.Int64)
    )
    return out, sum(
        s is None for s, r in zip(streams, rows, strict=True) if not r["is_communication"]
    )


# few values, so that starts shared by tasks (on one stream or several) are common
small_starts = st.one_of(st.integers(0, 6), st.none())
op_names = st.sampled_from(["A", "B", "C"])
stream_ids = st.one_of(st.integers(0, 2), st.none())
task_ids = st.one_of(st.integers(0, 50), st.none())
durations = st.one_of(st.integers(1, 3), st.none())


@st.composite
def kernel_and_task_tables(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    n_kernels, n_tasks = draw(st.integers(0, 30)), draw(st.integers(0, 30))
    kernels = pl.DataFrame(
        {
            "name": draw(st.lists(op_names, min_size=n_kernels, max_size=n_kernels)),
            "start_ns": draw(st.lists(small_starts, min_size=n_kernels, max_size=n_kernels)),
            "duration_ns": draw(st.lists(durations, min_size=n_kernels, max_size=n_kernels)),
            "is_communication": draw(
                st.lists(st.booleans(), min_size=n_kernels, max_size=n_kernels)
            ),
        },
        schema={
            "name": pl.String,
            "start_ns": pl.Int64,
            "duration_ns": pl.Int64,
            "is_communication": pl.Boolean,
        },
    )
    for column in ("stream_id", "task_id"):  # Level0 CSVs have neither; some sources one
        if draw(st.booleans()):
            ids = stream_ids if column == "stream_id" else task_ids
            values = draw(st.lists(ids, min_size=n_kernels, max_size=n_kernels))
            kernels = kernels.with_columns(pl.Series(column, values, dtype=pl.Int64))
    tasks = pl.DataFrame(
        {
            "name": draw(st.lists(op_names, min_size=n_tasks, max_size=n_tasks)),
            "start_ns": draw(st.lists(small_starts, min_size=n_tasks, max_size=n_tasks)),
            "duration_ns": draw(st.lists(durations, min_size=n_tasks, max_size=n_tasks)),
            "stream_id": draw(st.lists(stream_ids, min_size=n_tasks, max_size=n_tasks)),
            "task_id": draw(st.lists(task_ids, min_size=n_tasks, max_size=n_tasks)),
            "is_communication": draw(st.lists(st.booleans(), min_size=n_tasks, max_size=n_tasks)),
        },
        schema={
            "name": pl.String,
            "start_ns": pl.Int64,
            "duration_ns": pl.Int64,
            "stream_id": pl.Int64,
            "task_id": pl.Int64,
            "is_communication": pl.Boolean,
        },
    )
    if draw(st.booleans()):  # task_time-like sources may lack task ids
        tasks = tasks.drop("task_id")
    if draw(st.booleans()):  # a table without durations: the keys without one pair alone
        kernels, tasks = kernels.drop("duration_ns"), tasks.drop("duration_ns")
    return kernels, tasks


@settings(max_examples=300, deadline=None)
@given(tables=kernel_and_task_tables())
def test_attach_streams_matches_the_join_reference(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    kernels, tasks = tables
    got, missing = attach_streams(kernels, tasks)
    expected, expected_missing = reference_attach(kernels, tasks)
    assert_frame_equal(got, expected, check_column_order=False)
    assert missing == expected_missing


def test_attach_streams_by_hand() -> None:
    kernels = pl.DataFrame(
        {
            "name": ["A", "B", "C", "hcom", "D", "F", "G"],
            "start_ns": [10, 20, 20, 30, 40, 50, 50],
            "is_communication": [False, False, False, True, False, False, False],
        }
    )
    tasks = pl.DataFrame(
        {  # 10: one task; 20: A on 3, B on 4; 30: comm; 40: none; 50: E and G, both on 5
            "name": ["X", "A", "B", "hcom", "E", "G"],
            "start_ns": [10, 20, 20, 30, 50, 50],
            "stream_id": [2, 3, 4, None, 5, 5],
            "task_id": [7, 8, 9, None, 11, 12],
            "is_communication": [False, False, False, True, False, False],
        }
    )
    got, missing = attach_streams(kernels, tasks)
    # 10: the only task there, whatever its name; 20: B by name (task 9), then C takes the
    # one task left at 20 (A, stream 3, task 8); 50: G by name (task 12), F the one left (11)
    assert got["stream_id"].to_list() == [2, 4, 3, None, None, 5, 5]
    assert got["task_id"].to_list() == [7, 9, 8, None, None, 11, 12]
    assert missing == 1  # D (the communication row is never a stream)


def test_attach_streams_pairs_equal_names_and_starts_one_to_one() -> None:
    """Issue 23 point 3: two MatMul kernels start at the same ns on streams 2 and 3. The old
    rule (a (start, name) key on two streams gives none) dropped both; now duration tells
    them apart (12 ns on 3, 40 ns on 2), and equal durations pair in file order."""
    kernels = pl.DataFrame(
        {
            "name": ["MatMul", "MatMul", "Add", "Add", "Add"],
            "start_ns": [100, 100, 200, 200, 300],
            "duration_ns": [40, 12, 5, 5, 7],
            "is_communication": [False] * 5,
        }
    )
    tasks = pl.DataFrame(
        {
            "name": ["MatMul", "MatMul", "Add", "Add", "Add", "Mul"],
            "start_ns": [100, 100, 200, 200, 300, 300],
            "duration_ns": [12, 40, 5, 5, 7, 7],
            "stream_id": [3, 2, 2, 3, 2, 3],
            "task_id": [1, 2, 3, 4, 5, 6],
            "is_communication": [False] * 6,
        }
    )
    got, missing = attach_streams(kernels, tasks)
    # MatMul 40 ns = task 2 (stream 2), MatMul 12 ns = task 1 (stream 3); the two equal Adds
    # at 200 take tasks 3 and 4 in order; Add at 300 by name (task 5, not Mul's 6)
    assert got["stream_id"].to_list() == [2, 3, 2, 3, 2]
    assert got["task_id"].to_list() == [2, 1, 3, 4, 5]
    assert missing == 0


# ---------------------------------------------------------------------------
# profiler db


def read_db_by_rows(path: Path) -> db_reader.DbKernels:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(db_reader, "_bulk_compute", lambda *args: None)
        return db_reader.read_db(path)


def assert_db_like_rows(path: Path) -> None:
    """The db reader (bulk path where it applies) gives what the row query gives."""
    try:
        expected = read_db_by_rows(path)
    except InputError as err:
        with pytest.raises(type(err)):
            db_reader.read_db(path)
        return
    got = db_reader.read_db(path)
    assert_frame_equal(got.kernels, expected.kernels)
    assert (got.rank, got.session_end_ns) == (expected.rank, expected.session_end_ns)


def bulk_applies(path: Path) -> bool:
    connection, _ = db_reader._connect(path)
    try:
        schema = db_reader._Schema(connection)
        columns = db_reader._compute_columns(schema, path)
        return db_reader._bulk_compute(connection, schema, columns) is not None
    finally:
        connection.close()


def make_db(
    path: Path,
    tasks: list[tuple[Any, ...]],
    infos: list[tuple[Any, ...]],
    strings: list[tuple[Any, Any]],
    *,
    block: str = "blockDim",
    mix: str = "mixBlockDim",
    text_type: str = "INTEGER",
    number_type: str = "INTEGER",
    strings_key: str = "INTEGER PRIMARY KEY",
) -> Path:
    """TASK(startNs, endNs, deviceId, globalTaskId, streamId, taskId, extra) and
    COMPUTE_TASK_INFO(globalTaskId, name, opType, taskType, block, mix, extra)."""
    con = sqlite3.connect(path)
    n, t = number_type, text_type
    con.executescript(
        f"""
        CREATE TABLE STRING_IDS (id {strings_key}, value TEXT);
        CREATE TABLE TASK (startNs {n}, endNs {n}, deviceId {n}, globalTaskId INTEGER,
            streamId {n}, taskId {n}, depth INTEGER);
        CREATE TABLE COMPUTE_TASK_INFO (globalTaskId INTEGER PRIMARY KEY, name {t},
            opType {t}, taskType {t}, {block} {n}, {mix} {n},
            status_info TEXT);
        CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
        INSERT INTO STEP_TIME VALUES (7, {T0 * 1000}, {T0 * 1000 + 10**7});
        """
    )
    con.executemany("INSERT INTO STRING_IDS VALUES (?, ?)", strings)
    con.executemany("INSERT INTO TASK VALUES (?, ?, ?, ?, ?, ?, 0)", tasks)
    con.executemany("INSERT INTO COMPUTE_TASK_INFO VALUES (?, ?, ?, ?, ?, ?, 'x')", infos)
    con.commit()
    con.close()
    return path


STRINGS = [(1, "aclnnAdd_AddAiCore_Add"), (2, "Add"), (3, "AI_VECTOR_CORE"), (4, "N/A"), (5, None)]


def plain_rows(n: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    start = [T0 * 1000 + 1000 * i for i in range(n)]
    tasks = [(s, s + 500, 0, 100 + i, 2 + i % 2, i, 0) for i, s in enumerate(start)]
    infos = [(100 + i, 1, 2, 3, 48, 0) for i in range(n)]
    return [t[:6] for t in tasks], infos


@pytest.mark.parametrize(
    ("block", "mix"),
    [("blockDim", "mixBlockDim"), ("blockNum", "mixBlockNum"), ("block_dim", "mix_block_dim")],
)
def test_db_bulk_path_matches_rows(tmp_path: Path, block: str, mix: str) -> None:
    tasks, infos = plain_rows(5)
    # a task without compute info (not a kernel) and one whose info has NULLs / unknown ids
    tasks += [(T0 * 1000, T0 * 1000 + 1, 0, 999, 2, 9), (T0 * 1000 + 7, None, None, 105, 3, None)]
    infos += [(105, None, 77, 5, None, 3)]  # id 77 not in STRING_IDS; id 5 maps to NULL
    path = make_db(tmp_path / "a.db", tasks, infos, STRINGS, block=block, mix=mix)
    assert bulk_applies(path)
    assert_db_like_rows(path)
    kernels = db_reader.read_db(path).kernels
    # the row with endNs NULL stays, without an end (readers.capture counts it as malformed);
    # names of ids 1 / NULL; op type 77 → "77", 5 → "5"
    assert kernels.height == 6
    assert kernels["end_ns"].null_count() == 1
    timed = kernels.filter(pl.col("end_ns").is_not_null())
    assert timed["name"].unique().to_list() == ["aclnnAdd_AddAiCore_Add"]


def test_db_bulk_path_keeps_ids_and_nulls(tmp_path: Path) -> None:
    tasks, infos = plain_rows(2)
    infos = [(100, 77, 5, None, None, 3), (101, 1, None, 3, 24, None)]
    path = make_db(tmp_path / "a.db", tasks, infos, STRINGS)
    assert bulk_applies(path)
    assert_db_like_rows(path)
    kernels = db_reader.read_db(path).kernels
    # COALESCE(STRING_IDS value, CAST(id AS TEXT)): 77 is unknown, 5 maps to NULL
    assert kernels["name"].to_list() == ["77", "aclnnAdd_AddAiCore_Add"]
    assert kernels["op_type"].to_list() == ["5", None]
    assert kernels["block_num"].to_list() == [None, 24]
    assert kernels["mix_block_num"].to_list() == [3, None]


@pytest.mark.parametrize(
    ("odd_value", "bulk"),
    [
        pytest.param(2.5, False, id="real"),
        pytest.param("7", True, id="integer-text"),  # stored as 7 under integer affinity
        pytest.param("007", True, id="zero-padded-text"),
        pytest.param("", False, id="empty-text"),
        pytest.param("1,2", False, id="comma-text"),
        pytest.param("abc", False, id="word"),
        pytest.param(b"\x01", False, id="blob"),
    ],
)
@pytest.mark.parametrize("number_type", ["INTEGER", ""])
def test_db_odd_values_read_like_rows(
    tmp_path: Path,
    odd_value: Any,
    bulk: bool,
    number_type: str,
) -> None:
    tasks, infos = plain_rows(3)
    infos[1] = (*infos[1][:4], odd_value, infos[1][5])  # the block column
    path = make_db(tmp_path / "a.db", tasks, infos, STRINGS, number_type=number_type)
    # integer text parses alike on both paths, stored as text (no affinity) or as an integer
    assert bulk_applies(path) == bulk
    assert_db_like_rows(path)


def test_db_text_fields_stored_as_text_use_the_row_query(tmp_path: Path) -> None:
    tasks, infos = plain_rows(2)
    infos = [(100, "Conv2D", "007", "AI_CORE", 1, 0), (101, "1", "2", "3", 1, 0)]
    path = make_db(tmp_path / "a.db", tasks, infos, STRINGS, text_type="TEXT")
    assert not bulk_applies(path)  # '007' would be the id 7 to the subquery, "007" as text
    assert_db_like_rows(path)


def test_db_string_ids_without_key_use_the_row_query(tmp_path: Path) -> None:
    tasks, infos = plain_rows(2)
    strings = [*STRINGS, (1, "a second value for id 1")]
    path = make_db(tmp_path / "a.db", tasks, infos, strings, strings_key="INTEGER")
    assert not bulk_applies(path)
    assert_db_like_rows(path)


def test_db_string_ids_keyed_by_text_use_the_row_query(tmp_path: Path) -> None:
    tasks, infos = plain_rows(2)
    # the subquery compares id 1 with '01' numerically (affinity): a match polars would miss
    strings = [("01", "aclnnAdd_AddAiCore_Add"), ("2", "Add"), ("3", "AI_VECTOR_CORE")]
    path = make_db(tmp_path / "a.db", tasks, infos, strings, strings_key="TEXT PRIMARY KEY")
    assert not bulk_applies(path)
    assert_db_like_rows(path)
    assert db_reader.read_db(path).kernels["name"].to_list() == ["aclnnAdd_AddAiCore_Add"] * 2


def test_db_string_ids_with_text_values_of_other_types(tmp_path: Path) -> None:
    tasks, infos = plain_rows(2)
    path = make_db(tmp_path / "a.db", tasks, infos, [(1, b"blob"), (2, 5), (3, 1.5)])
    assert_db_like_rows(path)


def test_db_without_compute_rows(tmp_path: Path) -> None:
    tasks, _ = plain_rows(2)
    path = make_db(tmp_path / "a.db", tasks, [], STRINGS)
    assert bulk_applies(path)
    assert_db_like_rows(path)
    assert db_reader.read_db(path).kernels.height == 0


db_values = st.one_of(
    st.integers(-(2**63), 2**63 - 1),
    st.integers(0, 60),
    st.sampled_from([None, 2.5, 3.0, "12", "", "x,y", "N/A"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 10**12), db_values, db_values, db_values, db_values, db_values),
        max_size=12,
    ),
    number_type=st.sampled_from(["INTEGER", "NUMERIC", ""]),
)
def test_db_reader_matches_rows_on_generated_values(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[Any, ...]],
    number_type: str,
) -> None:
    start = [T0 * 1000 + row[0] for row in rows]
    tasks = [
        (s, s + 10, r[1], 100 + i, r[2], r[3])
        for i, (s, r) in enumerate(zip(start, rows, strict=True))
    ]
    infos = [(100 + i, 1 + i % 6, 2, 3, r[4], r[5]) for i, r in enumerate(rows)]
    path = make_db(
        tmp_path_factory.mktemp("db") / "a.db", tasks, infos, STRINGS, number_type=number_type
    )
    assert_db_like_rows(path)


def test_db_big_synthetic_capture_uses_the_bulk_path(tmp_path: Path) -> None:
    from synth import Variant
    from synth.big import big_capture

    result = big_capture(tmp_path, 3_000, variant=Variant(level="Level0", trace=False, db=True))
    (path,) = result.glob("ASCEND_PROFILER_OUTPUT/*.db")
    assert bulk_applies(path)
    assert_db_like_rows(path)
    assert db_reader.read_db(path).kernels.height == 3_000


def test_attach_streams_pairs_durations_rounded_apart_by_order_of_duration() -> None:
    """Two Casts start at the same ns on streams 2 and 3; the trace's float durations round
    1 ns away from kernel_details' (41 / 13 against 40 / 12): no (start, name, duration)
    key matches, and under (start, name) the shorter row takes the shorter task, though
    the files list them in opposite orders."""
    kernels = pl.DataFrame(
        {
            "name": ["Cast", "Cast"],
            "start_ns": [100, 100],
            "duration_ns": [12, 40],
            "is_communication": [False, False],
        }
    )
    tasks = pl.DataFrame(
        {
            "name": ["Cast", "Cast"],
            "start_ns": [100, 100],
            "duration_ns": [41, 13],
            "stream_id": [2, 3],
            "task_id": [1, 2],
            "is_communication": [False, False],
        }
    )
    got, missing = attach_streams(kernels, tasks)
    assert got["stream_id"].to_list() == [3, 2]  # 12 ns ~ 13 ns on 3, 40 ns ~ 41 ns on 2
    assert missing == 0
