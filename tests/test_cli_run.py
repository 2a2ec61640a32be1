"""`overlap-check run` end to end, with the stand-in torch_npu and msprof (tests/standins).

The known answer comes from the generator's `warm_cold_runs` scenario: run i
of the workload gets its i-th scenario (the fake profiler reads
OVERLAP_CHECK_RUN_INDEX), cold first runs included.

Each test gets a :class:`Standin`: a tmp folder whose environment puts the
stand-ins in place, with the ``--out`` folder in it; the tests say only the
options and workload arguments that differ.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.runner.manifest import Manifest, read_manifest
from synth import scenarios


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HARNESS = _load("overlap_check_test_harness", Path(__file__).parent / "standins" / "harness.py")
PLAN = ["--side", "SharedExpert", "--dominator", "GroupedMatmul", "--name", "moe-shared-expert"]
WORKLOAD = [sys.executable, str(HARNESS.WORKLOAD)]


@dataclass
class Standin:
    """A tmp folder wired to the stand-in profilers; ``out`` is the run's ``--out``."""

    root: Path
    env: dict[str, str]
    out: Path

    def overlap_check(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``python -m overlap_check ARGS`` in the folder, as a user would run it."""
        return subprocess.run(
            [sys.executable, "-m", "overlap_check", *args],
            env=self.env,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=180,
        )

    def run(
        self, *options: str, workload: Sequence[str] = (), command: Sequence[str] = WORKLOAD
    ) -> subprocess.CompletedProcess[str]:
        """``overlap-check run --out OUT OPTIONS -- COMMAND WORKLOAD``."""
        return self.overlap_check(
            "run", "--out", str(self.out), *options, "--", *command, *workload
        )

    def judged(
        self, *options: str, workload: Sequence[str] = (), command: Sequence[str] = WORKLOAD
    ) -> subprocess.CompletedProcess[str]:
        """A run that got as far as a report: exit 0 (pass) or 1 (gate failed)."""
        result = self.run(*options, workload=workload, command=command)
        assert result.returncode in (0, 1), result.stderr
        return result

    def start(self, *options: str, command: Sequence[str]) -> subprocess.Popen[str]:
        """``overlap-check run --out OUT OPTIONS -- COMMAND`` in the background, piped."""
        argv = ["run", "--out", str(self.out), *options, "--", *command]
        return subprocess.Popen(
            [sys.executable, "-m", "overlap_check", *argv],
            env=self.env,
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def interrupted(
        self, *options: str, command: Sequence[str], run: int, within: float
    ) -> tuple[str, str]:
        """Start ``run``, send Ctrl-C once run ``run``'s profiler has started (waiting at most
        ``within`` seconds); the exit code must be 130. Returns (stdout, stderr)."""
        proc = self.start(*options, command=command)
        try:
            status = self.out / f"run-{run}" / ".overlap-check"
            deadline = time.monotonic() + within
            while time.monotonic() < deadline:
                if any("profiler-started" in p.read_text() for p in status.glob("payload-*.jsonl")):
                    break
                time.sleep(0.05)
            else:
                pytest.fail(f"run {run} never started")
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 130, stderr
        return stdout, stderr

    def calls(self, name: str) -> list[dict[str, Any]]:
        """The stand-in torch_npu's recorded calls named ``name``."""
        result: list[dict[str, Any]] = HARNESS.calls(self.root, name)
        return result

    def msprof_argvs(self) -> list[list[str]]:
        """The argument lists the stand-in msprof was called with, one per run."""
        return [c["argv"] for c in HARNESS.read_jsonl(self.root / "msprof-calls.jsonl")]

    def manifest(self) -> Manifest:
        return read_manifest(self.out)


@pytest.fixture
def standin(tmp_path: Path) -> Standin:
    return Standin(root=tmp_path, env=HARNESS.standin_env(tmp_path), out=tmp_path / "out")


def expected_warm_median() -> float:
    """Median of the per-run overlap_pct over the warm runs (runs 3..5) of warm_cold_runs."""
    (plan,) = scenarios.warm_cold_runs().expected.plans
    assert plan.per_run == (0.0, 0.0, 0.45, 0.9, 0.9)  # 2 cold runs, 1 settling, then 0.9
    assert plan.overlap_pct == statistics.median([0.45, 0.9, 0.9])
    return statistics.median(plan.per_run[2:])


def plan_of(report: dict[str, Any]) -> dict[str, Any]:
    plan: dict[str, Any]
    (plan,) = report["plans"]
    assert plan["name"] == "moe-shared-expert"
    return plan


# --------------------------------------------------------------------------- torch_npu path


def test_five_runs_median_and_profiler_arguments(standin: Standin) -> None:
    result = standin.run("--format", "json", *PLAN)
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
    profiles = standin.calls("profile")
    assert len(profiles) == 5
    for profile in profiles:
        assert "ProfilerActivity.NPU" in profile["activities"]
        assert profile["experimental_config"]["profiler_level"] == "Level1"
    dirs = [h["dir_name"] for h in standin.calls("tensorboard_trace_handler")]
    assert dirs == [str((standin.out / f"run-{i}").resolve()) for i in range(1, 6)]
    # torch_npu was never imported by overlap-check itself, only by the workloads.
    importers = {c["pid"] for c in standin.calls("import")}
    assert importers == {p["pid"] for p in profiles} and len(importers) == 5
    # The manifest records every run.
    manifest = standin.manifest()
    assert manifest.status == "complete" and manifest.profiler == "torch_npu"
    assert manifest.command == tuple(WORKLOAD)
    assert [(r.index, r.status, r.exit_code) for r in manifest.runs] == [
        (i, "ok", 0) for i in range(1, 6)
    ]
    assert all(len(r.result_dirs) == 1 for r in manifest.runs)
    assert manifest.analyze_args[:3] == ("overlap-check", "analyze", str(standin.out))
    # `analyze <out>` judges the same data the same way.
    again = standin.overlap_check("analyze", str(standin.out), "--format", "json", *PLAN)
    assert again.returncode == result.returncode, again.stderr
    replay = json.loads(again.stdout)
    assert replay["plans"] == report["plans"]
    assert replay["stream_pairs"] == report["stream_pairs"]
    assert replay["verdict"] == report["verdict"]


def test_a_failing_run_stops_with_exit_3_and_keeps_earlier_runs(standin: Standin) -> None:
    result = standin.run(*PLAN, workload=["--fail-on-run", "2"])
    assert result.returncode == 3
    assert "run 2 of 5: the command failed (exit code 1)" in result.stderr
    assert result.stdout == ""
    manifest = standin.manifest()
    assert manifest.status == "failed"
    assert [(r.index, r.status, r.exit_code) for r in manifest.runs] == [
        (1, "ok", 0),
        (2, "failed", 1),
    ]
    assert len(manifest.runs[0].result_dirs) == 1
    assert (standin.out / manifest.runs[0].result_dirs[0] / "ASCEND_PROFILER_OUTPUT").is_dir()
    assert not (standin.out / "run-3").exists()


def test_keep_going_judges_the_runs_that_worked(standin: Standin) -> None:
    result = standin.judged(
        "--keep-going", "--runs", "4", "--format", "json", *PLAN, workload=["--fail-on-run", "2"]
    )
    assert "--keep-going: continuing" in result.stderr
    manifest = standin.manifest()
    assert [r.status for r in manifest.runs] == ["ok", "failed", "ok", "ok"]
    # `analyze <out>` reads the manifest and leaves out run 2 (it may hold a partial profile).
    out = str(standin.out)
    assert manifest.analyze_args == ("overlap-check", "analyze", out, *PLAN, "--format", "json")
    report = json.loads(result.stdout)
    replay = standin.overlap_check(*manifest.analyze_args[1:])
    assert replay.returncode == result.returncode, replay.stderr
    assert json.loads(replay.stdout)["plans"] == report["plans"]
    plan = plan_of(report)
    # Runs 1, 3, 4 of the scenario are judged as runs 1..3: 0.0 (cold), 0.45, 0.9.
    assert [r["overlap_pct"] for r in plan["per_run"]] == pytest.approx([0.0, 0.45, 0.9])
    assert plan["provisional"] is True  # 3 runs < --min-runs 5
    assert any("run 2 not judged (failed" in note for note in report.get("notes", []))


def test_a_workload_that_never_imports_torch_npu(standin: Standin) -> None:
    result = standin.run(workload=["--no-npu"])
    assert result.returncode == 2
    message = result.stderr.strip().splitlines()[-1]
    run_1 = standin.out / "run-1"
    assert message.startswith(f"overlap-check: error: {run_1}: run 1 left no profile")
    assert "torch_npu was never imported" in message
    assert standin.manifest().runs[0].status == "no-profile"


def test_ctrl_c_forwards_keeps_completed_runs_and_exits_130(standin: Standin) -> None:
    # Interrupted once run 1 is sleeping, i.e. its payload has started the profiler.
    stdout, stderr = standin.interrupted(
        *PLAN, command=[*WORKLOAD, "--sleep", "20"], run=1, within=60
    )
    assert "interrupted" in stderr and stdout == ""
    manifest = standin.manifest()
    assert manifest.status == "interrupted"
    (run,) = manifest.runs
    assert run.status == "interrupted"
    # The workload got the SIGINT (KeyboardInterrupt), so its atexit hook exported.
    assert run.exit_code != 0
    assert len(run.result_dirs) == 1
    assert not (standin.out / "run-2").exists()


def test_ctrl_c_after_completed_runs_keeps_them(standin: Standin) -> None:
    # Runs 1 and 2 are quick; run 3 sleeps until interrupted.
    code = (
        "import os, subprocess, sys, time\n"
        "import torch_npu\n"
        "if os.environ['OVERLAP_CHECK_RUN_INDEX'] == '3':\n"
        "    time.sleep(30)\n"
    )
    _, stderr = standin.interrupted(command=[sys.executable, "-c", code], run=3, within=90)
    out = standin.out
    assert "2 completed run(s) kept" in stderr
    assert f"judge them with: overlap-check analyze {out}\n" in stderr
    manifest = standin.manifest()
    assert [r.status for r in manifest.runs] == ["ok", "ok", "interrupted"]
    assert all((out / r.result_dirs[0]).is_dir() for r in manifest.runs[:2])
    # The interrupted run exported a profile, but `analyze <out>` (and the manifest's own
    # command) read the manifest and judge runs 1 and 2 only, with a note.
    for argv in (("analyze", str(out)), manifest.analyze_args[1:]):
        replay = standin.overlap_check(*argv, "--format", "json", "-q")
        assert replay.returncode in (0, 1), replay.stderr
        report = json.loads(replay.stdout)
        assert [r["path"] for r in report["runs"]] == [
            str(out / d) for r in manifest.runs[:2] for d in r.result_dirs
        ]
        assert any(n.startswith("run 3 not judged (interrupted") for n in report["notes"])


def test_the_workload_gets_the_users_allocator_setting_not_overlap_checks(
    standin: Standin,
) -> None:
    # overlap-check sets polars' jemalloc decay for itself (cli.ALLOCATOR) when the user
    # has not: the workload's environment stays the user's
    seen = standin.root / "seen.txt"
    code = (
        "import os\nimport torch_npu\n"
        f"open({str(seen)!r}, 'a').write(repr(os.environ.get('_RJEM_MALLOC_CONF')) + '\\n')\n"
    )
    standin.env.pop("_RJEM_MALLOC_CONF", None)
    standin.judged("--runs", "1", command=[sys.executable, "-c", code])
    standin.env["_RJEM_MALLOC_CONF"] = "narenas:2"
    standin.out = standin.root / "second"
    standin.judged("--runs", "1", command=[sys.executable, "-c", code])
    assert seen.read_text().splitlines() == ["None", "'narenas:2'"]


def test_a_workload_with_its_own_sitecustomize_still_runs(standin: Standin) -> None:
    standin.env = HARNESS.standin_env(standin.root, extra_path=str(HARNESS.USER_SITE))
    result = standin.judged("--runs", "1")
    assert "user sitecustomize: yes" in result.stderr
    assert standin.manifest().runs[0].status == "ok"


def test_child_processes_are_profiled_as_their_ranks(standin: Standin) -> None:
    result = standin.judged("--runs", "2", "--format", "json", *PLAN, workload=["--child"])
    manifest = standin.manifest()
    assert [len(r.result_dirs) for r in manifest.runs] == [2, 2]
    assert [r.processes for r in manifest.runs] == [2, 2]
    report = json.loads(result.stdout)
    assert sorted({(r["rank"], r["index"]) for r in report["runs"]}) == [
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 2),
    ]


def test_window_under_run_narrows_the_capture(standin: Standin) -> None:
    standin.judged("--runs", "1", "--window", "explicit", workload=["--window"])
    assert [c["phases"] for c in standin.calls("stop")] == [["generate"]]
    assert standin.manifest().window == "explicit"


def test_level2_and_quiet(standin: Standin) -> None:
    result = standin.judged("-q", "--runs", "1", "--level", "Level2")
    assert result.stderr == ""
    (profile,) = standin.calls("profile")
    assert profile["experimental_config"]["profiler_level"] == "Level2"
    run = standin.manifest().runs[0]
    assert run.log is not None
    assert "workload-output: stdout" in (standin.out / run.log).read_text()


def test_plot_draws_the_judged_runs(standin: Standin) -> None:
    # --plot needs the kernel tables, so `run` then reads every run into memory (without it,
    # only each run's figures); the picture shows the plan of the runs just profiled.
    picture = standin.root / "timeline.png"
    result = standin.judged("--runs", "1", *PLAN, "--plot", str(picture))
    assert f"wrote {picture}" in result.stderr
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- msprof path


def test_msprof_path_exact_argv_and_median(standin: Standin) -> None:
    workload = ["--no-npu", "--marker", "x y"]
    result = standin.judged(
        "--profiler", "msprof", "--runs", "3", "--min-runs", "3", "--format", "json", *PLAN,
        workload=workload,
    )  # fmt: skip
    argvs = standin.msprof_argvs()
    assert argvs == [
        [
            f"--output={(standin.out / f'run-{i}').resolve()}",
            "--task-time=l1",
            "--ai-core=on",
            *WORKLOAD,
            *workload,
        ]
        for i in range(1, 4)
    ]
    assert standin.calls("profile") == []  # no injection with msprof
    manifest = standin.manifest()
    assert manifest.profiler == "msprof"
    assert list(manifest.profiler_argv[1:4]) == argvs[0][:3]
    assert all(len(r.result_dirs) == 1 and "/PROF_" in r.result_dirs[0] for r in manifest.runs)
    plan = plan_of(json.loads(result.stdout))
    # Runs 1-2 are cold (0.0, 0.0) and discarded; run 3 (0.45) is the only warm one.
    assert [r["overlap_pct"] for r in plan["per_run"]] == pytest.approx([0.0, 0.0, 0.45])
    assert plan["overlap_pct"] == pytest.approx(0.45)


def test_auto_picks_msprof_for_a_non_python_command(standin: Standin) -> None:
    script = standin.root / "serve.sh"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {HARNESS.WORKLOAD} --no-npu\n")
    script.chmod(0o755)
    result = standin.judged("--runs", "1", command=[str(script)])
    assert "profiler: msprof (serve.sh is not Python)" in result.stderr
    assert standin.manifest().profiler == "msprof"


def test_run_settings_from_the_config(standin: Standin) -> None:
    (standin.root / "overlap-check.toml").write_text(
        '[run]\nruns = 2\nlevel = "Level2"\nprofiler = "msprof"\n'
    )
    result = standin.judged(workload=["--no-npu"])
    assert "profiler: msprof (the config asks for msprof ([run] profiler))" in result.stderr
    assert [a[1] for a in standin.msprof_argvs()] == ["--task-time=l2", "--task-time=l2"]
    manifest = standin.manifest()
    assert (manifest.runs_requested, manifest.level, len(manifest.runs)) == (2, "Level2", 2)


def test_keep_going_with_no_profile_at_all(standin: Standin) -> None:
    result = standin.run("--runs", "2", "--keep-going", workload=["--no-npu"])
    assert result.returncode == 2
    assert "none of the 2 runs left a usable profile" in result.stderr
    assert "torch_npu was never imported" in result.stderr
    assert [r.status for r in standin.manifest().runs] == ["no-profile", "no-profile"]


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
    standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in standin.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(standin.root)
    result = CliRunner().invoke(
        cli, ["run", "--runs", "2", "--format", "json", *PLAN, "--", *WORKLOAD]
    )
    assert result.exit_code in (0, 1), result.output
    (out,) = (standin.root / "overlap-check-runs").iterdir()
    assert len(out.name) == len("20260101-120000")
    manifest = read_manifest(out)
    assert [r.status for r in manifest.runs] == ["ok", "ok"]
    assert manifest.options["runs"] == 2
    assert "torch_npu" not in sys.modules  # the test process never imported it


# --------------------------------------------------------------------------- faults


def assert_closed(manifest: Manifest, status: str) -> None:
    """The session ended as ``status``: nothing left ``running``, completed runs listed."""
    assert manifest.status == status
    assert all(r.status != "running" for r in manifest.runs)
    assert all(r.result_dirs for r in manifest.runs if r.status == "ok")


def test_a_command_that_does_not_exist_is_a_failed_workload(standin: Standin) -> None:
    result = standin.run("--profiler", "torch_npu", command=["/nonexistent"])
    assert result.returncode == 3, result.stderr
    assert "run 1 of 5: the command failed (command not found: /nonexistent)" in result.stderr
    assert "Traceback" not in result.stderr
    manifest = standin.manifest()
    assert_closed(manifest, "failed")
    assert [(r.status, r.exit_code, r.problem) for r in manifest.runs] == [
        ("failed", 127, "command not found: /nonexistent")
    ]


@pytest.mark.parametrize(
    ("place", "reason"),
    [
        ("file/runs", "Not a directory"),
        ("/proc/overlap-check-runs", ""),
        ("/sys/overlap-check-runs", ""),
    ],
)
def test_an_out_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str, reason: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("a regular file")
    out = Path(place) if place.startswith("/") else tmp_path / place
    result = CliRunner().invoke(cli, ["run", "--out", str(out), "--", *WORKLOAD])
    assert result.exit_code == 2, result.output
    assert f"overlap-check: error: cannot use --out {out}: {reason}" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def full_disk_after(
    monkeypatch: pytest.MonkeyPatch, writes: int, error: int, *, reserve_helps: bool
) -> None:
    """Manifest writes fail with ``error`` after ``writes`` good ones; with ``reserve_helps``,
    they work again once the reserve file is given up (what it is kept for)."""
    import overlap_check.runner.manifest as manifest_module

    real = manifest_module._write_atomically
    calls = iter(range(1000))

    def write(target: Path, text: str) -> Path:
        reserve = target.parent / manifest_module.RESERVE_NAME
        if next(calls) >= writes and (reserve.exists() or not reserve_helps):
            raise OSError(error, os.strerror(error))
        return real(target, text)

    monkeypatch.setattr(manifest_module, "_write_atomically", write)


def in_process_run(standin: Standin, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    for key, value in standin.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(standin.root)
    return CliRunner().invoke(cli, ["run", "--out", str(standin.out), *args, "--", *WORKLOAD])


def test_a_disk_that_fills_up_during_run_2(
    standin: Standin, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writes: the opening manifest, run 1 started, run 1 ended; run 2's start fails.
    full_disk_after(monkeypatch, 3, errno.ENOSPC, reserve_helps=True)
    result = in_process_run(standin, monkeypatch, "--runs", "3")
    assert result.exit_code == 2, result.output
    assert f"{standin.out}: cannot write the runs: No space left on device" in result.output
    assert "1 completed run(s) kept" in result.output and "Traceback" not in result.output
    manifest = standin.manifest()
    assert_closed(manifest, "failed")  # the reserve paid for the closing write
    # Run 2 never started: its record could not be written.
    assert [(r.status, r.problem) for r in manifest.runs] == [
        ("ok", None),
        ("failed", "No space left on device"),
    ]
    assert manifest.problem == "cannot write: No space left on device"


def test_a_disk_that_turns_read_only(standin: Standin, monkeypatch: pytest.MonkeyPatch) -> None:
    full_disk_after(monkeypatch, 3, errno.EROFS, reserve_helps=False)
    result = in_process_run(standin, monkeypatch, "--runs", "3")
    assert result.exit_code == 2, result.output
    assert "cannot write the runs: Read-only file system" in result.output
    assert "manifest.json could not be updated and may still say running" in result.output


def test_closed_stdout_and_stderr_end_the_session_cleanly(standin: Standin) -> None:
    # `run ... 2>&1 | head -1`: the reader leaves after the first line.
    proc = standin.start("--runs", "2", command=WORKLOAD)
    assert proc.stderr is not None and proc.stdout is not None
    assert proc.stderr.readline().startswith("overlap-check: profiler:")
    proc.stderr.close()
    proc.stdout.close()
    assert proc.wait(timeout=180) in (0, 1)  # the gate's code, not click's 1 for EPIPE
    manifest = standin.manifest()
    assert_closed(manifest, "complete")
    assert [r.status for r in manifest.runs] == ["ok", "ok"]
    # Once our stderr was gone, the workload's output went to its log instead.
    assert all(r.log and (standin.out / r.log).is_file() for r in manifest.runs)


def test_a_profile_cut_short_by_a_file_size_limit_is_not_judged(standin: Standin) -> None:
    # Run 2 runs under RLIMIT_FSIZE = 20000 bytes: trace_view.json (~75 KB) is cut short.
    launcher = (
        "import os, resource, sys\n"
        "if os.environ['OVERLAP_CHECK_RUN_INDEX'] == '2':\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))\n"
        f"os.execv(sys.executable, [sys.executable, {str(HARNESS.WORKLOAD)!r}])\n"
    )
    result = standin.judged(
        "--runs", "3", "--format", "json", *PLAN, command=[sys.executable, "-c", launcher]
    )
    manifest = standin.manifest()
    assert [r.status for r in manifest.runs] == ["ok", "incomplete", "ok"]
    assert "export failed" in (manifest.runs[1].problem or "")
    report = json.loads(result.stdout)
    assert len(report["runs"]) == 2  # runs 1 and 3
    assert any(n.startswith("run 2 not judged (incomplete: ") for n in report["notes"])


@pytest.mark.parametrize(("damage", "status"), [("empty", "incomplete"), ("garbage", "bad-data")])
def test_one_run_with_a_bad_kernel_table_leaves_the_others_judged(
    standin: Standin, damage: str, status: str
) -> None:
    standin.env["FAKE_TORCH_NPU_DAMAGE"] = f"2:{damage}"
    result = standin.judged("--runs", "3", "--format", "json", *PLAN)
    manifest = standin.manifest()
    assert [r.status for r in manifest.runs] == ["ok", status, "ok"]
    assert "kernel_details.csv" in (manifest.runs[1].problem or "")
    report = json.loads(result.stdout)
    assert [r["index"] for r in report["runs"]] == [1, 2]  # scenario runs 1 and 3
    assert any(n.startswith(f"run 2 not judged ({status}: ") for n in report["notes"])
    # The text report shows the partial result too.
    again = standin.overlap_check("analyze", str(standin.out), *PLAN, "-q")
    assert f"run 2 not judged ({status}: " in again.stdout


def test_an_interrupt_before_the_first_run_leaves_no_out_folder(tmp_path: Path) -> None:
    # A signal after prepare_out_dir made the folder and its lock file; the folder made
    # for the session must still go, as it holds no run (test_run_faults found this at
    # random: "out without a manifest").
    from overlap_check.cli.run import _Progress
    from overlap_check.runner.session import LOCK_NAME

    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_bytes(b"")
    progress = _Progress(quiet=True)
    progress.out = out
    progress.forget_empty_out()
    assert not out.exists()
    # a folder with anything else in it is kept
    out.mkdir()
    (out / "mine.txt").write_text("x")
    progress.forget_empty_out()
    assert (out / "mine.txt").is_file()
