"""The readers on real Ascend captures (../shared/real-profiles, skipped when absent).

Every expected figure is computed here a second way, with the csv / json /
sqlite3 modules, Decimal and a plain-Python interval union, and also written
out literally (values checked by hand against the files).
"""

from __future__ import annotations

import csv
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from measure_tables import SCHEMA, helper_streams, kernel_modules

from overlap_check.model import Capture
from overlap_check.model.intervals import union_length
from overlap_check.model.selection import restricted_side_expr
from overlap_check.model.table import compute_kernels
from overlap_check.readers import load
from overlap_check.readers.modules import module_scopes, with_modules

pytestmark = pytest.mark.real
SCHEMA_COLUMNS = list(SCHEMA)

OUT = "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"


def ns(text: str) -> int:
    """µs text → ns with Decimal (the test's own parser; half-even like the reader's)."""
    return int((Decimal(text.strip().strip('"').strip()) * 1000).to_integral_value())


def plain_union(intervals: list[tuple[int, int]]) -> int:
    total, current = 0, None
    for start, end in sorted(intervals):
        if current is None or start > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = [start, end]
        else:
            current[1] = max(current[1], end)
    return total + (current[1] - current[0] if current is not None else 0)


def by_stream(intervals: list[tuple[int, int, int]]) -> dict[int, tuple[int, int]]:
    """(stream, start, end) → {stream: (kernels, busy ns)}."""
    grouped: dict[int, list[tuple[int, int]]] = {}
    for stream, start, end in intervals:
        grouped.setdefault(stream, []).append((start, end))
    return {s: (len(v), plain_union(v)) for s, v in grouped.items()}


def streams_of(capture: Capture) -> dict[int, tuple[int, int]]:
    """What the reader gives: {stream: (kernels, busy ns via intervals.union_length)}."""
    kernels = compute_kernels(capture.kernels)
    return {
        int(stream): (group.height, union_length(group["start_ns"], group["end_ns"]))
        for (stream,), group in kernels.group_by("stream_id")
    }


def interval(
    row: list[str], col: dict[str, int], start: str = "Start Time(us)", dur: str = "Duration(us)"
) -> tuple[int, int]:
    begin = ns(row[col[start]])
    return begin, begin + ns(row[col[dur]])


def hardware_pids(events: list[dict[str, Any]]) -> set[Any]:
    """The pids of the trace's ``Ascend Hardware`` processes."""
    return {
        e["pid"]
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "process_name"
        and e["args"]["name"] == "Ascend Hardware"
    }


def csv_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def test_level1_text(real_profiles: Path) -> None:
    root = real_profiles / "torch_npu-level1-text"
    header, rows = csv_rows(root / OUT / "kernel_details.csv")
    col = {name: i for i, name in enumerate(header)}
    expected = by_stream(
        [
            (int(r[col["Stream ID"]]), *interval(r, col))
            for r in rows
            if r[col["Accelerator Core"]] != "HCCL"
        ]
    )
    assert expected == {2: (185, 8_868_217), 3: (2, 5_520)}
    (capture,) = load(root)
    assert streams_of(capture) == expected
    assert capture.rank == 0
    assert capture.level == "Level1"
    assert capture.source == "kernel_details.csv"
    assert capture.stream_source is None
    assert capture.capture_time_ns == 1736408884023552840  # end_info.collectionTimeEnd
    comm = capture.kernels.filter(pl.col("is_communication"))
    hccl_rows = sum(1 for r in rows if r[col["Accelerator Core"]] == "HCCL")
    assert comm.height == hccl_rows == 4
    assert comm["stream_id"].null_count() == 4  # communication is never a stream
    assert capture.skipped_rows == 0


def test_legacy_2023_with_a_malformed_row(real_profiles: Path) -> None:
    root = real_profiles / "torch_npu-2023-legacy"
    header, rows = csv_rows(root / OUT / "kernel_details.csv")
    # the row with a field missing, found by field count; line = index + 2 (header is line 1)
    short = [i + 2 for i, r in enumerate(rows) if len(r) != len(header)]
    assert short == [17]
    col = {name: i for i, name in enumerate(header)}
    good = [r for r in rows if len(r) == len(header)]
    expected = by_stream(
        [
            (int(r[col["Stream ID"]]), *interval(r, col))
            for r in good
            if r[col["Accelerator Core"]] != "HCCL"
        ]
    )
    assert expected == {16: (12, 21_641_354), 17: (4, 5_489_232)}
    (capture,) = load(root)
    assert streams_of(capture) == expected
    assert capture.skipped_rows == 1
    assert capture.skipped_lines == (17,)
    assert capture.skipped_file == str(root / OUT / "kernel_details.csv")
    assert capture.level == "Level1"
    # the 4-decimal duration of ZerosLike, 496.8508 µs = 496850.8 ns → 496851 ns
    zeros = capture.kernels.filter(pl.col("name") == "ZerosLike")
    assert (zeros["end_ns"] - zeros["start_ns"]).to_list() == [496_851]


def test_level0_text_takes_streams_from_the_trace(real_profiles: Path) -> None:
    root = real_profiles / "torch_npu-level0-text"
    events = json.loads((root / OUT / "trace_view.json").read_text())
    hardware = hardware_pids(events)
    # Task types on the hardware threads of this file: AI_CORE, MIX_AIV, DSA_SQE are
    # kernels; PCIE_DMA_SQE, SDMA(_SQE), EVENT_*_SQE, Write Value, Notify Wait,
    # PLACE_HOLDER_SQE are not.
    kernel_types = {"AI_CORE", "MIX_AIV", "DSA_SQE"}
    stream_of_start = {
        e["ts"]: e["tid"]  # tid == N of the "Stream N" thread in this file
        for e in events
        if e.get("pid") in hardware
        and e.get("ph") == "X"
        and e["args"]["Task Type"] in kernel_types
    }
    header, rows = csv_rows(root / OUT / "kernel_details.csv")
    assert "Stream ID" not in header
    col = {name: i for i, name in enumerate(header)}
    expected = by_stream(
        [
            (stream_of_start[r[col["Start Time(us)"]].strip()], *interval(r, col))
            for r in rows
            if r[col["Start Time(us)"]].strip() in stream_of_start
        ]
    )
    assert expected == {2: (185, 8_821_794), 3: (2, 5_660)}
    (capture,) = load(root)
    assert capture.level == "Level0"
    assert capture.source == "kernel_details.csv"
    assert capture.stream_source == "trace_view.json"
    assert streams_of(capture) == expected
    # every kernel row found its stream; the 4 HCCL rows stay communication
    assert capture.kernels.filter(~pl.col("is_communication"))["stream_id"].null_count() == 0
    assert capture.kernels.filter(pl.col("is_communication")).height == 4


def test_level0_db(real_profiles: Path) -> None:
    root = real_profiles / "torch_npu-level0-db"
    db = root / OUT / "ascend_pytorch_profiler_0.db"
    con = sqlite3.connect(db)
    try:
        tasks = con.execute(
            "SELECT t.streamId, t.startNs, t.endNs FROM TASK t "
            "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId"
        ).fetchall()
        comm_ops = con.execute("SELECT COUNT(*) FROM COMMUNICATION_OP").fetchone()[0]
    finally:
        con.close()
    expected = by_stream(tasks)
    assert expected == {2: (185, 8_838_450), 3: (2, 5_460)}
    (capture,) = load(root)
    assert capture.source == "db"
    assert capture.level == "Level0"
    assert capture.rank == 0
    assert streams_of(capture) == expected
    assert capture.kernels.filter(pl.col("is_communication")).height == comm_ops == 4
    # stream 4 (Notify Wait / SDMA / Write Value / EVENT_*) has no compute task: no stream 4
    assert 4 not in streams_of(capture)


def test_msprof_prof_dir(real_profiles: Path) -> None:
    (prof,) = (real_profiles / "msprof-cli").glob("PROF_*")
    op_summary = next((prof / "mindstudio_profiler_output").glob("op_summary_*.csv"))
    header, rows = csv_rows(op_summary)
    assert header[0] == "Device_id" and "Block Num" in header  # the newest header
    col = {name: i for i, name in enumerate(header)}
    expected = by_stream(
        [
            (
                int(r[col["Stream ID"]]),
                *interval(r, col, "Task Start Time(us)", "Task Duration(us)"),
            )
            for r in rows
        ]
    )
    assert expected[46][0] == 3
    info = json.loads((prof / "device_0" / "info.json.0").read_text())["DeviceInfo"][0]
    assert (info["ai_core_num"], info["aiv_num"]) == (20, 40)
    (capture,) = load(prof)
    assert capture.source == "op_summary"
    assert streams_of(capture) == expected
    assert capture.device == 0
    assert capture.device_cores is not None
    assert (capture.device_cores.aicore, capture.device_cores.vectorcore) == (20, 40)
    assert capture.device_cores.source == "info.json"
    assert capture.device_cores.detail == str(prof / "device_0" / "info.json.0")
    by_start = sorted(rows, key=lambda r: ns(r[col["Task Start Time(us)"]]))
    assert capture.kernels["block_num"].to_list() == [int(r[col["Block Num"]]) for r in by_start]
    assert capture.kernels["mix_block_num"].to_list() == [
        int(r[col["Mix Block Num"]]) for r in by_start
    ]
    assert capture.kernels["accelerator_core"].to_list() == [
        "AI_VECTOR_CORE",
        "AI_VECTOR_CORE",
        "MIX_AIC",
    ]


def test_loose_quoted_tab_kernel_details(real_profiles: Path) -> None:
    path = real_profiles / "loose-files" / "kernel_details-2025-quoted-tab.csv"
    raw = path.read_text()
    assert '"1736413971558972.912\t"' in raw  # quoted, TAB inside the quotes
    header, rows = csv_rows(path)
    col = {name: i for i, name in enumerate(header)}
    expected = by_stream([(int(r[col["Stream ID"]]), *interval(r, col)) for r in rows])
    assert expected == {2: (29, 8_092_001)}
    (capture,) = load(path)
    assert streams_of(capture) == expected
    assert 1736413971558972912 in capture.kernels["start_ns"].to_list()
    mix = capture.kernels.filter(pl.col("accelerator_core") == "MIX_AIC")
    assert mix.height > 0
    assert set(zip(mix["block_num"], mix["mix_block_num"], strict=True)) == {(20, 40)}


def test_loose_2024_single_stream_trace(real_profiles: Path) -> None:
    path = real_profiles / "loose-files" / "trace_view-2024-single-stream.json"
    events = json.loads(path.read_text())
    hardware = [e for e in events if e.get("pid") == 800 and e.get("ph") == "X"]
    assert {e["args"]["Task Type"] for e in hardware} == {"Other", "AI_CPU"}
    # "Other" tasks are kernels, except the two named MEMCPY_ASYNC
    kernels = [e for e in hardware if e["name"] != "MEMCPY_ASYNC"]
    expected = by_stream(
        [(e["tid"], ns(e["ts"]), ns(e["ts"]) + round(e["dur"] * 1000)) for e in kernels]
    )
    assert expected == {3: (274, 1_788_267)}
    (capture,) = load(path)
    assert capture.source == "trace_view.json"
    assert streams_of(capture) == expected


def test_910a_trace_alone_gives_the_kernels_of_kernel_details(
    real_profiles: Path, tmp_path: Path
) -> None:
    # The 910A (2024-09) trace types AI_CORE kernels and event / copy / communication
    # tasks alike as `Other`: only the names tell them apart. Read ONLY the trace.
    out = real_profiles / "torch_npu-910A-level0" / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    header, rows = csv_rows(out / "kernel_details.csv")
    col = {name: i for i, name in enumerate(header)}
    compute = [r for r in rows if r[col["Accelerator Core"]] != "HCCL"]
    assert len(compute) == 345
    events = json.loads((out / "trace_view.json").read_text())
    hardware = hardware_pids(events)
    tasks = [e for e in events if e.get("pid") in hardware and e.get("ph") == "X"]
    stream_of_start = {e["ts"]: e["tid"] for e in tasks}  # tid == N of "Stream N" here
    # The right answer, with kernel_details' own durations (PROVENANCE.md).
    expected_csv = by_stream(
        [(stream_of_start[r[col["Start Time(us)"]].strip()], *interval(r, col)) for r in compute]
    )
    assert expected_csv == {1: (343, 9_755_754), 2: (2, 205_022)}
    # The same kernels in the trace, with the trace's float durations (4 ns less in all).
    starts = {r[col["Start Time(us)"]].strip() for r in compute}
    kernels = [e for e in tasks if e["ts"] in starts]
    expected = by_stream(
        [(e["tid"], ns(e["ts"]), ns(e["ts"]) + round(e["dur"] * 1000)) for e in kernels]
    )
    assert expected == {1: (343, 9_755_750), 2: (2, 205_022)}
    # ... and every other task is one of the non-kernel names
    assert {e["name"] for e in tasks if e["ts"] not in starts} == {
        "MEMCPY_ASYNC",
        "MemcopyAsync",
        "EVENT_RECORD",
        "EVENT_WAIT",
        "NOTIFY_RECORD",
        "NOTIFY_WAIT",
        "REDUCE_ASYNC_V2",
    }
    trace = tmp_path / "trace_view.json"
    trace.write_bytes((out / "trace_view.json").read_bytes())
    (capture,) = load(trace)
    assert capture.source == "trace_view.json"
    assert streams_of(capture) == expected
    names = sorted(compute_kernels(capture.kernels)["name"].to_list())
    assert names == sorted(r[col["Name"]] for r in compute)
    # no overlap between the two compute streams
    table = compute_kernels(capture.kernels)
    one, two = (table.filter(pl.col("stream_id") == s) for s in (1, 2))
    both = [(int(a), int(b)) for a, b in zip(one["start_ns"], one["end_ns"], strict=True)] + [
        (int(a), int(b)) for a, b in zip(two["start_ns"], two["end_ns"], strict=True)
    ]
    assert plain_union(both) == 9_755_750 + 205_022
    # stream 2 ran only the two AI_CPU masks: a helper stream, never judged
    assert {*two["accelerator_core"]} == {"AI_CPU"}
    assert helper_streams(capture.kernels, main_stream=1) == (2,)


def test_the_whole_folder_at_once(real_profiles: Path) -> None:
    captures = load(real_profiles)
    # the PyTorch profiler traces of kineto/ are captures too (tests/test_kineto.py)
    assert sum(c.source == "kineto" for c in captures) == 4
    captures = [c for c in captures if c.source != "kineto"]
    # 5 result dirs + the PROF dir; loose files are not exact-named output files
    assert len(captures) == 6
    # by rank, then by capture time; the PROF dir's rank is unknown
    assert [c.rank for c in captures] == [0, 0, 0, 0, 1, None]
    times = [c.capture_time_ns for c in captures if c.rank == 0]
    assert times == sorted(times)  # 2023 legacy first, then the three 2025-01 captures
    assert Path(captures[0].path).parent.name == "torch_npu-2023-legacy"
    assert Path(captures[4].path).parent.name == "torch_npu-910A-level0"


def test_level1_module_scope_of_each_kernel(real_profiles: Path) -> None:
    root = real_profiles / "torch_npu-level1-text"
    trace = root / OUT / "trace_view.json"
    events = json.loads(trace.read_text())
    # The test's own way: every torch_to_npu flow end on a hardware stream, its start,
    # and the latest-starting nn.Module call on that host thread that contains it.
    hardware = hardware_pids(events)
    starts = {e["id"]: e for e in events if e.get("ph") == "s" and e.get("name") == "torch_to_npu"}
    calls = [e for e in events if e.get("ph") == "X" and e["name"].startswith("nn.Module: ")]
    expected: dict[tuple[int, int], str] = {}
    for f in events:
        if f.get("ph") != "f" or f.get("name") != "torch_to_npu" or f["pid"] not in hardware:
            continue
        s = starts[f["id"]]
        at = ns(s["ts"])
        inside = [
            c
            for c in calls
            if (c["pid"], c["tid"]) == (s["pid"], s["tid"])
            and ns(c["ts"]) <= at <= ns(c["ts"]) + round(c["dur"] * 1000)
        ]
        if inside:
            innermost = max(inside, key=lambda c: ns(c["ts"]))
            expected[(f["tid"], ns(f["ts"]))] = innermost["name"][len("nn.Module: ") :]
    assert len(expected) == 52
    got = kernel_modules(trace)
    assert {(s, t): f"{m}_{i}" for s, t, m, i in got.select(SCHEMA_COLUMNS).iter_rows()} == expected
    (capture,) = load(root)
    assert with_modules(capture.kernels, got).height == capture.kernels.height
    # module:Conv2d: the kernels launched inside a Conv2d call, its instance beside them
    table = with_modules(capture.kernels, module_scopes(trace, ["Conv2d"]))
    assert table.height == capture.kernels.height  # a left join: no kernel lost or doubled
    conv0 = table.filter(
        restricted_side_expr("module:Conv2d", None, None) & (pl.col("module:Conv2d") == 0)
    )
    assert conv0["name"].to_list() == [
        "trans_TransData_0",
        "trans_TransData_1",
        "Conv2D1",
        "trans_TransData_2",
    ]
