"""Readers on hand-written files: every header variant, value quirk, source kind, Level0 streams.

Files are written byte for byte here (no generator), so each expected figure is
the arithmetic on the text in the test.
"""

from __future__ import annotations

import json
import sqlite3
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from overlap_check.model.errors import NoStreamDataError
from overlap_check.model.table import KERNEL_COLUMNS, compute_kernels
from overlap_check.readers import load
from overlap_check.readers.kernel_csv import read_kernel_csv
from overlap_check.readers.numbers import us_float_to_ns, us_text_to_ns

T0 = 1736408883704643  # µs, an epoch from the real Level1 capture


def ns_of(texts: list[str]) -> list[int | None]:
    return pl.select(us_text_to_ns(pl.lit(pl.Series(texts, dtype=pl.String)))).to_series().to_list()


def write(path: Path, lines: list[str], *, crlf: bool = True, bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    end = "\r\n" if crlf else "\n"
    text = end.join(lines) + end
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def row(header: str, **values: str) -> str:
    """A CSV line for ``header``: named fields from ``values`` (keys: header names with
    spaces/brackets replaced by ``_``), the rest ``N/A``-like defaults."""
    defaults = {
        "Step Id": "50",
        "Model ID": "4294967295",
        "HF32 Eligible": "NO",
        "OP State": "dynamic",
    }
    fields = []
    for name in header.split(","):
        key = "".join(ch if ch.isalnum() else "_" for ch in name)
        fields.append(values.get(key, defaults.get(name, "N/A")))
    return ",".join(fields)


# --------------------------------------------------------------------------- exact times


def test_float64_loses_the_last_digit_and_the_reader_does_not() -> None:
    text = "1736408883704643.213"
    via_float = round(float(text) * 1000)
    assert via_float != 1_736_408_883_704_643_213  # float64 has ~16 significant digits
    assert ns_of([text]) == [1_736_408_883_704_643_213]


def test_time_text_variants() -> None:
    texts = [
        "1736408883704643.212\t",  # TAB after the value (2024+)
        '"1736413971558972.912\t"',  # quotes that survived in the value
        "1695115378713661",  # 2023: no decimals
        "1695115378715400.2",  # 2023: one decimal
        "53.741",
        "N/A",
        "",
        "abc",
    ]
    assert ns_of(texts) == [
        1736408883704643 * 1000 + 212,
        1736413971558972 * 1000 + 912,
        1695115378713661 * 1000,
        1695115378715400 * 1000 + 200,
        53 * 1000 + 741,
        None,
        None,
        None,
    ]


def test_four_decimal_durations_round_half_to_even() -> None:
    # 2023 files: 496.8508 µs = 496850.8 ns → 496851; exact halves go to the even ns.
    assert ns_of(["496.8508", "496.8505", "496.8515", "0.0005", "0.0015"]) == [
        496851,
        496850,
        496852,
        0,
        2,
    ]
    # the trace's float dur uses the same rule: round(dur * 1000)
    assert us_float_to_ns([6.280125, 0.0025]).to_list() == [round(6.280125 * 1000), round(2.5)]


@given(
    whole=st.integers(min_value=0, max_value=2 * 10**15),
    fraction=st.text(alphabet="0123456789", min_size=0, max_size=7),
)
def test_time_parsing_matches_decimal_half_even(whole: int, fraction: str) -> None:
    text = f"{whole}.{fraction}" if fraction else str(whole)
    expected = (Decimal(text) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
    assert ns_of([text + "\t"]) == [int(expected)]


# --------------------------------------------------------------------------- kernel_details headers

METRICS = "aicore_time(us),aic_total_cycles,aiv_time(us)"
SHAPES = (
    "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats"
)
LEVEL1_HEADERS = {
    "2023": "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),"
    "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,"
    f"{SHAPES},Context ID,{METRICS}",
    "2025-01": "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
    "Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,"
    f"{SHAPES},Context ID,{METRICS}",
    "2025-11": "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
    "Start Time(us),Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,"
    f"{SHAPES},Context ID,{METRICS}",
    "2026": "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
    "Start Time(us),Duration(us),Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,"
    f"{SHAPES},Context ID,{METRICS}",
    "no-step": "Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
    "Start Time(us),Duration(us),Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,"
    f"{SHAPES},Context ID",
}


def level1_lines(header: str, comm_core: str = "HCCL") -> list[str]:
    """Three kernels and one comm op, deliberately not in start order."""
    shapes = {"Input_Shapes": '"""32,3,224,224"""', "Output_Shapes": '"""1;2;"""'}
    return [
        header,
        row(header, Device_id="0", Task_ID="12", Stream_ID="3", Name="SharedExpert_Mul",
            Type="Mul", Accelerator_Core="AI_VECTOR_CORE",
            Start_Time_us_=f"{T0}.500\t", Duration_us_="2.000", Block_Dim="40", Block_Num="40",
            Mix_Block_Dim="0", Mix_Block_Num="0", Context_ID="N/A", aicore_time_us_="0.0",
            **shapes),
        row(header, Device_id="0", Task_ID="11", Stream_ID="2",
            Name="aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul", Type="GroupedMatmul",
            Accelerator_Core="MIX_AIC", Start_Time_us_=f"{T0}.000\t", Duration_us_="10.250",
            Block_Dim="20", Block_Num="20", Mix_Block_Dim="40", Mix_Block_Num="40", **shapes),
        row(header, Device_id="0", Name="hcom_allReduce__868_0_1", Type="hcom_allReduce_",
            Accelerator_Core=comm_core, Start_Time_us_=f"{T0 + 20}.000\t",
            Duration_us_="5.000", Block_Dim="0", Block_Num="0"),
        row(header, Step_Id="", Device_id="0", Task_ID="13", Stream_ID="2", Name="Cast",
            Type="Cast", Accelerator_Core="AI_CORE", Start_Time_us_=f'"{T0 + 11}.000\t"',
            Duration_us_="1", Block_Dim="8", Block_Num="8", Mix_Block_Dim="0",
            Mix_Block_Num="0"),
    ]  # fmt: skip


@pytest.mark.parametrize("version", sorted(LEVEL1_HEADERS))
@pytest.mark.parametrize("crlf", [True, False])
def test_level1_header_variants(tmp_path: Path, version: str, crlf: bool) -> None:
    header = LEVEL1_HEADERS[version]
    path = write(tmp_path / "kernel_details.csv", level1_lines(header), crlf=crlf)
    (capture,) = load(path)
    table = capture.kernels
    assert table.columns == list(KERNEL_COLUMNS)
    assert capture.source == "kernel_details.csv"
    assert capture.skipped_rows == 0
    # sorted by start: GroupedMatmul (T0.000), Mul (T0.500), Cast (T0+11), comm (T0+20)
    assert table["name"].to_list() == [
        "aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul",
        "SharedExpert_Mul",
        "Cast",
        "hcom_allReduce__868_0_1",
    ]
    base = T0 * 1000
    assert table["start_ns"].to_list() == [base, base + 500, base + 11_000, base + 20_000]
    assert table["end_ns"].to_list() == [
        base + 10_250,
        base + 500 + 2_000,
        base + 11_000 + 1_000,
        base + 20_000 + 5_000,
    ]
    assert table["stream_id"].to_list() == [2, 3, 2, None]
    assert table["is_communication"].to_list() == [False, False, False, True]
    assert table["task_id"].to_list() == [11, 12, 13, None]
    assert table["block_num"].to_list() == [20, 40, 8, 0]
    assert table["mix_block_num"].to_list() == [40, 0, 0, None]
    assert table["accelerator_core"].to_list() == ["MIX_AIC", "AI_VECTOR_CORE", "AI_CORE", "HCCL"]
    has_step = version != "no-step"
    assert table["step"].to_list() == ([50, 50, None, 50] if has_step else [None] * 4)
    has_device = "Device_id" in header
    assert table["device"].to_list() == ([0] * 4 if has_device else [None] * 4)


def test_communication_core_named_communication(tmp_path: Path) -> None:
    header = LEVEL1_HEADERS["2025-11"]
    path = write(tmp_path / "kernel_details.csv", level1_lines(header, "COMMUNICATION"))
    (capture,) = load(path)
    comm = capture.kernels.filter(pl.col("is_communication"))
    assert comm["name"].to_list() == ["hcom_allReduce__868_0_1"]
    assert comm["stream_id"].to_list() == [None]
    # no N/A stream anywhere: streams are 2 and 3 only
    assert sorted(compute_kernels(capture.kernels)["stream_id"].unique().to_list()) == [2, 3]


def test_bom_and_crlf(tmp_path: Path) -> None:
    header = LEVEL1_HEADERS["2025-01"]
    path = write(tmp_path / "kernel_details.csv", level1_lines(header), bom=True)
    (capture,) = load(path)
    assert capture.kernels.height == 4
    assert capture.kernels["step"].null_count() == 1  # the BOM did not hide "Step Id"


def test_op_summary_header_names(tmp_path: Path) -> None:
    header = (
        "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
        "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num,"
        f"HF32 Eligible,{SHAPES},Context ID,aicore_time(us)"
    )
    lines = [
        header,
        "0,4294967295,0,46,aclnnInplaceOne_OnesLikeAiCore_OnesLike,OnesLike,dynamic,"
        f'AI_VECTOR_CORE,{T0}.513\t,4.800,0,8,0,NO,"""512,16""",DT_BF16,ND,"""512,16""",DT_BF16,'
        "ND,N/A,0.0",
        "0,4294967295,2,46,GroupedMatmul,GroupedMatmul,dynamic,MIX_AIC,"
        f'{T0 + 5}.000\t,25.860,857.200000,20,40,NO,"""8,2048""",DT_BF16,ND,"""8""",DT_BF16,ND,'
        "N/A,1.0",
    ]  # fmt: skip
    path = write(tmp_path / "op_summary_20260823165421.csv", lines, crlf=False)
    (capture,) = load(path)
    assert capture.source == "op_summary"
    table = capture.kernels
    assert table["name"].to_list() == ["aclnnInplaceOne_OnesLikeAiCore_OnesLike", "GroupedMatmul"]
    assert table["op_type"].to_list() == ["OnesLike", "GroupedMatmul"]
    assert table["accelerator_core"].to_list() == ["AI_VECTOR_CORE", "MIX_AIC"]
    assert table["start_ns"].to_list() == [T0 * 1000 + 513, (T0 + 5) * 1000]
    assert table["end_ns"].to_list() == [T0 * 1000 + 513 + 4_800, (T0 + 5) * 1000 + 25_860]
    assert table["block_num"].to_list() == [8, 20]
    assert table["mix_block_num"].to_list() == [0, 40]


def test_any_number_of_metric_columns_and_shapes_with_quotes(tmp_path: Path) -> None:
    metrics = ",".join(f"m{i}" for i in range(60))
    header = LEVEL1_HEADERS["2025-01"].replace(METRICS, metrics)
    lines = level1_lines(header)
    (capture,) = load(write(tmp_path / "kernel_details.csv", lines))
    assert capture.kernels.height == 4
    assert capture.skipped_rows == 0


# --------------------------------------------------------------------------- Level0 headers

LEVEL0_HEADERS = {
    "2025-01": "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
    "Block Dim",
    "7.x": "Step Id,Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim",
    "26.x": "Device_id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
    f"Block Num,{SHAPES}",
}


def level0_lines(header: str) -> list[str]:
    return [
        header,
        row(header, Device_id="0", Name="Conv2D1", Type="N/A", Accelerator_Core="N/A",
            Start_Time_us_=f"{T0}.100\t", Duration_us_="3.000", Wait_Time_us_="0",
            Block_Dim="0", Block_Num="0"),
        row(header, Device_id="0", Name="hcom_allReduce__868_1_1", Accelerator_Core="HCCL",
            Start_Time_us_=f"{T0 + 1}.000\t", Duration_us_="9.000", Wait_Time_us_="0.0",
            Block_Dim="0", Block_Num="0"),
        row(header, Device_id="0", Name="SharedExpert_Mul", Type="N/A",
            Accelerator_Core="N/A", Start_Time_us_=f"{T0 + 2}.000\t", Duration_us_="1.500",
            Wait_Time_us_="0", Block_Dim="0", Block_Num="0"),
    ]  # fmt: skip


def meta(pid: int, tid: int, kind: str, **args: str) -> dict[str, object]:
    """A trace metadata event (process_name / process_labels / thread_name)."""
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": args}


def complete(
    name: str, pid: int, tid: int, ts: str, dur: float, **args: object
) -> dict[str, object]:
    """A trace X event; ``args`` keys use ``_`` for spaces (``Task_Type`` → ``Task Type``)."""
    return {
        "ph": "X",
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": {key.replace("_", " "): value for key, value in args.items()},
    }


def hardware_trace(path: Path, tasks: list[tuple[int, str, str, float, str]]) -> Path:
    """trace_view.json with an Ascend Hardware process; tasks: (stream, name, ts, dur, type).

    Threads get tids unrelated to the stream ids (100 + stream) and a bit-packed
    pid, so only the thread_name metadata can tell the stream.
    """
    pid = (3016828 << 10) | (13 << 5) | 0
    events = [
        meta(pid, 0, "process_name", name="Ascend Hardware"),
        meta(pid, 0, "process_labels", labels="NPU"),
    ]
    for stream in sorted({t[0] for t in tasks}):
        events.append(meta(pid, 100 + stream, "thread_name", name=f"Stream {stream}"))
    for stream, name, ts, dur, task_type in tasks:
        events.append(
            complete(
                name, pid, 100 + stream, ts, dur,
                Model_Id=4294967295, Task_Type=task_type, Physic_Stream_Id=999, Task_Id=7,
            )
        )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(events))
    return path


LEVEL0_TRACE_TASKS = [
    (2, "EVENT_WAIT_SQE", f"{T0}.000", 0.1, "EVENT_WAIT_SQE"),
    (2, "Conv2D1", f"{T0}.100", 3.0, "AI_CORE"),
    (3, "SharedExpert_Mul", f"{T0 + 2}.000", 1.5, "AI_VECTOR_CORE"),
    (3, "MEMCPY_ASYNC", f"{T0 + 4}.000", 1.0, "PCIE_DMA_SQE"),
]


@pytest.mark.parametrize("version", sorted(LEVEL0_HEADERS))
def test_level0_streams_from_the_trace(tmp_path: Path, version: str) -> None:
    out = tmp_path / "run_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write(out / "kernel_details.csv", level0_lines(LEVEL0_HEADERS[version]))
    hardware_trace(out / "trace_view.json", LEVEL0_TRACE_TASKS)
    (capture,) = load(tmp_path / "run_ascend_pt")
    assert capture.level == "Level0"
    assert capture.source == "kernel_details.csv"
    assert capture.stream_source == "trace_view.json"
    table = capture.kernels
    assert table["name"].to_list() == ["Conv2D1", "hcom_allReduce__868_1_1", "SharedExpert_Mul"]
    # streams from the thread names (tid 102/103, args say 999: neither is used)
    assert table["stream_id"].to_list() == [2, None, 3]
    assert table["is_communication"].to_list() == [False, True, False]
    # times stay those of kernel_details
    assert table["end_ns"].to_list() == [
        T0 * 1000 + 100 + 3_000,
        (T0 + 1) * 1000 + 9_000,
        (T0 + 2) * 1000 + 1_500,
    ]


def test_level0_streams_from_task_time(tmp_path: Path) -> None:
    out = tmp_path / "run_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write(out / "kernel_details.csv", level0_lines(LEVEL0_HEADERS["2025-01"]))
    write(
        out / "task_time.csv",
        [
            "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)",
            f"0,N/A,EVENT_WAIT_SQE,2,1,0.100,{T0}.100\t,{T0}.200\t",
            f"0,Conv2D_1c45_high_performance_2100,AI_CORE,2,2,3.000,{T0}.100\t,{T0 + 3}.100\t",
            f"0,Mul_9f3e_1,AI_VECTOR_CORE,3,3,1.500,{T0 + 2}.000\t,{T0 + 3}.500\t",
        ],
    )  # fmt: skip
    (capture,) = load(tmp_path / "run_ascend_pt")
    assert capture.stream_source == "task_time"
    # matched by start only (binary kernel names differ from op names); the
    # EVENT_WAIT task at the same start as Conv2D1 was dropped as non-kernel first
    assert capture.kernels["stream_id"].to_list() == [2, None, 3]


def make_db(path: Path, *, block: str = "blockNum", mix: str = "mixBlockNum") -> Path:
    """A profiler db: 2 compute tasks, 2 non-kernel tasks, 1 comm op, 1 step, extras.

    Same kernels as :func:`level0_lines` (ns = µs text × 1000).
    """
    conv, mul = T0 * 1000 + 100, (T0 + 2) * 1000
    wait, memcpy, comm, step = T0 * 1000, (T0 + 4) * 1000, (T0 + 1) * 1000, (T0 - 1) * 1000
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(
        f"""
        CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
        INSERT INTO STRING_IDS VALUES (1,'Conv2D1'),(2,'SharedExpert_Mul'),(3,'N/A'),
            (4,'KERNEL_AICORE'),(5,'EVENT_WAIT'),(6,'MEMCPY_ASYNC'),(7,'hcom_allReduce__1'),
            (8,'Conv2D'),(9,'AI_CORE'),(10,'Mul'),(11,'AI_VECTOR_CORE');
        CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER,
            globalTaskId INTEGER, globalPid INTEGER, taskType INTEGER, contextId INTEGER,
            streamId INTEGER, taskId INTEGER, modelId INTEGER, depth INTEGER);
        INSERT INTO TASK VALUES
            ({conv}, {conv + 3000}, 1, 1, 10, 1, 4, 0, 2, 21, 4294967295, 0),
            ({wait}, {wait + 100}, 1, 2, 11, 1, 5, 0, 2, 22, 4294967295, 0),
            ({mul}, {mul + 1500}, 1, 3, 12, 1, 4, 0, 3, 23, 4294967295, 0),
            ({memcpy}, {memcpy + 1000}, 1, 4, 13, 1, 6, 0, 3, 24, 4294967295, 0);
        CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER PRIMARY KEY,
            {block} INTEGER, {mix} INTEGER, taskType INTEGER, opType INTEGER, opState INTEGER,
            hf32Eligible INTEGER, inputShapes INTEGER);
        INSERT INTO COMPUTE_TASK_INFO VALUES (1, 10, 24, 0, 9, 8, 3, 3, 3),
            (2, 12, 48, 0, 11, 10, 3, 3, 3);
        CREATE TABLE COMMUNICATION_OP (opName INTEGER, startNs INTEGER, endNs INTEGER,
            connectionId INTEGER, groupName INTEGER, opId INTEGER PRIMARY KEY, opType INTEGER);
        INSERT INTO COMMUNICATION_OP VALUES (7, {comm}, {comm + 9000}, 5, 3, 1, 3);
        CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);
        INSERT INTO STEP_TIME VALUES (50, {step}, {step + 4_000});
        CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);
        INSERT INTO RANK_DEVICE_MAP VALUES (3, 1);
        CREATE TABLE status_info (x TEXT);
        """
    )
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize(
    ("block", "mix"),
    [("blockNum", "mixBlockNum"), ("blockDim", "mixBlockDim"), ("block_dim", "mix_block_dim")],
)
def test_db_alone(tmp_path: Path, block: str, mix: str) -> None:
    path = make_db(tmp_path / "ascend_pytorch_profiler_3.db", block=block, mix=mix)
    (capture,) = load(path)
    assert capture.source == "db"
    assert capture.rank == 3  # RANK_DEVICE_MAP
    # the MEMCPY_ASYNC TASK row (no COMPUTE_TASK_INFO) is a copy row: stream 3, 1 µs
    copies = capture.kernels.filter(pl.col("is_copy"))
    assert copies.select("name", "stream_id", "start_ns", "end_ns").rows() == [
        ("MEMCPY_ASYNC", 3, (T0 + 4) * 1000, (T0 + 4) * 1000 + 1000)
    ]
    table = capture.kernels.filter(~pl.col("is_copy"))
    # EVENT_WAIT / MEMCPY tasks have no COMPUTE_TASK_INFO row: not kernels
    assert table["name"].to_list() == ["Conv2D1", "hcom_allReduce__1", "SharedExpert_Mul"]
    assert table["stream_id"].to_list() == [2, None, 3]
    assert table["is_communication"].to_list() == [False, True, False]
    assert table["start_ns"].to_list() == [T0 * 1000 + 100, (T0 + 1) * 1000, (T0 + 2) * 1000]
    assert (table["end_ns"] - table["start_ns"]).to_list() == [3000, 9000, 1500]
    assert table["block_num"].to_list() == [24, 0, 48]
    assert table["accelerator_core"].to_list() == ["AI_CORE", "COMMUNICATION", "AI_VECTOR_CORE"]
    assert table["op_type"].to_list() == ["Conv2D", None, "Mul"]  # comm opType id 3 = "N/A"
    assert table["device"].to_list() == [1, 1, 1]
    # step 50 spans [T0 - 1 µs, T0 + 3 µs]: all three start inside it
    assert table["step"].to_list() == [50, 50, 50]


def test_level0_streams_from_the_db(tmp_path: Path) -> None:
    out = tmp_path / "run_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write(out / "kernel_details.csv", level0_lines(LEVEL0_HEADERS["2025-01"]))
    make_db(out / "ascend_pytorch_profiler_0.db")
    hardware_trace(out / "trace_view.json", [(7, "Conv2D1", f"{T0}.100", 3.0, "AI_CORE")])
    (capture,) = load(tmp_path / "run_ascend_pt")
    # db before trace: cheaper and exact; and the db says stream 2, the trace 7
    assert capture.stream_source == "db"
    assert capture.kernels["stream_id"].to_list() == [2, None, 3]


def test_level0_unmatched_rows_are_noted(tmp_path: Path) -> None:
    out = tmp_path / "run_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write(out / "kernel_details.csv", level0_lines(LEVEL0_HEADERS["2025-01"]))
    hardware_trace(out / "trace_view.json", LEVEL0_TRACE_TASKS[:2])  # no SharedExpert_Mul task
    (capture,) = load(tmp_path / "run_ascend_pt")
    assert capture.kernels["stream_id"].to_list() == [2, None, None]
    assert any("1 of 2 kernel rows matched no task" in note for note in capture.notes)


def test_level0_without_any_stream_source_asks_for_level1(tmp_path: Path) -> None:
    path = write(tmp_path / "kernel_details.csv", level0_lines(LEVEL0_HEADERS["2025-01"]))
    with pytest.raises(NoStreamDataError) as caught:
        load(path)
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert str(path) in message
    assert "profiler_level=Level1" in message


def test_stream_matching_uses_name_when_two_tasks_share_a_start(tmp_path: Path) -> None:
    header = LEVEL0_HEADERS["2025-01"]
    lines = [
        header,
        row(header, Name="A", Start_Time_us_=f"{T0}.000\t", Duration_us_="1", Block_Dim="0"),
        row(header, Name="B", Start_Time_us_=f"{T0}.000\t", Duration_us_="2", Block_Dim="0"),
    ]
    out = tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    write(out / "kernel_details.csv", lines)
    hardware_trace(
        out / "trace_view.json",
        [(2, "A", f"{T0}.000", 1.0, "AI_CORE"), (3, "B", f"{T0}.000", 2.0, "AI_CORE")],
    )
    (capture,) = load(tmp_path / "r_ascend_pt")
    got = dict(zip(capture.kernels["name"], capture.kernels["stream_id"], strict=True))
    assert got == {"A": 2, "B": 3}


# --------------------------------------------------------------------------- trace reader


def test_trace_alone(tmp_path: Path) -> None:
    hw = 800  # a plain small pid, as in 2024 files
    comm = 3170820576
    host = 437675
    events = [
        meta(hw, 0, "process_name", name="Ascend Hardware"),
        meta(hw, 0, "process_labels", labels="NPU 1"),
        meta(hw, 3, "thread_name", name="Stream 3"),
        meta(comm, 0, "process_name", name="HCCL"),
        meta(comm, 0, "thread_name", name="Group 0 Communication"),
        meta(comm, 1, "thread_name", name="Plane 0"),
        meta(host, 0, "process_name", name="Python"),
        complete("ProfilerStep#7", host, host, f"{T0 - 10}.000", 100.0),
        # an "Other" typed kernel (old traces): a kernel
        complete("aclnnInplaceZero_ZerosLikeAiCore_ZerosLike", hw, 3, f"{T0}.204", 1.35,
                 Task_Type="Other", Stream_Id=3, Task_Id=279),
        # MEMCPY_ASYNC typed Other: not a kernel, by its name
        complete("MEMCPY_ASYNC", hw, 3, f"{T0 + 1}.000", 1.11,
                 Task_Type="Other", Stream_Id=3, Task_Id=280),
        complete("EVENT_RECORD_SQE", hw, 3, f"{T0 + 2}.000", 0.02,
                 Task_Type="EVENT_RECORD_SQE", Stream_Id=3),
        # a thread without thread_name: stream from args
        complete("aclnnCast_CastAiCpu_Cast", hw, 9, f"{T0 + 3}.000", 139.4186019897461,
                 Task_Type="AI_CPU", Physic_Stream_Id=5, Task_Id=552),
        # communication op and a plane task (not kept)
        complete("hcom_allReduce__586_0_1", comm, 0, f"{T0 + 5}.000", 7.5),
        complete("Notify_Wait", comm, 1, f"{T0 + 5}.000", 7.5),
        # a host op: not a device kernel
        complete("aten::add", host, host, f"{T0}.000", 1.0),
    ]  # fmt: skip
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events))
    (capture,) = load(path)
    assert capture.source == "trace_view.json"
    # the MEMCPY_ASYNC task stays as a copy row (a copy plan's side op), never compute
    copies = capture.kernels.filter(pl.col("is_copy"))
    assert copies["name"].to_list() == ["MEMCPY_ASYNC"]
    assert copies["stream_id"].to_list() == [3]
    assert (copies["end_ns"] - copies["start_ns"]).to_list() == [round(1.11 * 1000)]
    assert compute_kernels(capture.kernels)["name"].to_list() == [
        "aclnnInplaceZero_ZerosLikeAiCore_ZerosLike",
        "aclnnCast_CastAiCpu_Cast",
    ]
    table = capture.kernels.filter(~pl.col("is_copy"))
    assert table["name"].to_list() == [
        "aclnnInplaceZero_ZerosLikeAiCore_ZerosLike",
        "aclnnCast_CastAiCpu_Cast",
        "hcom_allReduce__586_0_1",
    ]
    assert table["stream_id"].to_list() == [3, 5, None]
    assert table["is_communication"].to_list() == [False, False, True]
    assert table["task_id"].to_list() == [279, 552, None]
    assert table["start_ns"].to_list() == [T0 * 1000 + 204, (T0 + 3) * 1000, (T0 + 5) * 1000]
    assert (table["end_ns"] - table["start_ns"]).to_list() == [
        round(1.35 * 1000),
        round(139.4186019897461 * 1000),
        round(7.5 * 1000),
    ]
    assert table["device"].to_list() == [1, 1, 1]  # "NPU 1"; one device fills the comm row
    assert table["step"].to_list() == [7, 7, 7]  # ProfilerStep#7 spans [T0-10, T0+90] µs


def test_a_collective_step_without_a_time_drops_no_task(tmp_path: Path) -> None:
    from overlap_check.readers.trace import read_trace

    hw, comm = 800, 3170820576
    untimed = complete("Notify_Wait", comm, 1, f"{T0}.000", 1.0, stream_id=3)
    untimed_task = complete("aclnnAdd_AddAiCore_Add", hw, 3, f"{T0}.000", 1.0, Task_Type="AI_CORE")
    untimed["ts"] = untimed_task["ts"] = None
    events = [
        meta(hw, 0, "process_name", name="Ascend Hardware"),
        meta(hw, 3, "thread_name", name="Stream 3"),
        meta(comm, 0, "process_name", name="HCCL"),
        meta(comm, 1, "thread_name", name="Plane 0"),
        # a step of a collective on stream 3 at T0 + 5 us: the task there is that step
        complete("Notify_Wait", comm, 1, f"{T0 + 5}.000", 1.0, stream_id=3),
        complete("aclnnMul_MulAiCore_Mul", hw, 3, f"{T0 + 5}.000", 1.0, Task_Type="AI_CORE"),
        untimed,
        untimed_task,  # no time: no step's, and kept to be counted as malformed
    ]
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events))
    read = read_trace(path)
    assert read.dropped_tasks == 1
    assert read.kernels["name"].to_list() == ["aclnnAdd_AddAiCore_Add"]
    assert read.kernels["start_ns"].to_list() == [None]


def test_trace_wrapped_in_trace_events_object(tmp_path: Path) -> None:
    path = hardware_trace(tmp_path / "t.json", [(2, "K", f"{T0}.000", 1.0, "AI_CORE")])
    path.write_text(json.dumps({"traceEvents": json.loads(path.read_text())}))
    (capture,) = load(path)
    assert capture.kernels["stream_id"].to_list() == [2]


# --------------------------------------------------------------------------- malformed rows


def test_malformed_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    header = LEVEL1_HEADERS["2025-01"]
    good = level1_lines(header)[1:]
    short = good[0].rsplit(",", 1)[0]  # one field missing
    long = good[0] + ",extra"
    bad_start = good[0].replace(f"{T0}.500\t", "12:30:00")
    bad_stream = good[1].replace(",2,aclnnGrouped", ",two,aclnnGrouped")
    lines = [header, good[0], short, good[1], long, "", bad_start, good[2], bad_stream, good[3]]
    path = write(tmp_path / "kernel_details.csv", lines)
    (capture,) = load(path)
    assert capture.kernels.height == 4
    assert capture.skipped_rows == 4
    # header is line 1; the blank line 6 is not a row
    assert capture.skipped_lines == (3, 5, 7, 9)
    assert capture.skipped_file == str(path)


def test_empty_last_field_is_not_malformed(tmp_path: Path) -> None:
    header = "Step Id,Stream ID,Name,Start Time(us),Duration(us),Note"
    lines = [header, f"1,2,A,{T0}.000\t,1.000,", f"1,2,B,{T0 + 1}.000\t,1.000,x"]
    (capture,) = load(write(tmp_path / "kernel_details.csv", lines))
    assert capture.kernels["name"].to_list() == ["A", "B"]
    assert capture.skipped_rows == 0


def test_negative_duration_is_malformed(tmp_path: Path) -> None:
    header = "Stream ID,Name,Start Time(us),Duration(us)"
    lines = [header, f"2,A,{T0}.000\t,-1.000", f"2,B,{T0 + 1}.000\t,1.000"]
    (capture,) = load(write(tmp_path / "kernel_details.csv", lines))
    assert capture.kernels["name"].to_list() == ["B"]
    assert capture.skipped_lines == (2,)


def test_rows_out_of_order_come_back_sorted_by_device_then_start(tmp_path: Path) -> None:
    header = "Device_id,Stream ID,Name,Start Time(us),Duration(us)"
    lines = [
        header,
        f"1,2,d1-late,{T0 + 9}.000\t,1",
        f"0,2,d0-late,{T0 + 5}.000\t,1",
        f"1,2,d1-early,{T0}.000\t,1",
        f"0,2,d0-early,{T0 + 1}.000\t,1",
    ]
    (capture,) = load(write(tmp_path / "kernel_details.csv", lines))
    assert capture.kernels["name"].to_list() == ["d0-early", "d0-late", "d1-early", "d1-late"]
    assert capture.device is None  # two devices in one file


def test_kernel_csv_has_streams_flag(tmp_path: Path) -> None:
    level0 = write(tmp_path / "a.csv", level0_lines(LEVEL0_HEADERS["7.x"]))
    level1 = write(tmp_path / "b.csv", level1_lines(LEVEL1_HEADERS["2023"]))
    assert read_kernel_csv(level0).has_streams is False
    assert read_kernel_csv(level1).has_streams is True


def test_prof_op_summary_without_stream_values_uses_task_time(tmp_path: Path) -> None:
    """msprof at --task-time=l0-like output: Stream ID column present but N/A everywhere."""
    out = tmp_path / "PROF_000001_20260823165413436_ABCDEFGHIJKLMNOP" / "mindstudio_profiler_output"
    header = (
        "Device_id,Task ID,Stream ID,Op Name,OP Type,Task Type,"
        "Task Start Time(us),Task Duration(us)"
    )
    write(
        out / "op_summary_20260823165421.csv",
        [header, f"0,N/A,N/A,Conv2D1,N/A,N/A,{T0}.100\t,3.000"],
        crlf=False,
    )
    write(
        out / "task_time_20260823165421.csv",
        [
            "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)",
            f"0,Conv2D_1c45_2100,AI_CORE,7,2,3.000,{T0}.100\t,{T0 + 3}.100\t",
        ],
        crlf=False,
    )  # fmt: skip
    (capture,) = load(out.parent)
    assert capture.source == "op_summary"
    assert capture.stream_source == "task_time"
    assert capture.kernels["stream_id"].to_list() == [7]
    assert capture.kernels["task_id"].to_list() == [2]
    assert capture.level is None  # a Stream ID column exists; no profiler_info says which level


@given(
    corrupt=st.lists(
        st.sampled_from(["ok", "drop_field", "extra_field", "bad_start", "bad_block"]),
        min_size=1,
        max_size=12,
    ),
    crlf=st.booleans(),
)
def test_any_mix_of_malformed_rows_is_skipped_exactly(corrupt: list[str], crlf: bool) -> None:
    import tempfile

    header = LEVEL1_HEADERS["2025-11"]
    lines = [header]
    for i, kind in enumerate(corrupt):
        line = row(header, Device_id="0", Task_ID=str(i), Stream_ID="2", Name=f"K{i}",
                   Accelerator_Core="AI_CORE", Start_Time_us_=f"{T0 + i}.000\t",
                   Duration_us_="0.500", Block_Dim="8", Mix_Block_Dim="0")  # fmt: skip
        if kind == "drop_field":
            line = line.split(",", 1)[1]
        elif kind == "extra_field":
            line += ",x"
        elif kind == "bad_start":
            line = line.replace(f"{T0 + i}.000\t", "soon")
        elif kind == "bad_block":
            line = line.replace(",8,0,NO,", ",eight,0,NO,")
        lines.append(line)
    with tempfile.TemporaryDirectory() as directory:
        (capture,) = load(write(Path(directory) / "kernel_details.csv", lines, crlf=crlf))
    bad_lines = tuple(i + 2 for i, kind in enumerate(corrupt) if kind != "ok")
    assert capture.skipped_lines == bad_lines
    assert capture.kernels["name"].to_list() == [
        f"K{i}" for i, kind in enumerate(corrupt) if kind == "ok"
    ]


def test_clean_files_take_the_fast_path_and_both_paths_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from overlap_check.readers import csvread
    from overlap_check.readers.kernel_csv import KERNEL_COLUMNS as COLUMNS
    from overlap_check.readers.kernel_csv import finish_kernels

    path = write(tmp_path / "kernel_details.csv", level1_lines(LEVEL1_HEADERS["2025-11"]))
    header = csvread.read_header(path)
    found = csvread.match_columns(header, COLUMNS, path=path, what="kernel_details")
    wanted = [c for c in COLUMNS if c.field in found]
    fast = csvread._fast(path, header, wanted, found, finish_kernels)
    slow, skipped = csvread._slow(path, header, wanted, found, finish_kernels)
    assert fast is not None  # a clean file never needs the Python pass
    assert skipped == ()
    assert fast.equals(slow)

    def no_slow_path(*args: object, **kwargs: object) -> None:
        raise AssertionError("the slow path ran on a clean file")

    monkeypatch.setattr(csvread, "_slow", no_slow_path)
    (capture,) = load(path)
    assert capture.kernels.height == 4


def test_compute_rows_with_na_stream_are_noted_not_streams(tmp_path: Path) -> None:
    header = "Stream ID,Name,Accelerator Core,Start Time(us),Duration(us)"
    lines = [header, f"2,A,AI_CORE,{T0}.000\t,1", f"N/A,B,AI_CORE,{T0 + 1}.000\t,1"]
    (capture,) = load(write(tmp_path / "kernel_details.csv", lines))
    assert capture.kernels["stream_id"].to_list() == [2, None]
    assert compute_kernels(capture.kernels)["name"].to_list() == ["A"]
    assert any("1 of 2 kernel rows have no Stream ID" in note for note in capture.notes)


def test_an_older_910a_trace_keeps_only_the_kernels(tmp_path: Path) -> None:
    # Every task of this generation is typed `Other`; MemcopyAsync, MEMCPY_ASYNC,
    # EVENT_*, NOTIFY_* and REDUCE_ASYNC_V2 are not kernels, whatever their type says.
    from synth.older_trace import older_910a_trace

    built = older_910a_trace(steps=2)
    built.write(tmp_path)
    (capture,) = load(tmp_path)
    assert capture.source == "trace_view.json"
    compute = compute_kernels(capture.kernels)
    per_stream = {
        int(s): (g.height, int((g["end_ns"] - g["start_ns"]).sum()))
        for (s,), g in compute.group_by("stream_id")
    }
    copies = capture.kernels.filter(pl.col("is_copy"))
    copy_streams = {
        int(s): (g.height, int((g["end_ns"] - g["start_ns"]).sum()))
        for (s,), g in copies.group_by("stream_id")
    }
    # the copies stay as copy rows (a copy plan's side ops): per step MemcopyAsync
    # 1_549_935 + MEMCPY_ASYNC 23_500 on stream 1; the MEMCPY_ASYNC on stream 3 is a step
    # of the all-reduce (the stream waits on notifies): no copy (issue 23 point 14)
    assert copy_streams == {1: (4, 2 * (1_549_935 + 23_500))}
    # stream 1: 2 steps x (39_850 + 45_260 + 246_972 + 4_690 + 63_101 + 12_480) = 2 x 412_353
    # stream 2: the two AI_CPU kernels, 2 x 102_511; stream 3 ran no kernel
    assert per_stream == {1: (12, 824_706), 2: (2, 205_022)}
    assert [(e.stream_id, e.kernels, e.busy_ns) for e in built.expected.streams] == [
        (1, 12, 824_706),
        (2, 2, 205_022),
    ]
    assert capture.kernels.filter(pl.col("is_communication")).height == 2


def test_the_innermost_module_call_holding_each_launch() -> None:
    from overlap_check.readers.calls import innermost_calls

    # thread "h": A [0,100) holds B [10,20), which holds C [12,15); D [20,30) starts where B
    # ends. Thread "g": E [0,1000). Calls are half-open: a call does not hold its end.
    calls = pl.DataFrame(
        {
            "thread": ["h", "h", "h", "h", "g"],
            "start_ns": [0, 10, 12, 20, 0],
            "end_ns": [100, 20, 15, 30, 1000],
        }
    )
    points = pl.DataFrame(
        {
            "thread": ["h"] * 8 + ["g", "x"],
            "launch_ns": [5, 10, 13, 15, 20, 30, 50, 150, 50, 50],
        }
    )
    # 5: A; 10: B (its start); 13: C; 15: B again (C closed); 20: D (B closed, D opened);
    # 30: A (D closed); 50: A; 150: none; thread g at 50: E; thread x has no call
    assert innermost_calls(calls, points).to_list() == [0, 1, 2, 1, 3, 0, 0, None, 4, None]
