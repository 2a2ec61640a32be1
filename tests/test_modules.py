"""Module scope from trace_view.json (readers.modules) and ``side = "module:Name"``: a small
trace written here (events as torch_npu writes them), answers from its construction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from measure_tables import kernel_modules

from overlap_check.cli import cli
from overlap_check.judge.pipeline import analyze_captures
from overlap_check.model import Capture, Options, Plan
from overlap_check.model.table import conform
from overlap_check.readers.modules import module_scopes, with_modules

HOST, DEVICE = 100, 200  # pids: the Python process, the Ascend Hardware process


def call(name: str, ts: str, dur: float, tid: int = 1) -> dict[str, Any]:
    return {"ph": "X", "name": f"nn.Module: {name}", "pid": HOST, "tid": tid, "ts": ts, "dur": dur}


def flow(i: int, host_ts: str, tid: int, kernel_ts: str, name: str = "torch_to_npu") -> list[Any]:
    return [
        {"ph": "s", "name": name, "id": i, "pid": HOST, "tid": 1, "ts": host_ts, "cat": name},
        {"ph": "f", "name": name, "id": i, "pid": DEVICE, "tid": tid, "ts": kernel_ts, "bp": "e"},
    ]


def meta(name: str, pid: int, value: str, tid: int = 0) -> dict[str, Any]:
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "args": {"name": value}}


def write_trace(folder: Path) -> Path:
    """Host thread 1: DecoderLayer_0 [0, 100) us holds SharedExpert_3 [10, 40), which holds
    Linear_7 [20, 30); SharedExpert_4 [40, 60) starts where SharedExpert_3 ends."""
    events: list[Any] = [
        meta("process_name", DEVICE, "Ascend Hardware"),
        meta("thread_name", DEVICE, "Stream 2", 2),
        meta("thread_name", DEVICE, "Stream 3", 3),
        meta("thread_name", DEVICE, "Overlap Analysis", 99),
        call("DecoderLayer_0", "0.000", 100.0),
        call("SharedExpert_3", "10.000", 30.0),
        call("Linear_7", "20.000", 10.0),
        call("SharedExpert_4", "40.000", 20.0),
        *flow(1, "15.000", 3, "1000.000"),  # in SharedExpert_3
        *flow(2, "20.000", 3, "1010.000"),  # at Linear_7's start: in it (and in SharedExpert_3)
        *flow(3, "30.000", 3, "1020.000"),  # Linear_7 has ended: SharedExpert_3
        *flow(4, "40.000", 3, "1030.000"),  # SharedExpert_3 ended, SharedExpert_4 began
        *flow(5, "70.000", 2, "1040.000"),  # DecoderLayer_0 only
        *flow(6, "150.000", 2, "1050.000"),  # outside every call
        *flow(7, "15.000", 99, "1060.000"),  # ends on no Stream thread: no kernel
        *flow(8, "15.000", 2, "1070.000", name="async_npu"),  # not a launch flow
    ]
    path = folder / "trace_view.json"
    path.write_text(json.dumps(events))
    return path


def test_innermost_module_and_module_scope_of_each_launch(tmp_path: Path) -> None:
    trace = write_trace(tmp_path)
    innermost = kernel_modules(trace).sort("start_ns").rows()
    assert innermost == [
        (3, 1_000_000, "SharedExpert", 3),
        (3, 1_010_000, "Linear", 7),
        (3, 1_020_000, "SharedExpert", 3),
        (3, 1_030_000, "SharedExpert", 4),
        (2, 1_040_000, "DecoderLayer", 0),
    ]
    # module:SharedExpert holds its Linear's launch too; the Stream-2 launches are outside
    scope = module_scopes(trace, ["SharedExpert"]).sort("start_ns")
    assert scope.get_column("module:SharedExpert").to_list() == [3, 3, 3, 4, None, None]


def test_module_selection_takes_the_layer_from_the_instance(tmp_path: Path) -> None:
    trace = write_trace(tmp_path)
    ns = 1000  # the trace's µs in ns
    rows = [  # name, stream, start, end (µs); side kernels start at their flows' ends
        ("aclnnGroupedMatmul_GroupedMatmul", 2, 998, 1027),
        ("aclnnMatmul_MatMulV3", 3, 1000, 1005),  # SharedExpert_3
        ("aclnnMatmul_MatMulV3", 3, 1010, 1015),  # SharedExpert_3 (inside Linear_7)
        ("aclnnSwiGlu_SwiGlu", 3, 1020, 1025),  # SharedExpert_3
        ("aclnnGroupedMatmul_GroupedMatmul", 2, 1028, 1040),
        ("aclnnMatmul_MatMulV3", 3, 1030, 1035),  # SharedExpert_4
        ("aclnnAdd_Add", 2, 1040, 1041),  # DecoderLayer_0: not a side op
        ("aclnnMatmul_MatMulV3", 3, 1045, 1046),  # no flow: launched outside any module
    ]
    frame = pl.DataFrame(
        {
            "name": [r[0] for r in rows],
            "stream_id": [r[1] for r in rows],
            "start_ns": [r[2] * ns for r in rows],
            "end_ns": [r[3] * ns for r in rows],
            "is_communication": [False] * len(rows),
        },
        schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )
    kernels = with_modules(conform(frame), module_scopes(trace, ["SharedExpert"]))
    capture = Capture("run", "kernel_details.csv", 0, 0, "Level1", None, kernels)
    plan = Plan("se", side="module:SharedExpert", dominator="GroupedMatmul", side_stream=3)
    options = Options(plans=(plan,), main_stream=2, warmup=0, min_runs=1)
    (result,) = analyze_captures([capture], options).plans
    run = result.per_run[0]
    # side ops: the 4 kernels inside SharedExpert calls (not the one launched outside);
    # occurrence 1 = instance 3 (layer 4): [1000, 1005] + [1010, 1015] + [1020, 1025] = 15
    # µs under D [998, 1027]; occurrence 2 = instance 4 (layer 5): [1030, 1035] under
    # D [1028, 1040]
    assert run.side_ops == 4
    assert sorted((o.layer, o.side_ops, o.hidden_ns) for o in run.worst) == [
        (4, 3, 15 * ns),
        (5, 1, 5 * ns),
    ]
    assert (result.hidden_pct, result.verdict) == (1.0, "real")


def test_a_capture_without_module_scope_selects_nothing() -> None:
    frame = pl.DataFrame(
        {
            "name": ["A"],
            "stream_id": [3],
            "start_ns": [0],
            "end_ns": [10],
            "is_communication": [False],
        },
        schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )
    capture = Capture("run", "kernel_details.csv", 0, 0, "Level1", None, conform(frame))
    plan = Plan("se", side="module:SharedExpert", side_stream=3)
    options = Options(plans=(plan,), main_stream=2, warmup=0, min_runs=1)
    (result,) = analyze_captures([capture], options).plans
    assert result.verdict == "no-evidence"
    assert "no compute kernel matched the side regex 'module:SharedExpert'" in result.diagnosis


REAL = Path(__file__).resolve().parents[2] / "shared" / "real-profiles" / "torch_npu-level1-text"


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-profiles is absent")
def test_real_level1_module_selection_through_the_cli(tmp_path: Path) -> None:
    # The capture's CNN runs 5 Conv2d calls (Conv2d_0 .. Conv2d_4), each launching 4
    # kernels (TransData, TransData, Conv2D, TransData; test_readers_real checks Conv2d_0's
    # by hand), all on its one compute stream 2: the module never left the main stream.
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        cli, ["analyze", str(REAL), "--side", "module:Conv2d", "--output", str(out)]
    )
    assert result.exit_code == 1, result.output  # not-split fails the gate
    (plan,) = json.loads(out.read_text())["plans"]
    assert plan["verdict"] == "not-split"
    counts = [int(p.split(" x")[1].split(" ")[0]) for p in plan["stayed"]]
    assert sum(counts) == 5 * 4
    assert all(p.endswith(" on stream 2") for p in plan["stayed"])
