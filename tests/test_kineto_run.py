"""`overlap-check run --profiler torch` (CUDA GPUs) end to end, with the stand-in `torch`
package in tests/standins/cuda: the payload injects torch.profiler with the documented
arguments, each optimizer step is a profiler step, and the Kineto traces the stand-in
writes (synth.kineto, answers known by construction) are judged like `analyze`."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from overlap_check.runner.manifest import read_manifest
from overlap_check.runner.profilers import choose_profiler


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HARNESS = _load(
    "overlap_check_test_harness_torch", Path(__file__).parent / "standins" / "harness.py"
)


# the stand-in torch sits apart, so that only these tests (and no torch_npu test) see it
CUDA_STANDINS = str(HARNESS.STANDINS / "cuda")


def run(tmp: Path, *args: str, steps: int = 3, env: dict[str, str] | None = None) -> Any:
    environ = HARNESS.standin_env(tmp, extra_path=CUDA_STANDINS) | (env or {})
    command = [sys.executable, "-m", "overlap_check", "run", "--out", str(tmp / "out"), *args]
    workload = ["--", sys.executable, str(HARNESS.WORKLOAD), "--torch-steps", str(steps)]
    return subprocess.run(
        command + workload, env=environ, cwd=tmp, capture_output=True, text=True, timeout=300
    )


def torch_calls(tmp: Path, name: str) -> list[dict[str, Any]]:
    return [c for c in HARNESS.read_jsonl(tmp / "torch-calls.jsonl") if c["call"] == name]


@pytest.mark.parametrize("plan", [["--side", "side_op"], ["--side", "module:SideBranch"]])
def test_run_profiles_a_pytorch_script_on_cuda(tmp_path: Path, plan: list[str]) -> None:
    result = run(tmp_path, "--profiler", "torch", "--runs", "3", "--format", "json", *plan)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    (judged,) = report["plans"]
    assert judged["verdict"] == "real" and judged["side_stream"] == 20
    assert [r["source"] for r in report["runs"]] == ["kineto"] * 3
    # the documented torch.profiler calls, once per run
    (profile, *_) = torch_calls(tmp_path, "profile")
    assert profile["activities"] == ["CPU", "CUDA"] and profile["schedule"] is True
    assert profile["with_stack"] is plan[1].startswith("module:")
    assert torch_calls(tmp_path, "schedule")[0] | {"call": "", "pid": 0, "time_ns": 0} == {
        "call": "", "pid": 0, "time_ns": 0, "wait": 0, "warmup": 0, "active": 10, "repeat": 1
    }  # fmt: skip
    (handler, *_) = torch_calls(tmp_path, "tensorboard_trace_handler")
    assert handler["use_gzip"] is True and handler["dir_name"].endswith("run-1")
    # three optimizer steps, then the stop at exit: four ProfilerStep ranges per trace
    exports = torch_calls(tmp_path, "export")
    assert [e["steps"] for e in exports] == [4, 4, 4]
    manifest = read_manifest(tmp_path / "out")
    assert manifest.profiler == "torch"
    assert [r.result_dirs[0].endswith(".pt.trace.json.gz") for r in manifest.runs] == [True] * 3


def test_a_serialised_run_among_the_warm_ones(tmp_path: Path) -> None:
    serial = {"FAKE_TORCH_SERIAL": "4"}  # run 4 of 5 serialises its side stream
    result = run(
        tmp_path, "--profiler", "torch", "--side", "side_op", "--format", "json", env=serial
    )
    assert result.returncode == 1, result.stderr
    (plan,) = json.loads(result.stdout)["plans"]
    assert [r["hidden_pct"] for r in plan["per_run"]] == [1.0, 1.0, 1.0, 0.0, 1.0]
    # the warm median is 1.0, but a third of the warm occurrences were fake (fake_share)
    assert plan["hidden_pct"] == 1.0 and plan["verdict"] == "partial"


def test_a_script_that_never_imports_torch(tmp_path: Path) -> None:
    environ = HARNESS.standin_env(tmp_path, extra_path=CUDA_STANDINS)
    command = [sys.executable, "-m", "overlap_check", "run", "--out", str(tmp_path / "o")]
    workload = [sys.executable, str(HARNESS.WORKLOAD), "--no-npu"]
    result = subprocess.run(
        [*command, "--profiler", "torch", "--runs", "1", "--", *workload],
        env=environ, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    assert "torch was never imported" in result.stderr


def test_choose_profiler_takes_torch_when_asked() -> None:
    assert choose_profiler("torch", ["python", "x.py"], {})[0] == "torch"
    assert choose_profiler("auto", ["python", "x.py"], {}, configured="torch")[0] == "torch"
