"""`overlap-check run` end to end, with the stand-in torch_npu and msprof (tests/standins).

The known answer comes from the generator's `warm_cold_runs` scenario: run i
of the workload gets its i-th scenario (the fake profiler reads
OVERLAP_CHECK_RUN_INDEX), cold first runs included.
"""

from __future__ import annotations

import importlib.util
import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.runner.manifest import read_manifest
from overlap_check.synth import scenarios


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HARNESS = _load("overlap_check_test_harness", Path(__file__).parent / "standins" / "harness.py")
PLAN = ["--side", "SharedExpert", "--dominator", "GroupedMatmul", "--name", "moe-shared-expert"]
WORKLOAD = [sys.executable, str(HARNESS.WORKLOAD)]


def overlap_check(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "overlap_check", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def expected_warm_median() -> float:
    """Median of the per-run overlap_pct over the warm runs (runs 3..5) of warm_cold_runs."""
    (plan,) = scenarios.warm_cold_runs().expected.plans
    assert plan.per_run == (0.0, 0.0, 0.45, 0.9, 0.9)  # 2 cold runs, 1 settling, then 0.9
    assert plan.overlap_pct == statistics.median([0.45, 0.9, 0.9])
    return statistics.median(plan.per_run[2:])


def plan_of(report: dict[str, Any]) -> dict[str, Any]:
    (plan,) = report["plans"]
    assert plan["name"] == "moe-shared-expert"
    return plan


# --------------------------------------------------------------------------- torch_npu path


def test_five_runs_median_and_profiler_arguments(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        ["run", "--out", str(out), "--format", "json", *PLAN, "--", *WORKLOAD], env, tmp_path
    )
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)  # stdout holds the report and nothing else
    plan = plan_of(report)
    assert [r["warm"] for r in plan["per_run"]] == [False, False, True, True, True]
    assert plan["overlap_pct"] == pytest.approx(expected_warm_median())
    assert [r["overlap_pct"] for r in plan["per_run"]] == pytest.approx([0.0, 0.0, 0.45, 0.9, 0.9])
    assert plan["provisional"] is False
    # The workload's own output went to stderr, with the progress lines.
    assert "workload-output: stdout" in result.stderr
    assert "run 5/5" in result.stderr and "profiler: torch_npu" in result.stderr
    # The profiler was called 5 times, each with NPU activity at Level1.
    profiles = HARNESS.calls(tmp_path, "profile")
    assert len(profiles) == 5
    for profile in profiles:
        assert "ProfilerActivity.NPU" in profile["activities"]
        assert profile["experimental_config"]["profiler_level"] == "Level1"
    dirs = [h["dir_name"] for h in HARNESS.calls(tmp_path, "tensorboard_trace_handler")]
    assert dirs == [str((out / f"run-{i}").resolve()) for i in range(1, 6)]
    # torch_npu was never imported by overlap-check itself, only by the workloads.
    importers = {c["pid"] for c in HARNESS.calls(tmp_path, "import")}
    assert importers == {p["pid"] for p in profiles} and len(importers) == 5
    # The manifest records every run.
    manifest = read_manifest(out)
    assert manifest.status == "complete" and manifest.profiler == "torch_npu"
    assert manifest.command == tuple(WORKLOAD)
    assert [(r.index, r.status, r.exit_code) for r in manifest.runs] == [
        (i, "ok", 0) for i in range(1, 6)
    ]
    assert all(len(r.result_dirs) == 1 for r in manifest.runs)
    assert manifest.analyze_args[:3] == ("overlap-check", "analyze", str(out))
    # `analyze <out>` judges the same data the same way.
    again = overlap_check(["analyze", str(out), "--format", "json", *PLAN], env, tmp_path)
    assert again.returncode == result.returncode, again.stderr
    replay = json.loads(again.stdout)
    assert replay["plans"] == report["plans"]
    assert replay["stream_pairs"] == report["stream_pairs"]
    assert replay["verdict"] == report["verdict"]


def test_a_failing_run_stops_with_exit_3_and_keeps_earlier_runs(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        ["run", "--out", str(out), *PLAN, "--", *WORKLOAD, "--fail-on-run", "2"], env, tmp_path
    )
    assert result.returncode == 3
    assert "run 2 of 5: the command failed (exit code 1)" in result.stderr
    assert result.stdout == ""
    manifest = read_manifest(out)
    assert manifest.status == "failed"
    assert [(r.index, r.status, r.exit_code) for r in manifest.runs] == [
        (1, "ok", 0),
        (2, "failed", 1),
    ]
    assert len(manifest.runs[0].result_dirs) == 1
    assert (out / manifest.runs[0].result_dirs[0] / "ASCEND_PROFILER_OUTPUT").is_dir()
    assert not (out / "run-3").exists()


def test_keep_going_judges_the_runs_that_worked(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        [
            "run",
            "--out",
            str(out),
            "--keep-going",
            "--runs",
            "4",
            "--format",
            "json",
            *PLAN,
            "--",
            *WORKLOAD,
            "--fail-on-run",
            "2",
        ],
        env,
        tmp_path,
    )
    assert result.returncode in (0, 1), result.stderr
    assert "--keep-going: continuing" in result.stderr
    manifest = read_manifest(out)
    assert [r.status for r in manifest.runs] == ["ok", "failed", "ok", "ok"]
    # Replaying needs the good runs named: run-2 may have left a partial profile.
    good = [str(out / f"run-{i}") for i in (1, 3, 4)]
    assert manifest.analyze_args == ("overlap-check", "analyze", *good, *PLAN, "--format", "json")
    report = json.loads(result.stdout)
    plan = plan_of(report)
    # Runs 1, 3, 4 of the scenario are judged as runs 1..3: 0.0 (cold), 0.45, 0.9.
    assert [r["overlap_pct"] for r in plan["per_run"]] == pytest.approx([0.0, 0.45, 0.9])
    assert plan["provisional"] is True  # 3 runs < --min-runs 5
    assert any("run 2 not judged (failed" in note for note in report.get("notes", []))


def test_a_workload_that_never_imports_torch_npu(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(["run", "--out", str(out), "--", *WORKLOAD, "--no-npu"], env, tmp_path)
    assert result.returncode == 2
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(f"overlap-check: error: {out / 'run-1'}: run 1 left no profile")
    assert "torch_npu was never imported" in message
    assert read_manifest(out).runs[0].status == "no-profile"


def test_ctrl_c_forwards_keeps_completed_runs_and_exits_130(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "overlap_check",
            "run",
            "--out",
            str(out),
            *PLAN,
            "--",
            *WORKLOAD,
            "--sleep",
            "20",
        ],
        env={**env, "FAKE_TORCH_NPU_SCENARIO": "warm_cold_runs"},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Wait until run 1 is sleeping, i.e. its payload has started the profiler.
        status = out / "run-1" / ".overlap-check"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any("profiler-started" in p.read_text() for p in status.glob("payload-*.jsonl")):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the workload never started")
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and stdout == ""
    manifest = read_manifest(out)
    assert manifest.status == "interrupted"
    (run,) = manifest.runs
    assert run.status == "interrupted"
    # The workload got the SIGINT (KeyboardInterrupt), so its atexit hook exported.
    assert run.exit_code != 0
    assert len(run.result_dirs) == 1
    assert not (out / "run-2").exists()


def test_ctrl_c_after_completed_runs_keeps_them(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    # Runs 1 and 2 are quick; run 3 sleeps until interrupted.
    code = (
        "import os, subprocess, sys, time\n"
        "import torch_npu\n"
        "if os.environ['OVERLAP_CHECK_RUN_INDEX'] == '3':\n"
        "    time.sleep(30)\n"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "overlap_check",
            "run",
            "--out",
            str(out),
            "--",
            sys.executable,
            "-c",
            code,
        ],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        status = out / "run-3" / ".overlap-check"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if any("profiler-started" in p.read_text() for p in status.glob("payload-*.jsonl")):
                break
            time.sleep(0.05)
        else:
            pytest.fail("run 3 never started")
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "2 completed run(s) kept" in stderr
    assert f"judge them with: overlap-check analyze {out / 'run-1'} {out / 'run-2'}" in stderr
    manifest = read_manifest(out)
    assert [r.status for r in manifest.runs] == ["ok", "ok", "interrupted"]
    assert all((out / r.result_dirs[0]).is_dir() for r in manifest.runs[:2])


def test_a_workload_with_its_own_sitecustomize_still_runs(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path, extra_path=str(HARNESS.USER_SITE))
    out = tmp_path / "out"
    result = overlap_check(
        ["run", "--out", str(out), "--runs", "1", "--", *WORKLOAD], env, tmp_path
    )
    assert result.returncode in (0, 1), result.stderr
    assert "user sitecustomize: yes" in result.stderr
    assert read_manifest(out).runs[0].status == "ok"


def test_child_processes_are_profiled_as_their_ranks(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        [
            "run",
            "--out",
            str(out),
            "--runs",
            "2",
            "--format",
            "json",
            *PLAN,
            "--",
            *WORKLOAD,
            "--child",
        ],
        env,
        tmp_path,
    )
    assert result.returncode in (0, 1), result.stderr
    manifest = read_manifest(out)
    assert [len(r.result_dirs) for r in manifest.runs] == [2, 2]
    assert [r.processes for r in manifest.runs] == [2, 2]
    report = json.loads(result.stdout)
    assert sorted({(r["rank"], r["index"]) for r in report["runs"]}) == [
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 2),
    ]


def test_window_under_run_narrows_the_capture(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        [
            "run",
            "--out",
            str(out),
            "--runs",
            "1",
            "--window",
            "explicit",
            "--",
            *WORKLOAD,
            "--window",
        ],
        env,
        tmp_path,
    )
    assert result.returncode in (0, 1), result.stderr
    assert [c["phases"] for c in HARNESS.calls(tmp_path, "stop")] == [["generate"]]
    assert read_manifest(out).window == "explicit"


def test_level2_and_quiet(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        ["run", "-q", "--out", str(out), "--runs", "1", "--level", "Level2", "--", *WORKLOAD],
        env,
        tmp_path,
    )
    assert result.returncode in (0, 1), result.stderr
    assert result.stderr == ""
    (profile,) = HARNESS.calls(tmp_path, "profile")
    assert profile["experimental_config"]["profiler_level"] == "Level2"
    run = read_manifest(out).runs[0]
    assert run.log is not None
    assert "workload-output: stdout" in (out / run.log).read_text()


# --------------------------------------------------------------------------- msprof path


def test_msprof_path_exact_argv_and_median(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        [
            "run",
            "--profiler",
            "msprof",
            "--out",
            str(out),
            "--runs",
            "3",
            "--min-runs",
            "3",
            "--format",
            "json",
            *PLAN,
            "--",
            *WORKLOAD,
            "--no-npu",
            "--marker",
            "x y",
        ],
        env,
        tmp_path,
    )
    assert result.returncode in (0, 1), result.stderr
    argvs = [c["argv"] for c in HARNESS.read_jsonl(tmp_path / "msprof-calls.jsonl")]
    assert argvs == [
        [
            f"--output={(out / f'run-{i}').resolve()}",
            "--task-time=l1",
            "--ai-core=on",
            *WORKLOAD,
            "--no-npu",
            "--marker",
            "x y",
        ]
        for i in range(1, 4)
    ]
    assert HARNESS.calls(tmp_path, "profile") == []  # no injection with msprof
    manifest = read_manifest(out)
    assert manifest.profiler == "msprof"
    assert list(manifest.profiler_argv[1:4]) == argvs[0][:3]
    assert all(len(r.result_dirs) == 1 and "/PROF_" in r.result_dirs[0] for r in manifest.runs)
    plan = plan_of(json.loads(result.stdout))
    # Runs 1-2 are cold (0.0, 0.0) and discarded; run 3 (0.45) is the only warm one.
    assert [r["overlap_pct"] for r in plan["per_run"]] == pytest.approx([0.0, 0.0, 0.45])
    assert plan["overlap_pct"] == pytest.approx(0.45)


def test_auto_picks_msprof_for_a_non_python_command(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    script = tmp_path / "serve.sh"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {HARNESS.WORKLOAD} --no-npu\n")
    script.chmod(0o755)
    out = tmp_path / "out"
    result = overlap_check(
        ["run", "--out", str(out), "--runs", "1", "--", str(script)], env, tmp_path
    )
    assert result.returncode in (0, 1), result.stderr
    assert "profiler: msprof (serve.sh is not Python)" in result.stderr
    assert read_manifest(out).profiler == "msprof"


def test_run_settings_from_the_config(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    (tmp_path / "overlap-check.toml").write_text(
        '[run]\nruns = 2\nlevel = "Level2"\nprofiler = "msprof"\n'
    )
    out = tmp_path / "out"
    result = overlap_check(["run", "--out", str(out), "--", *WORKLOAD, "--no-npu"], env, tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "profiler: msprof (the config asks for msprof ([run] profiler))" in result.stderr
    argvs = [c["argv"] for c in HARNESS.read_jsonl(tmp_path / "msprof-calls.jsonl")]
    assert [a[1] for a in argvs] == ["--task-time=l2", "--task-time=l2"]
    manifest = read_manifest(out)
    assert (manifest.runs_requested, manifest.level, len(manifest.runs)) == (2, "Level2", 2)


def test_keep_going_with_no_profile_at_all(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path)
    out = tmp_path / "out"
    result = overlap_check(
        ["run", "--out", str(out), "--runs", "2", "--keep-going", "--", *WORKLOAD, "--no-npu"],
        env,
        tmp_path,
    )
    assert result.returncode == 2
    assert "none of the 2 runs left a usable profile" in result.stderr
    assert "torch_npu was never imported" in result.stderr
    assert [r.status for r in read_manifest(out).runs] == ["no-profile", "no-profile"]


# --------------------------------------------------------------------------- usage errors


def test_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    runner = CliRunner()
    result = runner.invoke(cli, ["run"])
    assert result.exit_code == 2 and "no command to run" in result.output
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    result = runner.invoke(cli, ["run", "--out", "full", "--", "python", "x.py"])
    assert result.exit_code == 2 and "--out full is not empty" in result.output
    assert (tmp_path / "full" / "keep.txt").read_text() == "x"
    result = runner.invoke(cli, ["run", "--profiler", "msprof", "--", "python", "x.py"])
    assert result.exit_code == 2 and "msprof not found on PATH" in result.output
    result = runner.invoke(cli, ["run", "--runs", "0", "--", "python"])
    assert result.exit_code == 2


def test_cli_runner_end_to_end_with_default_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = HARNESS.standin_env(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        cli, ["run", "--runs", "2", "--format", "json", *PLAN, "--", *WORKLOAD]
    )
    assert result.exit_code in (0, 1), result.output
    (out,) = (tmp_path / "overlap-check-runs").iterdir()
    assert len(out.name) == len("20260101-120000")
    manifest = read_manifest(out)
    assert [r.status for r in manifest.runs] == ["ok", "ok"]
    assert manifest.options["runs"] == 2
    assert "torch_npu" not in sys.modules  # the test process never imported it
