"""synth: generated files look like the real captures; scenarios mean what they say.

Structure tests compare against ../shared/real-profiles (skipped when absent):
headers, value shapes (TAB, decimals, quoting, line ends), trace process and
thread naming, db schema, profiler_info key sets, info.json. Scenario tests check
the construction with the arithmetic written out.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import statistics
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from synth import (
    CommOp,
    Kernel,
    Scenario,
    Task,
    Variant,
    big_frames,
    fmt,
    op_type_of,
    rows,
    scenarios,
    write_msprof_dir,
    write_result_dir,
    write_runs,
)
from synth.fixtures import write_fixtures
from synth.layers import SIDE_OPS, side_length

# ----------------------------------------------------------------- helpers

T0 = 1_736_408_883_704_643_212


def _sample() -> Scenario:
    """One fake run of rank 1 with an allreduce, tasks on streams 0/2/3/4."""
    return scenarios.two_rank_job(runs=1, layers=2).runs(rank=1)[0]


def _write(tmp: Path, variant: Variant, scenario: Scenario | None = None) -> Path:
    return write_result_dir(scenario or _sample(), tmp, variant)


def _csv_rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _output(result_dir: Path, name: str) -> Path:
    return result_dir / "ASCEND_PROFILER_OUTPUT" / name


def _prof(result_dir: Path) -> Path:
    (prof,) = [p for p in result_dir.iterdir() if p.name.startswith("PROF_")]
    return prof


def _real(real_profiles: Path, folder: str) -> Path:
    return real_profiles / folder / "rank0_ascend_pt"


def _vllm(real_profiles: Path) -> Path:
    (prof,) = (real_profiles / "msprof-cli").glob("PROF_*")
    return prof


def _key_shape(obj: Any) -> Any:
    """Nested key structure of a JSON object (values' types ignored)."""
    if isinstance(obj, dict):
        return {key: _key_shape(value) for key, value in obj.items()}
    return None


def _events_by_process(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        grouped.setdefault(names.get(event.get("pid"), "?"), []).append(event)
    return grouped


# ----------------------------------------------------------------- kernel_details headers


@pytest.mark.real
def test_headers_equal_the_real_files(real_profiles: Path, tmp_path: Path) -> None:
    cases = [
        ("torch_npu-level0-text", Variant(level="Level0")),
        ("torch_npu-level1-text", Variant(level="Level1")),
        ("torch_npu-2023-legacy", Variant(version="2023", crlf=False)),
    ]
    for index, (folder, variant) in enumerate(cases):
        ours = _csv_rows(_output(_write(tmp_path / str(index), variant), "kernel_details.csv"))[0]
        real = _csv_rows(
            _real(real_profiles, folder) / "ASCEND_PROFILER_OUTPUT/kernel_details.csv"
        )[0]
        assert ours == real, folder


@pytest.mark.real
def test_2026_headers_follow_the_real_op_summary(real_profiles: Path, tmp_path: Path) -> None:
    real = _csv_rows(
        next((_vllm(real_profiles) / "mindstudio_profiler_output").glob("op_summary_*"))
    )[0]
    prof = write_msprof_dir(_sample(), tmp_path / "ms")
    ours = _csv_rows(next((prof / "mindstudio_profiler_output").glob("op_summary_*")))[0]
    assert ours == real
    # torch_npu renames six op_summary columns and prepends Step Id (docs/formats.md)
    renames = {
        "Op Name": "Name",
        "OP Type": "Type",
        "Task Type": "Accelerator Core",
        "Task Start Time(us)": "Start Time(us)",
        "Task Duration(us)": "Duration(us)",
        "Task Wait Time(us)": "Wait Time(us)",
    }
    kd = _csv_rows(_output(_write(tmp_path / "kd", Variant(version="2026")), "kernel_details.csv"))[
        0
    ]
    base = real.index("Context ID") + 1
    assert kd[: base + 1] == ["Step Id", *[renames.get(c, c) for c in real[:base]]]
    level0 = _csv_rows(
        _output(
            _write(tmp_path / "l0", Variant(version="2026", level="Level0")), "kernel_details.csv"
        )
    )[0]
    assert level0 == [
        "Step Id",
        "Device_id",
        "Name",
        "Type",
        "Accelerator Core",
        "Start Time(us)",
        "Duration(us)",
        "Wait Time(us)",
        "Block Num",
    ]


# ----------------------------------------------------------------- kernel_details values


def _value_patterns(rows_: list[list[str]], column: str) -> set[str]:
    index = rows_[0].index(column)
    return {re.sub(r"\d", "9", row[index]) for row in rows_[1:]}


@pytest.mark.real
def test_start_times_have_three_decimals_and_a_tab_like_real(
    real_profiles: Path, tmp_path: Path
) -> None:
    real = _csv_rows(
        _real(real_profiles, "torch_npu-level1-text") / "ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    )
    ours = _csv_rows(_output(_write(tmp_path, Variant()), "kernel_details.csv"))
    assert (
        _value_patterns(ours, "Start Time(us)")
        == _value_patterns(real, "Start Time(us)")
        == {"9999999999999999.999\t"}
    )


def test_2023_values_have_no_tab_and_drop_trailing_zeros(tmp_path: Path) -> None:
    kernel = Kernel(
        "aclnnAdd_AddAiCore_Add", 2, 1_695_115_378_713_661_000, 5_800, "AI_VECTOR_CORE", step=2
    )
    later = Kernel(
        "aclnnAdd_AddAiCore_Add", 2, 1_695_115_378_715_400_200, 496_850, "AI_VECTOR_CORE", step=2
    )
    result = _write(tmp_path, Variant(version="2023", crlf=False), Scenario("s", (kernel, later)))
    rows_ = _csv_rows(_output(result, "kernel_details.csv"))
    header = rows_[0]
    start, duration, wait = (
        header.index(c) for c in ("Start Time(us)", "Duration(us)", "Wait Time(us)")
    )
    assert [r[start] for r in rows_[1:]] == ["1695115378713661", "1695115378715400.2"]
    assert [r[duration] for r in rows_[1:]] == ["5.8", "496.85"]
    # wait = 1695115378715400.2 - 1695115378713661 - 5.8 = 1733.4 us
    assert [r[wait] for r in rows_[1:]] == ["0", "1733.4"]


def test_wait_time_is_device_wide_after_sorting_by_start(tmp_path: Path) -> None:
    # stream 3 kernel starts between the two stream 2 kernels; comm row last
    kernels = (
        Kernel("aclnnAdd_AddAiCore_Add", 2, T0, 10_000, "AI_VECTOR_CORE"),
        Kernel("aclnnAdd_AddAiCore_Add", 2, T0 + 50_000, 10_000, "AI_VECTOR_CORE"),
        Kernel("aclnnMul_MulAiCore_Mul", 3, T0 + 15_000, 5_000, "AI_VECTOR_CORE"),
    )
    comm = (CommOp("hcom_allReduce__868_0_1", T0 + 58_000, 1_000),)
    scenario = Scenario("w", kernels, comm)
    for version, expect in (
        ("2025", ["0", "5.0", "30.0", "0.0"]),
        ("2026", ["0", "5.000000", "30.000000", "0.000000"]),
    ):
        rows_ = _csv_rows(
            _output(
                _write(tmp_path / version, Variant(version=version), scenario), "kernel_details.csv"
            )
        )
        wait = rows_[0].index("Wait Time(us)")
        # T0+15000 - (T0+10000) = 5 us; T0+50000 - (T0+20000) = 30 us; 58000 - 60000 < 0 -> 0
        assert [r[wait] for r in rows_[1:]] == expect


@pytest.mark.real
def test_shapes_are_quoted_like_real(real_profiles: Path, tmp_path: Path) -> None:
    raw_real = (
        _real(real_profiles, "torch_npu-level1-text") / "ASCEND_PROFILER_OUTPUT/kernel_details.csv"
    ).read_text()
    raw_ours = _output(_write(tmp_path, Variant()), "kernel_details.csv").read_text()
    pattern = re.compile(r',"""[0-9,;]+""",')
    assert pattern.search(raw_real) and pattern.search(raw_ours)
    ours = _csv_rows(_output(_write(tmp_path / "b", Variant()), "kernel_details.csv"))
    shapes = ours[0].index("Input Shapes")
    assert ours[1][shapes].startswith('"') and ours[1][shapes].endswith('"')


def test_line_ends_and_quoted_start(tmp_path: Path) -> None:
    crlf = _output(_write(tmp_path / "a", Variant()), "kernel_details.csv").read_bytes()
    assert crlf.count(b"\r\n") == crlf.count(b"\n") > 1 and crlf.endswith(b"\r\n")
    lf = _output(
        _write(tmp_path / "b", Variant(crlf=False, quoted_start=True)), "kernel_details.csv"
    ).read_bytes()
    assert b"\r" not in lf and lf.endswith(b"\n")
    assert re.search(rb',"\d{16}\.\d{3}\t",', lf)


def test_level0_rows_hide_streams_but_keep_communication(tmp_path: Path) -> None:
    rows_ = _csv_rows(_output(_write(tmp_path, Variant(level="Level0")), "kernel_details.csv"))
    header = rows_[0]
    assert "Stream ID" not in header and "Task ID" not in header
    core, block, kind = (
        header.index("Accelerator Core"),
        header.index("Block Dim"),
        header.index("Type"),
    )
    comm = [r for r in rows_[1:] if r[header.index("Name")].startswith("hcom_")]
    compute = [r for r in rows_[1:] if not r[header.index("Name")].startswith("hcom_")]
    assert {r[core] for r in compute} == {r[kind] for r in rows_[1:]} == {"N/A"}
    assert {r[core] for r in comm} == {"HCCL"} and {r[block] for r in rows_[1:]} == {"0"}


def test_level1_rows_carry_streams_task_ids_and_na_for_communication(tmp_path: Path) -> None:
    scenario = _sample()
    rows_ = _csv_rows(_output(_write(tmp_path, Variant(version="2026")), "kernel_details.csv"))
    header = rows_[0]
    col = {
        name: header.index(name)
        for name in (
            "Name",
            "Stream ID",
            "Task ID",
            "Accelerator Core",
            "Block Num",
            "Model ID",
            "aicore_time(us)",
        )
    }
    comm = [r for r in rows_[1:] if r[col["Name"]].startswith("hcom_")]
    assert len(comm) == len(scenario.communication) == 1
    assert (
        comm[0][col["Stream ID"]]
        == comm[0][col["Task ID"]]
        == comm[0][col["aicore_time(us)"]]
        == "N/A"
    )
    assert comm[0][col["Accelerator Core"]] == "COMMUNICATION" and comm[0][col["Block Num"]] == "0"
    compute = [r for r in rows_[1:] if not r[col["Name"]].startswith("hcom_")]
    assert len(compute) == len(scenario.kernels)
    assert {r[col["Model ID"]] for r in rows_[1:]} == {"4294967295"}
    for stream in ("2", "3"):
        ids = [int(r[col["Task ID"]]) for r in compute if r[col["Stream ID"]] == stream]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_non_kernel_tasks_never_reach_kernel_details(tmp_path: Path) -> None:
    result = _write(tmp_path, Variant())
    names = {r[4] for r in _csv_rows(_output(result, "kernel_details.csv"))[1:]}
    assert not names & {"EVENT_WAIT", "EVENT_RECORD", "Notify Wait", "SDMA", "PROFILING_ENABLE"}
    trace = json.loads(_output(result, "trace_view.json").read_text())
    trace_names = {e["name"] for e in trace if e.get("ph") == "X"}
    assert {"EVENT_WAIT", "EVENT_RECORD", "Notify Wait", "SDMA", "PROFILING_ENABLE"} <= trace_names


# ----------------------------------------------------------------- trace_view.json


def _hardware(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _events_by_process(events)["Ascend Hardware"]


@pytest.mark.real
def test_trace_processes_threads_and_pids_like_real(real_profiles: Path, tmp_path: Path) -> None:
    for level, folder in (("Level0", "torch_npu-level0-text"), ("Level1", "torch_npu-level1-text")):
        real = json.loads(
            (_real(real_profiles, folder) / "ASCEND_PROFILER_OUTPUT/trace_view.json").read_text()
        )
        result = _write(tmp_path / level, Variant(level=level))
        raw = _output(result, "trace_view.json").read_text()
        ours = json.loads(raw)
        assert raw.startswith("[{") and isinstance(ours, list)
        for events in (real, ours):
            grouped = _events_by_process(events)
            assert {"Python", "Ascend Hardware", "HCCL", "Overlap Analysis"} <= set(grouped)
            assert ("CANN" in grouped) == (level == "Level1")
            python_pid = grouped["Python"][0]["pid"]
            hardware = grouped["Ascend Hardware"]
            # (pid << 10) | (13 << 5) | device: device 0 in the real file, 1 in our rank-1 sample
            assert hardware[0]["pid"] >> 5 == (python_pid << 5) | 13
            threads = {
                e["tid"]: e["args"]["name"] for e in hardware if e.get("name") == "thread_name"
            }
            assert all(name == f"Stream {tid}" for tid, name in threads.items())
            sorts = {e["tid"] for e in hardware if e.get("name") == "thread_sort_index"}
            assert sorts == set(threads)
            labels = [e["args"]["labels"] for e in hardware if e.get("name") == "process_labels"]
            assert labels == ["NPU"]
            overlap = {
                e["args"]["name"]: e["tid"]
                for e in grouped["Overlap Analysis"]
                if e.get("name") == "thread_name"
            }
            assert overlap == {
                "Computing": 0,
                "Communication": 1,
                "Communication(Not Overlapped)": 2,
                "Free": 3,
            }
            steps = [e for e in grouped["Python"] if e.get("name", "").startswith("ProfilerStep#")]
            assert steps and steps[0]["cat"] == "cpu_op"
        if level == "Level0":
            # the CANN process_name is pruned but its thread names stay, on an orphan pid
            for events in (real, ours):
                assert _events_by_process(events)["?"]


@pytest.mark.real
def test_hardware_events_have_the_real_key_order_and_types(
    real_profiles: Path, tmp_path: Path
) -> None:
    real = json.loads(
        (
            _real(real_profiles, "torch_npu-level1-text") / "ASCEND_PROFILER_OUTPUT/trace_view.json"
        ).read_text()
    )
    ours = json.loads(_output(_write(tmp_path, Variant()), "trace_view.json").read_text())
    for events in (real, ours):
        xs = [e for e in _hardware(events) if e.get("ph") == "X"]
        assert {tuple(e) for e in xs} == {("name", "pid", "tid", "ts", "dur", "args", "ph")}
        assert {tuple(e["args"]) for e in xs} == {
            (
                "Model Id",
                "Task Type",
                "Physic Stream Id",
                "Task Id",
                "Batch Id",
                "Subtask Id",
                "connection_id",
            )
        }
        assert all(re.fullmatch(r"\d{16}\.\d{3}", e["ts"]) for e in xs)
        assert all(isinstance(e["dur"], (int, float)) for e in xs)
        assert all(e["tid"] == e["args"]["Physic Stream Id"] for e in xs)
        types = {e["args"]["Task Type"] for e in xs}
        assert {"EVENT_WAIT_SQE", "EVENT_RECORD_SQE", "AI_CORE"} <= types


@pytest.mark.real
def test_msprof_timeline_matches_the_real_2026_layout(real_profiles: Path, tmp_path: Path) -> None:
    real = json.loads(
        next(
            (_vllm(real_profiles) / "mindstudio_profiler_output").glob("msprof_*.json")
        ).read_text()
    )
    rank0 = scenarios.two_rank_job(runs=1, layers=2).runs(rank=0)[0]  # device 0, as the real one
    prof = write_msprof_dir(rank0, tmp_path)
    raw = next((prof / "mindstudio_profiler_output").glob("msprof_*.json")).read_text()
    assert raw.startswith('[{"name":')  # compact separators, as msprof writes
    ours = json.loads(raw)
    for events in (real, ours):
        hardware = _hardware(events)
        assert [e["args"]["labels"] for e in hardware if e.get("name") == "process_labels"] == [
            "NPU 0"
        ]
        xs = [e for e in hardware if e.get("ph") == "X"]
        assert {tuple(e) for e in xs} == {("name", "pid", "tid", "ts", "dur", "ph", "args")}
        grouped = _events_by_process(events)
        overlap = {
            e["args"]["name"]: e["tid"]
            for e in grouped["Overlap Analysis"]
            if e.get("name") == "thread_name"
        }
        assert overlap == {
            "Communication": 0,
            "Communication(Not Overlapped)": 1,
            "Computing": 2,
            "Free": 3,
        }
        cann_pid = grouped["CANN"][0]["pid"]
        assert cann_pid & 31 == 31  # host layer: device id 31


def test_trace_durations_round_back_to_exact_ns(tmp_path: Path) -> None:
    scenario = _sample()
    events = json.loads(_output(_write(tmp_path, Variant()), "trace_view.json").read_text())
    kernels = {(k.stream_id, fmt.us3(k.start_ns)): k.duration_ns for k in scenario.kernels}
    xs = [e for e in _hardware(events) if e.get("ph") == "X" and (e["tid"], e["ts"]) in kernels]
    assert len(xs) == len(scenario.kernels)
    for event in xs:
        assert round(event["dur"] * 1000) == kernels[(event["tid"], event["ts"])]
    assert any(len(repr(e["dur"]).split(".")[1]) > 3 for e in xs)  # sub-ns tails, like 53.7410625


def test_2023_trace_uses_plain_pids_and_stream_id(tmp_path: Path) -> None:
    events = json.loads(
        _output(_write(tmp_path, Variant(version="2023")), "trace_view.json").read_text()
    )
    xs = [e for e in _hardware(events) if e.get("ph") == "X"]
    assert {e["pid"] for e in xs} == {800}
    assert all("Stream Id" in e["args"] and "Physic Stream Id" not in e["args"] for e in xs)
    assert {e["args"]["Task Type"] for e in xs} == {"Other"}  # as in the real 2024 trace


# ----------------------------------------------------------------- db


@pytest.mark.real
def test_db_schema_matches_the_real_export(real_profiles: Path, tmp_path: Path) -> None:
    result = _write(tmp_path, Variant(level="Level0", db=True, kernel_details=False, trace=False))
    ours = sqlite3.connect(_output(result, "ascend_pytorch_profiler_1.db"))
    real = sqlite3.connect(
        _real(real_profiles, "torch_npu-level0-db")
        / "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
    )
    try:
        schema_ours = dict(ours.execute("SELECT name, sql FROM sqlite_master").fetchall())
        schema_real = dict(real.execute("SELECT name, sql FROM sqlite_master").fetchall())
        assert {"TASK", "COMPUTE_TASK_INFO", "STRING_IDS", "TaskIndex"} <= set(schema_ours)
        for name, sql in schema_ours.items():
            assert sql == schema_real[name], name
        assert not (set(_output(result, "").iterdir()) & {_output(result, "kernel_details.csv")})
    finally:
        ours.close()
        real.close()


def test_db_task_holds_every_task_and_the_join_keeps_kernels(tmp_path: Path) -> None:
    scenario = _sample()
    result = _write(tmp_path, Variant(level="Level0", db=True))
    con = sqlite3.connect(_output(result, "ascend_pytorch_profiler_1.db"))
    try:
        joined = con.execute(
            "SELECT t.streamId, t.startNs, t.endNs, s.value FROM TASK t "
            "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId "
            "JOIN STRING_IDS s ON s.id = c.name"
        ).fetchall()
        assert sorted(joined) == sorted(
            (k.stream_id, k.start_ns, k.end_ns, k.name) for k in scenario.kernels
        )
        types = {
            row[0]
            for row in con.execute(
                "SELECT s.value FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType"
            ).fetchall()
        }
        assert {
            "EVENT_WAIT",
            "EVENT_RECORD",
            "Notify Wait",
            "KERNEL_AICORE",
            "KERNEL_AIVEC",
            "MIX_AIC",
        } <= types
        # tasks + kernels + one communication TASK row (typed AI_CORE, no compute info)
        (count,) = con.execute("SELECT count(*) FROM TASK").fetchone()
        assert count == len(scenario.tasks) + len(scenario.kernels) + len(scenario.communication)
        level0_types = {
            row[0]
            for row in con.execute(
                "SELECT s.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.taskType"
            ).fetchall()
        }
        assert level0_types == {"N/A"}
    finally:
        con.close()


# ----------------------------------------------------------------- layout, profiler_info, msprof


@pytest.mark.real
def test_profiler_info_key_sets_match_real(real_profiles: Path, tmp_path: Path) -> None:
    real_2025 = json.loads(
        (_real(real_profiles, "torch_npu-level1-text") / "profiler_info_0.json").read_text()
    )
    real_2023 = json.loads(
        (_real(real_profiles, "torch_npu-2023-legacy") / "profiler_info_0.json").read_text()
    )
    ours_2025 = json.loads((_write(tmp_path / "a", Variant()) / "profiler_info_1.json").read_text())
    ours_2023 = json.loads(
        (_write(tmp_path / "b", Variant(version="2023")) / "profiler_info_1.json").read_text()
    )
    assert _key_shape(ours_2025) == _key_shape(real_2025)
    assert _key_shape(ours_2023) == _key_shape(real_2023)
    assert (
        ours_2025["rank_id"] == 1
        and ours_2025["config"]["experimental_config"]["_export_type"] == "text"
    )
    ours_2026 = json.loads(
        (
            _write(tmp_path / "c", Variant(version="2026", db=True)) / "profiler_info_1.json"
        ).read_text()
    )
    assert ours_2026["rank_id"] == "1" and ours_2026["config"]["experimental_config"][
        "_export_type"
    ] == ["text", "db"]
    assert ours_2026["end_info"]["collectionTimeEnd"] == _sample().end_ns()
    assert (
        _write(tmp_path / "c", Variant(version="2026")) / "ASCEND_PROFILER_OUTPUT/analyse.done"
    ).exists()


@pytest.mark.real
def test_prof_dir_and_device_info_like_real(real_profiles: Path, tmp_path: Path) -> None:
    vllm = _vllm(real_profiles)
    torch_npu_regex = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")
    strict = re.compile(r"^PROF_\d{6}_\d{17}_[0-9A-Za-z]{16}$")
    scenario = _sample()
    result = _write(tmp_path, Variant())
    assert re.fullmatch(r"localhost\.localdomain_\d+_\d{17}_ascend_pt", result.name)
    prof = _prof(result)
    for name in (vllm.name, prof.name):
        assert torch_npu_regex.match(name) and strict.match(name)
    real_info = json.loads((vllm / "device_0/info.json.0").read_text())
    ours_info = json.loads((prof / "device_1/info.json.1").read_text())
    assert set(ours_info["DeviceInfo"][0]) == set(real_info["DeviceInfo"][0])
    assert (
        (ours_info["DeviceInfo"][0]["ai_core_num"], ours_info["DeviceInfo"][0]["aiv_num"])
        == (scenario.aicore, scenario.vectorcore)
        == (24, 48)
    )
    assert (
        (prof / "host").is_dir() and (result / "FRAMEWORK").is_dir() and (result / "logs").is_dir()
    )


@pytest.mark.real
def test_task_time_like_real(real_profiles: Path, tmp_path: Path) -> None:
    real = (
        next((_vllm(real_profiles) / "mindstudio_profiler_output").glob("task_time_*"))
    ).read_text()
    ours = _output(
        _write(tmp_path, Variant(version="2026", task_time=True)), "task_time.csv"
    ).read_text()
    assert ours.splitlines()[0] == real.splitlines()[0]
    pattern = re.compile(
        r"^\d+,[^,]+,[A-Z_ a-z]+,\d+,\d+,\d+\.\d{3},\d{16}\.\d{3}\t,\d{16}\.\d{3}\t$"
    )
    assert all(pattern.match(line) for line in real.splitlines()[1:])
    assert all(pattern.match(line) for line in ours.splitlines()[1:])
    kinds = {line.split(",")[2] for line in ours.splitlines()[1:]}
    assert {"EVENT_WAIT_SQE", "PROFILING_ENABLE", "AI_CORE", "MIX_AIC"} <= kinds


@pytest.mark.real
def test_step_trace_time_headers_like_real(real_profiles: Path, tmp_path: Path) -> None:
    for folder, variant in (
        ("torch_npu-level1-text", Variant()),
        ("torch_npu-2023-legacy", Variant(version="2023")),
    ):
        real = (
            _real(real_profiles, folder) / "ASCEND_PROFILER_OUTPUT/step_trace_time.csv"
        ).read_text()
        ours = _output(_write(tmp_path / folder, variant), "step_trace_time.csv").read_text()
        assert ours.splitlines()[0] == real.splitlines()[0]
        assert ours.splitlines()[1].split(",")[0] == "50"


def test_output_is_deterministic(tmp_path: Path) -> None:
    variant = Variant(version="2026", db=True, task_time=True, msprof_output=True)
    first = _write(tmp_path / "a", variant)
    second = _write(tmp_path / "b", variant)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_committed_fixtures_are_up_to_date(tmp_path: Path) -> None:
    committed = Path(__file__).resolve().parents[1] / "fixtures"
    if not committed.is_dir():
        pytest.skip("fixtures/ not generated yet")
    folders = ("fake-dual-stream", "level0", "touching-windows")
    write_fixtures(tmp_path, folders)
    for folder in folders:
        fresh = sorted(
            p.relative_to(tmp_path) for p in (tmp_path / folder).rglob("*") if p.is_file()
        )
        stored = sorted(
            p.relative_to(committed) for p in (committed / folder).rglob("*") if p.is_file()
        )
        assert fresh == stored, f"regenerate fixtures: python -m synth fixtures/ ({folder})"
        for name in fresh:
            assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), name


def test_write_runs_keeps_order_and_names_runs_by_capture_time(tmp_path: Path) -> None:
    built = scenarios.fake_dual_stream(runs=3, layers=1)
    paths = write_runs(built.scenarios, tmp_path)
    assert [p.parent for p in paths] == [tmp_path] * 3
    stamps = [p.name.split("_")[2] for p in paths]
    assert stamps == sorted(stamps) and len(set(stamps)) == 3


# ----------------------------------------------------------------- formatting


def test_microsecond_text_is_integer_exact() -> None:
    ns = 1_736_408_883_704_643_210
    assert fmt.us3(ns) == "1736408883704643.210"
    assert fmt.us6(ns) == "1736408883704643.210000"
    assert fmt.us_repr(ns) == "1736408883704643.21"
    assert fmt.us_repr(15_000) == "15.0" and fmt.us_short(15_000) == "15"
    assert fmt.us_short(1_695_115_378_715_400_200) == "1695115378715400.2"
    values = [0, 1, 999, 1000, 6_280, 15_500, ns, ns + 790]
    frame = pl.DataFrame({"ns": values})
    for scalar, expr in (
        (fmt.us3, fmt.us3_expr),
        (fmt.us6, fmt.us6_expr),
        (fmt.us_repr, fmt.us_repr_expr),
        (fmt.us_short, fmt.us_short_expr),
    ):
        assert frame.select(expr(pl.col("ns"))).to_series().to_list() == [scalar(v) for v in values]


def test_op_type_of_names() -> None:
    assert op_type_of("aclnnGroupedMatmulV5_GroupedMatmul_GroupedMatmul") == "GroupedMatmul"
    assert op_type_of("trans_TransData_3") == "TransData"
    assert op_type_of("hcom_allReduce__868_0_1") == "hcom_allReduce_"


def test_task_ids_count_kernels_and_tasks_per_stream() -> None:
    kernels = (
        Kernel("a_A_A", 2, T0, 10),
        Kernel("b_B_B", 2, T0 + 100, 10),
        Kernel("c_C_C", 3, T0 + 50, 10),
    )
    tasks = (Task("EVENT_WAIT_SQE", 2, T0 + 50, 5),)
    frames = rows.frames(Scenario("ids", kernels, tasks=tasks))
    k = frames.kernels.sort("start_ns")
    # stream 2 numbering starts at 11051: kernel, task (11052), kernel; stream 3 at 301
    assert k["task_id"].to_list() == [11051, 301, 11053]
    assert frames.tasks["task_id"].to_list() == [11052]


def test_big_frames_are_serial_per_stream() -> None:
    frames = big_frames(20_000, seed=3)
    k = frames.kernels
    assert k.height == 20_000 and set(k["stream_id"].unique().to_list()) == {2, 3}
    for sid in (2, 3):
        mine = k.filter(pl.col("stream_id") == sid).sort("start_ns")
        ends = (mine["start_ns"] + mine["dur_ns"]).to_list()
        assert all(
            nxt >= end for end, nxt in zip(ends, mine["start_ns"].to_list()[1:], strict=False)
        )
    assert k["task_id"].max() < 65536 and k["wait_ns"].min() >= 0  # type: ignore[operator]


# ----------------------------------------------------------------- scenarios


def _side(scenario: Scenario) -> list[Kernel]:
    return [k for k in scenario.kernels if "SharedExpert" in k.name]


def _dominators(scenario: Scenario) -> list[Kernel]:
    return [k for k in scenario.kernels if "GroupedMatmul" in k.name]


def test_plan_regexes_select_the_scenario_ops() -> None:
    run = scenarios.real_dual_stream(runs=1, layers=3).scenarios[0]
    assert {k.stream_id for k in _side(run)} == {3} and len(_side(run)) == 3 * len(SIDE_OPS)
    assert {k.stream_id for k in _dominators(run)} == {2} and len(_dominators(run)) == 3
    others = {op_type_of(k.name) for k in run.kernels if k.stream_id == 2} - {"GroupedMatmul"}
    assert {"RmsNorm", "MatMulV3", "Swish", "MoeInitRouting"} <= others


def test_real_side_windows_lie_inside_the_dominators() -> None:
    built = scenarios.real_dual_stream(runs=2, layers=3)
    side_len = 80_000 + 2_000 + 20_000 + 2_000 + 60_000
    assert side_length(SIDE_OPS) == side_len == 164_000
    for run in built.scenarios:
        side, doms = _side(run), _dominators(run)
        for layer in range(3):
            ops = side[3 * layer : 3 * layer + 3]
            dom = doms[layer]
            assert dom.start_ns < ops[0].start_ns and ops[-1].end_ns < dom.end_ns
            assert ops[-1].end_ns - ops[0].start_ns == side_len
    plan = built.expected.plan()
    assert plan.overlap_pct == side_len / min(side_len, 300_000) == 1.0 and plan.verdict == "real"


def test_fake_layers_have_a_cast_barrier_and_fork_join_events() -> None:
    built = scenarios.fake_dual_stream(runs=1, layers=2)
    run = built.scenarios[0]
    side, doms = _side(run), _dominators(run)
    casts = [k for k in run.kernels if op_type_of(k.name) == "Cast"]
    for layer in range(2):
        side_end = side[3 * layer + 2].end_ns
        assert casts[layer].start_ns == side_end + 1_500  # right after the side window
        assert doms[layer].start_ns == casts[layer].end_ns + 1_800
        assert casts[layer].stream_id == 2
        waits = [
            t
            for t in run.tasks
            if t.kind == "EVENT_WAIT_SQE"
            and t.stream_id == 2
            and t.start_ns <= side[3 * layer].start_ns
            and t.end_ns >= side_end
        ]
        assert len(waits) == 1  # the main stream idles on a wait spanning the side window
    kinds = {t.kind for t in run.tasks}
    assert {"EVENT_RECORD_SQE", "EVENT_WAIT_SQE"} <= kinds
    plan = built.expected.plan()
    assert (plan.overlap_pct, plan.verdict, plan.barrier) == (0.0, "fake", "Cast")


def test_partial_fraction_is_exact() -> None:
    built = scenarios.partial_dual_stream(fraction=0.25, runs=1, layers=2)
    run = built.scenarios[0]
    side, doms = _side(run), _dominators(run)
    overlap = side[2].end_ns - doms[0].start_ns
    assert overlap == 41_000 and overlap / 164_000 == 0.25
    assert built.expected.plan().overlap_pct == 0.25 and built.expected.plan().verdict == "partial"
    # interval sets: 41 us per layer of side busy time 160 us per layer
    pair = built.expected.stream_pairs[0]
    assert pair.overlap_ns == 2 * 41_000 and pair.overlap_pct == (2 * 41_000) / (2 * 160_000)


def test_warm_cold_runs_flip_when_cold_runs_are_kept() -> None:
    built = scenarios.warm_cold_runs()
    plan = built.expected.plan()
    assert plan.per_run == (0.0, 0.0, 0.45, 0.9, 0.9)
    assert plan.overlap_pct == statistics.median([0.45, 0.9, 0.9]) == 0.9 and plan.verdict == "real"
    assert plan.all_runs_overlap_pct == 0.45  # partial: keeping the cold runs flips the verdict
    ends = [s.end_ns() for s in built.scenarios]
    assert ends == sorted(ends)


def test_two_rank_job_has_a_real_and_a_fake_rank() -> None:
    built = scenarios.two_rank_job()
    assert [len(built.runs(rank)) for rank in (0, 1)] == [5, 5]
    assert (built.expected.plan(rank=0).verdict, built.expected.plan(rank=1).verdict) == (
        "real",
        "fake",
    )
    assert all(len(s.communication) == 1 for s in built.scenarios)
    assert {s.device for s in built.runs(1)} == {1}


def test_level0_event_wait_spans_the_dominator_on_the_side_stream() -> None:
    built = scenarios.level0_event_wait(runs=1, layers=1)
    run = built.scenarios[0]
    (dom,) = _dominators(run)
    spanning = [
        t
        for t in run.tasks
        if t.stream_id == 3
        and t.kind == "EVENT_WAIT_SQE"
        and t.start_ns < dom.start_ns
        and t.end_ns == dom.end_ns
    ]
    assert len(spanning) == 1 and built.variant.level == "Level0"
    assert (
        built.expected.plan().verdict == "fake" and built.expected.stream_pairs[0].overlap_ns == 0
    )


def test_touching_windows_touch_exactly_and_float64_would_overlap() -> None:
    built = scenarios.touching_windows(runs=2, layers=3)
    for run in built.scenarios:
        side, doms = _side(run), _dominators(run)
        for layer in range(3):
            last = side[3 * layer + 2]
            assert last.end_ns == doms[layer].start_ns
            start_text, dur_text = fmt.us3(last.start_ns), fmt.us_repr(last.duration_ns)
            assert float(start_text) + float(dur_text) > float(fmt.us3(doms[layer].start_ns))
    assert built.expected.plan().overlap_pct == 0.0


def test_core_limit_scenario_counts() -> None:
    built = scenarios.core_limits(runs=2, layers=2)
    exp = built.expected
    # per layer: GateUp 20>12 (aic), SwiGlu 48>24 (aiv), QuantMatmul 20>12 and 40>24 = 4
    assert len(exp.violations) == 4 * 2 * 2
    assert {(v.accelerator_core, v.kind, v.blocks_field) for v in exp.violations} == {
        ("AI_CORE", "aicore", "block_num"),
        ("AI_VECTOR_CORE", "vectorcore", "block_num"),
        ("MIX_AIC", "aicore", "block_num"),
        ("MIX_AIC", "vectorcore", "mix_block_num"),
    }
    assert len(exp.warnings) == 1 * 2 * 2 and exp.warnings[0].accelerator_core == "MIX_AIV"
    assert len(exp.exempt) == 2 and exp.limit_core == (12, 24) and exp.device_cores == (24, 48)
    gate_up = [c for c in exp.contention if c.kind == "aicore" and c.demand == 24 + 20]
    assert len(gate_up) == 2 * 2 * 2  # GateUp and QuantMatmul, both aic 20, per layer and run
    # per layer: aicore GateUp, QuantMatmul, Down (24 + 12); vectorcore SwiGlu (48 + 48),
    # QuantMatmul (48 + 40), MIX_AIV Dequant (48 + 8, its Block Num is the AIV count)
    assert len(exp.contention) == 6 * 2 * 2
    assert sorted({(c.kind, c.demand) for c in exp.contention}) == [
        ("aicore", 24 + 12),
        ("aicore", 24 + 20),
        ("vectorcore", 48 + 8),
        ("vectorcore", 48 + 40),
        ("vectorcore", 48 + 48),
    ]
    assert exp.plan().verdict == "real"


def test_not_split_keeps_the_shared_expert_on_the_main_stream() -> None:
    built = scenarios.not_split(runs=1, layers=2)
    assert {k.stream_id for k in built.scenarios[0].kernels} == {2}
    assert (
        built.expected.plan().verdict == "not-split" and built.expected.plan().overlap_pct is None
    )


def test_expected_busy_time_is_the_sum_of_serial_kernels() -> None:
    built = scenarios.real_dual_stream(runs=1, layers=2)
    run = built.scenarios[0]
    for stream in built.expected.streams:
        mine = [k for k in run.kernels if k.stream_id == stream.stream_id]
        assert stream.kernels == len(mine) and stream.busy_ns == sum(k.duration_ns for k in mine)
    side = next(s for s in built.expected.streams if s.stream_id == 3)
    assert side.busy_ns == 2 * (80_000 + 20_000 + 60_000)


def test_profiler_metadata_carries_the_scenario_as_add_metadata_entries(tmp_path: Path) -> None:
    # torch_npu writes the ENV_VARIABLES block and, at top level, every
    # prof.add_metadata(key, value) string: the generator names its scenario there
    from synth import scenarios as built_in

    built = built_in.real_dual_stream()
    result = write_result_dir(built.scenarios[0], tmp_path)
    meta = json.loads((result / "profiler_metadata.json").read_text())
    assert set(meta["ENV_VARIABLES"]) >= {"ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_LAUNCH_BLOCKING"}
    assert meta["overlap_check_scenario"] == built.scenarios[0].name
    assert meta["rank"] == str(built.scenarios[0].rank)
