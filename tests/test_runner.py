"""The `run` machinery without the CLI: payload injection, window modes, manifest, processes.

The workload runs in subprocesses with the stand-in torch_npu (tests/standins)
on PYTHONPATH; the fake records every profiler call it gets.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from overlap_check.model.errors import InputError, UsageError
from overlap_check.runner import profilers
from overlap_check.runner.manifest import (
    MANIFEST_NAME,
    Manifest,
    RunRecord,
    read_manifest,
    write_manifest,
)
from overlap_check.runner.process import (
    SignalForwarder,
    describe_exit,
    run_workload,
)


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HARNESS = _load("overlap_check_test_harness", Path(__file__).parent / "standins" / "harness.py")
PAYLOAD_FILE = profilers.INJECT_DIR / "sitecustomize.py"


def run_python(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def injected(
    tmp_path: Path, run_dir: Path, *, level: str = "Level1", window: str = "auto", **kw: str
) -> dict[str, str]:
    base = HARNESS.standin_env(tmp_path, **kw)
    return profilers.injection_env(base, run_dir, level=level, window=window, run_index=1)


# --------------------------------------------------------------------------- injection env


def test_payload_names_match_the_injection_module() -> None:
    payload = _load("payload_under_test", PAYLOAD_FILE)
    assert payload.ENV_RUN_DIR == profilers.ENV_RUN_DIR
    assert payload.ENV_LEVEL == profilers.ENV_LEVEL
    assert payload.ENV_WINDOW == profilers.ENV_WINDOW
    assert payload.STATUS_DIR == profilers.STATUS_DIR
    assert payload.PAYLOAD_MODULE == profilers.PAYLOAD_MODULE
    from overlap_check.runner import api

    assert api.PAYLOAD_MODULE == payload.PAYLOAD_MODULE


def test_payload_is_python_3_8_syntax() -> None:
    # It runs inside the workload's interpreter, which is often older than ours.
    import ast

    ast.parse(PAYLOAD_FILE.read_text(), feature_version=(3, 8))
    source = PAYLOAD_FILE.read_text()
    assert "from __future__ import annotations" in source  # PEP 604/585 hints stay strings


def test_injection_env_prepends_the_payload_and_keeps_the_user_path(tmp_path: Path) -> None:
    base = {"PYTHONPATH": f"/a{os.pathsep}/b", "HOME": "/home/x"}
    env = profilers.injection_env(
        base, tmp_path / "run-2", level="Level2", window="explicit", run_index=2
    )
    assert env["PYTHONPATH"] == os.pathsep.join([str(profilers.INJECT_DIR), "/a", "/b"])
    assert env["OVERLAP_CHECK_RUN_DIR"] == str((tmp_path / "run-2").resolve())
    assert env["OVERLAP_CHECK_LEVEL"] == "Level2"
    assert env["OVERLAP_CHECK_WINDOW"] == "explicit"
    assert env["OVERLAP_CHECK_RUN_INDEX"] == "2"
    assert env["HOME"] == "/home/x"
    assert base["PYTHONPATH"] == f"/a{os.pathsep}/b"  # the caller's mapping is untouched
    bare = profilers.injection_env({}, tmp_path, level="Level1", window="auto", run_index=1)
    assert bare["PYTHONPATH"] == str(profilers.INJECT_DIR)


def test_check_output_path_follows_torch_npus_rule(tmp_path: Path) -> None:
    profilers.check_output_path(tmp_path / "overlap-check-runs" / "20260101-120000")
    profilers.check_output_path(tmp_path / "my runs" / "v1.2_~x")
    with pytest.raises(UsageError, match="torch_npu cannot write under") as err:
        profilers.check_output_path(tmp_path / "runs+fast")
    assert err.value.hint is not None and "--out" in err.value.hint
    link = tmp_path / "link"
    (tmp_path / "a=b").mkdir()
    link.symlink_to(tmp_path / "a=b")
    with pytest.raises(UsageError):  # judged on the real path, as torch_npu does
        profilers.check_output_path(link / "out")


# --------------------------------------------------------------------------- the payload


def test_payload_starts_the_profiler_with_the_documented_arguments(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = run_python([str(HARNESS.WORKLOAD)], injected(tmp_path, run_dir), tmp_path)
    assert result.returncode == 0, result.stderr
    profiles = HARNESS.calls(tmp_path, "profile")
    assert len(profiles) == 1
    assert profiles[0]["activities"] == ["ProfilerActivity.CPU", "ProfilerActivity.NPU"]
    assert profiles[0]["experimental_config"]["profiler_level"] == "Level1"
    assert profiles[0]["experimental_config"]["aic_metrics"] == "ACL_AICORE_PIPE_UTILIZATION"
    assert profiles[0]["on_trace_ready"] == "_TraceHandler"
    handlers = HARNESS.calls(tmp_path, "tensorboard_trace_handler")
    assert [h["dir_name"] for h in handlers] == [str(run_dir.resolve())]
    assert handlers[0]["analyse_flag"] is True
    # Started before the workload's work (after torch_npu's import), stopped at exit.
    calls = [c["call"] for c in HARNESS.read_jsonl(tmp_path / "torch_npu-calls.jsonl")]
    assert calls == [
        "import",
        "tensorboard_trace_handler",
        "profile",
        "start",
        "phase",
        "stop",
        "export",
    ]
    assert HARNESS.calls(tmp_path, "phase")[0]["profiling"] is True
    found = profilers.find_result_dirs(run_dir)
    assert len(found) == 1 and found[0].name.endswith("_ascend_pt")
    assert f"_{profiles[0]['pid']}_" in found[0].name  # <host>_<pid>_<timestamp>_ascend_pt
    assert profilers.is_parsed(found[0])
    (trace,) = profilers.read_process_traces(run_dir)
    assert trace.events == (
        "payload-loaded",
        "torch_npu-imported",
        "profiler-started",
        "profiler-stopped",
    )


def test_payload_passes_level2(tmp_path: Path) -> None:
    result = run_python(
        [str(HARNESS.WORKLOAD)], injected(tmp_path, tmp_path / "run", level="Level2"), tmp_path
    )
    assert result.returncode == 0, result.stderr
    (profile,) = HARNESS.calls(tmp_path, "profile")
    assert profile["experimental_config"]["profiler_level"] == "Level2"


def test_payload_never_imports_torch_npu_itself(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = run_python([str(HARNESS.WORKLOAD), "--no-npu"], injected(tmp_path, run_dir), tmp_path)
    assert result.returncode == 0, result.stderr
    assert HARNESS.read_jsonl(tmp_path / "torch_npu-calls.jsonl") == []  # not even imported
    (trace,) = profilers.read_process_traces(run_dir)
    assert trace.events == ("payload-loaded",)
    assert profilers.find_result_dirs(run_dir) == ()
    why = profilers.explain_missing_profile(run_dir, "auto")
    assert "torch_npu was never imported" in why


def test_payload_is_inert_without_a_run_dir_and_still_chains(tmp_path: Path) -> None:
    env = HARNESS.standin_env(tmp_path, extra_path=str(HARNESS.USER_SITE))
    env["PYTHONPATH"] = str(profilers.INJECT_DIR) + os.pathsep + env["PYTHONPATH"]
    result = run_python([str(HARNESS.WORKLOAD)], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert HARNESS.calls(tmp_path, "profile") == []
    assert "user sitecustomize: yes" in result.stderr


def test_payload_chains_to_the_users_sitecustomize(tmp_path: Path) -> None:
    env = injected(tmp_path, tmp_path / "run", extra_path=str(HARNESS.USER_SITE))
    code = (
        "import sys, os; m = sys.modules['sitecustomize']; "
        "print(m.__file__); print(os.environ.get('USER_SITECUSTOMIZE_RAN')); "
        "print('_overlap_check_payload' in sys.modules)"
    )
    result = run_python(["-c", code], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(HARNESS.USER_SITE / "sitecustomize.py"), "yes", "True"]


def test_a_failing_user_sitecustomize_is_reported_and_the_workload_runs(tmp_path: Path) -> None:
    broken = tmp_path / "broken_site"
    broken.mkdir()
    (broken / "sitecustomize.py").write_text("raise RuntimeError('user site is broken')\n")
    env = injected(tmp_path, tmp_path / "run", extra_path=str(broken))
    result = run_python([str(HARNESS.WORKLOAD)], env, tmp_path)
    assert result.returncode == 0
    assert "Error in sitecustomize" in result.stderr
    assert "RuntimeError: user site is broken" in result.stderr
    assert len(HARNESS.calls(tmp_path, "start")) == 1  # profiling still works


def test_a_child_process_is_profiled_into_the_same_run_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = run_python([str(HARNESS.WORKLOAD), "--child"], injected(tmp_path, run_dir), tmp_path)
    assert result.returncode == 0, result.stderr
    starts = HARNESS.calls(tmp_path, "start")
    assert len({s["pid"] for s in starts}) == 2
    found = profilers.find_result_dirs(run_dir)
    assert len(found) == 2
    assert sorted(p.name.split("_")[-4] for p in found) == sorted(str(s["pid"]) for s in starts)
    assert len(profilers.read_process_traces(run_dir)) == 2


def test_a_launcher_process_is_not_profiled_but_its_ranks_are(tmp_path: Path) -> None:
    launcher = tmp_path / "torchrun"
    launcher.write_text(
        f"#!{sys.executable}\n"
        "import os, subprocess, sys\n"
        "import torch_npu  # torch's backend autoload imports it in launchers too\n"
        f"subprocess.run([sys.executable, {str(HARNESS.WORKLOAD)!r}], "
        "env=dict(os.environ, RANK='0'), check=True)\n"
    )
    launcher.chmod(0o755)
    run_dir = tmp_path / "run"
    result = subprocess.run(
        [str(launcher)],
        env=injected(tmp_path, run_dir),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    traces = profilers.read_process_traces(run_dir)
    events = sorted(t.events for t in traces)
    assert events == [
        ("payload-loaded", "torch_npu-imported", "profiler-started", "profiler-stopped"),
        ("payload-loaded", "torch_npu-imported", "skipped"),
    ]
    assert len(profilers.find_result_dirs(run_dir)) == 1


def test_python_m_torch_distributed_run_is_a_launcher(tmp_path: Path) -> None:
    # A fake torch whose import pulls in torch_npu, as torch's backend autoload does.
    fake = tmp_path / "fake_torch"
    (fake / "torch" / "distributed").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("import torch_npu\n")
    (fake / "torch" / "distributed" / "__init__.py").write_text("")
    (fake / "torch" / "distributed" / "run.py").write_text(
        "import os, subprocess, sys\n"
        f"subprocess.run([sys.executable, {str(HARNESS.WORKLOAD)!r}], check=True)\n"
    )
    run_dir = tmp_path / "run"
    env = injected(tmp_path, run_dir, extra_path=str(fake))
    result = run_python(["-X", "utf8", "-m", "torch.distributed.run"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    skipped = [t for t in profilers.read_process_traces(run_dir) if "skipped" in t.events]
    assert len(skipped) == 1
    assert len(profilers.find_result_dirs(run_dir)) == 1  # the rank's only


def test_dash_m_module() -> None:
    payload = _load("payload_under_test", PAYLOAD_FILE)
    assert payload._dash_m_module(["python", "-m", "torch.distributed.run", "x.py"]) == (
        "torch.distributed.run"
    )
    assert payload._dash_m_module(["python", "-X", "utf8", "-mtorch.distributed.run"]) == (
        "torch.distributed.run"
    )
    assert payload._dash_m_module(["python", "x.py", "-m", "torch.distributed.run"]) is None
    assert payload._dash_m_module(["python", "-c", "pass", "-m", "x"]) is None
    assert payload._dash_m_module(["python", "-u", "-m"]) is None


def test_a_forked_child_leaves_the_capture_to_its_parent(tmp_path: Path) -> None:
    code = (
        "import os, sys, torch_npu\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sys.exit(0)  # runs exit hooks in the child\n"
        "os.waitpid(pid, 0)\n"
        "torch_npu.phase('after-fork')\n"
    )
    run_dir = tmp_path / "run"
    result = run_python(["-c", code], injected(tmp_path, run_dir), tmp_path)
    assert result.returncode == 0, result.stderr
    stops = HARNESS.calls(tmp_path, "stop")
    assert [s["phases"] for s in stops] == [["after-fork"]]  # stopped once, by the parent
    assert len(profilers.find_result_dirs(run_dir)) == 1


def test_a_failed_parse_is_explained(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = injected(tmp_path, run_dir)
    env["FAKE_TORCH_NPU_PARSE_FAIL"] = "1"
    assert run_python([str(HARNESS.WORKLOAD)], env, tmp_path).returncode == 0
    (written,) = profilers.find_result_dirs(run_dir)
    assert not profilers.is_parsed(written)
    why = profilers.explain_missing_profile(run_dir, "auto")
    assert f"torch_npu wrote {written.name} but did not parse it" in why
    assert str(written / "logs") in why


def test_explain_missing_profile_without_payload(tmp_path: Path) -> None:
    why = profilers.explain_missing_profile(tmp_path, "auto")
    assert "payload was never loaded" in why and "--profiler msprof" in why


# --------------------------------------------------------------------------- profile() window


def _phases_of_surviving_capture(tmp_path: Path, run_dir: Path) -> list[list[str]]:
    exported = {c["dir"]: c["phases"] for c in HARNESS.calls(tmp_path, "export")}
    return [exported[str(p)] for p in profilers.find_result_dirs(run_dir)]


def test_window_auto_discards_the_process_capture(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = run_python(
        [str(HARNESS.WORKLOAD), "--window"], injected(tmp_path, run_dir, window="auto"), tmp_path
    )
    assert result.returncode == 0, result.stderr
    # Process-wide capture (load), stopped and deleted at the block; then the block alone.
    assert [c["phases"] for c in HARNESS.calls(tmp_path, "stop")] == [["load"], ["generate"]]
    assert _phases_of_surviving_capture(tmp_path, run_dir) == [["generate"]]
    (trace,) = profilers.read_process_traces(run_dir)
    assert trace.events == (
        "payload-loaded",
        "torch_npu-imported",
        "profiler-started",
        "profiler-stopped",
        "discarded",
        "profiler-started",
        "profiler-stopped",
    )
    phases = {c["name"]: c["profiling"] for c in HARNESS.calls(tmp_path, "phase")}
    assert phases == {"load": True, "generate": True, "teardown": False}


def test_window_explicit_captures_only_the_block(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = injected(tmp_path, run_dir, window="explicit")
    assert run_python([str(HARNESS.WORKLOAD), "--window"], env, tmp_path).returncode == 0
    assert [c["phases"] for c in HARNESS.calls(tmp_path, "stop")] == [["generate"]]
    phases = {c["name"]: c["profiling"] for c in HARNESS.calls(tmp_path, "phase")}
    assert phases == {"load": False, "generate": True, "teardown": False}
    assert _phases_of_surviving_capture(tmp_path, run_dir) == [["generate"]]


def test_window_explicit_without_a_block_is_explained(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = injected(tmp_path, run_dir, window="explicit")
    assert run_python([str(HARNESS.WORKLOAD)], env, tmp_path).returncode == 0
    assert HARNESS.calls(tmp_path, "start") == []
    why = profilers.explain_missing_profile(run_dir, "explicit")
    assert "no overlap_check.profile() block was entered" in why


def test_window_process_ignores_the_block(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    env = injected(tmp_path, run_dir, window="process")
    assert run_python([str(HARNESS.WORKLOAD), "--window"], env, tmp_path).returncode == 0
    assert [c["phases"] for c in HARNESS.calls(tmp_path, "stop")] == [
        ["load", "generate", "teardown"]
    ]


def test_only_the_first_block_of_a_process_is_captured(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code = (
        "import overlap_check, torch_npu\n"
        "for name in ('first', 'second'):\n"
        "    with overlap_check.profile():\n"
        "        with overlap_check.profile():\n"
        "            torch_npu.phase(name)\n"
    )
    env = injected(tmp_path, run_dir, window="explicit")
    result = run_python(["-c", code], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert [c["phases"] for c in HARNESS.calls(tmp_path, "stop")] == [["first"]]
    assert len(profilers.find_result_dirs(run_dir)) == 1


def test_profile_outside_run_is_a_no_op_and_imports_nothing(tmp_path: Path) -> None:
    import overlap_check

    had_torch_npu = "torch_npu" in sys.modules
    with overlap_check.profile():
        value = 1 + 1
    assert value == 2
    assert ("torch_npu" in sys.modules) == had_torch_npu
    # And in a workload with torch_npu importable but no payload.
    env = HARNESS.standin_env(tmp_path)
    result = run_python([str(HARNESS.WORKLOAD), "--window", "--no-npu"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "torch_npu imported: False" in result.stdout


def test_profile_works_as_a_decorator() -> None:
    import overlap_check

    @overlap_check.profile()
    def twice(x: int) -> int:
        return 2 * x

    assert twice(3) == 6 and twice(4) == 8  # re-entrant: a fresh block per call


# --------------------------------------------------------------------------- msprof / choice


def test_msprof_argv_is_exact(tmp_path: Path) -> None:
    argv = profilers.msprof_argv(
        "/opt/msprof", tmp_path / "run-1", ["python", "x.py", "--n", "2"], "Level1"
    )
    assert argv == [
        "/opt/msprof",
        f"--output={(tmp_path / 'run-1').resolve()}",
        "--task-time=l1",
        "--ai-core=on",
        "python",
        "x.py",
        "--n",
        "2",
    ]
    assert profilers.msprof_argv("msprof", tmp_path, ["app"], "Level2")[2] == "--task-time=l2"


def test_find_prof_dirs_and_the_missing_export(tmp_path: Path) -> None:
    (tmp_path / "PROF_000001_20260823165413436_00626258NIRJNPIC" / "device_0").mkdir(parents=True)
    (tmp_path / "PROF_notadir.txt").write_text("")
    (tmp_path / "PROFILE_x").mkdir()
    found = profilers.find_prof_dirs(tmp_path)
    assert [p.name for p in found] == ["PROF_000001_20260823165413436_00626258NIRJNPIC"]
    assert not profilers.is_exported(found[0])
    assert "--export=on" in profilers.explain_missing_prof(tmp_path)
    output = found[0] / "mindstudio_profiler_output"
    output.mkdir()
    (output / "op_summary_20260823165413.csv").write_text("Op Name\n")
    assert profilers.is_exported(found[0])


@pytest.mark.parametrize(
    ("argv0", "expected"),
    [
        ("python", True),
        ("python3", True),
        ("python3.11", True),
        ("/usr/bin/python3.10", True),
        ("python3.13t", True),
        ("infer.py", True),
        ("pythonista", False),
        ("bash", False),
    ],
)
def test_is_python_command_by_name(argv0: str, expected: bool) -> None:
    assert profilers.is_python_command(argv0, {"PATH": ""}) is expected


def test_is_python_command_by_shebang(tmp_path: Path) -> None:
    (tmp_path / "torchrun").write_text("#!/opt/venv/bin/python3\nimport sys\n")
    (tmp_path / "serve.sh").write_text("#!/bin/bash\npython x.py\n")
    for script in ("torchrun", "serve.sh"):
        (tmp_path / script).chmod(0o755)
    env = {"PATH": str(tmp_path)}
    assert profilers.is_python_command("torchrun", env)
    assert not profilers.is_python_command("serve.sh", env)
    assert not profilers.is_python_command("not-there", env)


def test_choose_profiler(tmp_path: Path) -> None:
    (tmp_path / "msprof").write_text("#!/bin/sh\n")
    (tmp_path / "msprof").chmod(0o755)
    with_msprof = {"PATH": str(tmp_path)}
    without = {"PATH": str(tmp_path / "empty")}
    assert profilers.choose_profiler("auto", ["python", "x.py"], with_msprof)[0] == "torch_npu"
    assert profilers.choose_profiler("auto", ["./serve.sh"], with_msprof)[0] == "msprof"
    chosen, why = profilers.choose_profiler("auto", ["./serve.sh"], without)
    assert chosen == "torch_npu" and "msprof is not on PATH" in why
    assert (
        profilers.choose_profiler("auto", ["python"], with_msprof, configured="msprof")[0]
        == "msprof"
    )
    assert profilers.choose_profiler("msprof", ["python"], without)[0] == "msprof"
    assert profilers.choose_profiler("torch_npu", ["./serve.sh"], with_msprof)[0] == "torch_npu"


# --------------------------------------------------------------------------- manifest


def _manifest() -> Manifest:
    return Manifest(
        tool_version="0.1.0",
        command=("python", "infer.py"),
        cwd="/work",
        profiler="torch_npu",
        profiler_reason="python is Python",
        level="Level1",
        window="auto",
        runs_requested=5,
        created="2026-01-01T00:00:00+00:00",
        options={"runs": 5},
    )


def test_manifest_round_trip_and_atomic_write(tmp_path: Path) -> None:
    manifest = _manifest().with_run(RunRecord(index=2, dir="run-2", started="t2", status="failed"))
    manifest = manifest.with_run(
        RunRecord(
            index=1, dir="run-1", started="t1", status="ok", result_dirs=("run-1/a_ascend_pt",)
        )
    )
    write_manifest(tmp_path, manifest)
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST_NAME]  # no temp file left
    again = read_manifest(tmp_path)
    assert again == manifest
    assert [r.index for r in again.runs] == [1, 2]
    assert [r.index for r in again.usable_runs()] == [1]
    replaced = again.with_run(RunRecord(index=2, dir="run-2", started="t2", status="ok"))
    assert [r.status for r in replaced.runs] == ["ok", "ok"]
    assert json.loads((tmp_path / MANIFEST_NAME).read_text())["tool"] == "overlap-check"


def test_read_manifest_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / MANIFEST_NAME
    path.write_text('{\n  "tool": "overlap-check",\n  oops\n}\n')
    with pytest.raises(InputError) as err:
        read_manifest(path)
    assert err.value.path == str(path) and err.value.line == 3
    path.write_text('{"tool": "something-else"}')
    with pytest.raises(InputError, match="not an overlap-check run manifest"):
        read_manifest(tmp_path)
    path.write_text('{"tool": "overlap-check", "manifest_version": 99}')
    with pytest.raises(InputError, match="unsupported manifest_version 99"):
        read_manifest(path)


# --------------------------------------------------------------------------- processes


def test_run_workload_exit_code_and_output_to_a_stream_without_fd(tmp_path: Path) -> None:
    sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    result = run_workload(
        [
            sys.executable,
            "-c",
            # one write per line: print() may split a line in two writes on unbuffered
            # stderr, and the two pipes are then interleaved mid-line (as on a terminal)
            "import os, sys; os.write(1, b'out\\n'); os.write(2, b'err\\n'); sys.exit(4)",
        ],
        env=dict(os.environ),
        cwd=tmp_path,
        forwarder=SignalForwarder(),
        output=sink,
    )
    assert result.exit_code == 4 and not result.interrupted
    sink.flush()
    text = sink.buffer.getvalue().decode()  # type: ignore[attr-defined]
    assert sorted(text.split()) == ["err", "out"]


def test_run_workload_quiet_writes_a_log(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "workload.log"
    result = run_workload(
        [sys.executable, "-c", "print('hello')"],
        env=dict(os.environ),
        cwd=tmp_path,
        forwarder=SignalForwarder(),
        output=None,
        log_path=log,
    )
    assert result.exit_code == 0
    assert log.read_text() == "hello\n"


def test_run_workload_command_not_found(tmp_path: Path) -> None:
    # The workload failed (the shell's 127), not a traceback nor a usage error.
    result = run_workload(
        ["no-such-command-xyz"],
        env=dict(os.environ),
        cwd=tmp_path,
        forwarder=SignalForwarder(),
        output=None,
    )
    assert (result.exit_code, result.problem) == (127, "command not found: no-such-command-xyz")


class ClosedPipe(io.StringIO):
    """A stream whose reader went away after ``lines`` writes (``run ... 2>&1 | head``)."""

    def __init__(self, writes: int) -> None:
        super().__init__()
        self.writes = writes

    def write(self, text: str) -> int:
        if self.writes == 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.writes -= 1
        return super().write(text)


def test_a_closed_output_sends_the_rest_to_the_log(tmp_path: Path) -> None:
    log = tmp_path / "workload.log"
    code = "import os, time\nos.write(1, b'first\\n')\ntime.sleep(0.3)\nos.write(2, b'second\\n')\n"
    result = run_workload(
        [sys.executable, "-c", code],
        env=dict(os.environ),
        cwd=tmp_path,
        forwarder=SignalForwarder(),
        output=ClosedPipe(writes=1),
        log_path=log,
    )
    assert result.exit_code == 0  # the workload never saw the closed pipe
    assert log.read_text() == "second\n"
    assert result.output_problem == "output stopped (Broken pipe); the rest went to the log"


def test_signals_are_forwarded_to_the_group_and_escalate(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    script = (
        "import signal, sys, time\n"
        f"def note(n, f): open({str(seen)!r}, 'a').write(signal.Signals(n).name + '\\n')\n"
        "signal.signal(signal.SIGINT, note)\n"
        "signal.signal(signal.SIGTERM, note)\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], start_new_session=True, stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        forwarder = SignalForwarder()
        forwarder.child = child
        # wait for each signal to land before the next: two pending signals may run
        # their Python handlers in either order, which is not what is under test
        for count in (1, 2):
            forwarder._handle(signal.SIGINT, None)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(_lines(seen)) < count:
                time.sleep(0.02)
        assert _lines(seen) == ["SIGINT", "SIGTERM"]
        forwarder._handle(signal.SIGINT, None)  # the third is SIGKILL
        assert child.wait(timeout=10) == -signal.SIGKILL
        assert forwarder.interrupted and forwarder.received == [signal.SIGINT] * 3
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_describe_exit() -> None:
    assert describe_exit(3) == "exit code 3"
    assert describe_exit(-signal.SIGKILL) == "killed by SIGKILL"


# --------------------------------------------------------------------------- faults


def test_cut_short_finds_the_file_that_ends_mid_way(tmp_path: Path) -> None:
    import sqlite3

    from overlap_check.runner.profilers import cut_short

    out = tmp_path / "ASCEND_PROFILER_OUTPUT"
    out.mkdir()
    (out / "kernel_details.csv").write_text("Name,Start Time(us)\nA,1\n")
    (out / "trace_view.json").write_text('[{"ph": "X"}]\n')
    db = out / "analysis.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE t (x)")
        connection.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 40)
    connection.close()
    (out / "raw.bin").write_bytes(b"\x00\x01")  # not a format we check
    assert cut_short(tmp_path) is None
    whole = db.read_bytes()
    page_size = int.from_bytes(whole[16:18], "big")
    db.write_bytes(whole[: 2 * page_size])  # a page-aligned cut, as a size limit makes
    assert cut_short(tmp_path) == (
        f"{db} holds {2 * page_size} of the {len(whole)} bytes its header counts: "
        "the export was cut short (a file-size limit, a full disk?)"
    )
    db.unlink()
    (out / "trace_view.json").write_text('[{"ph": "X"}, {"ph"')
    assert "trace_view.json ends in the middle of its JSON" in (cut_short(tmp_path) or "")
    (out / "kernel_details.csv").write_text("Name,Start Time(us)\nA,")
    assert "kernel_details.csv ends in the middle of a line" in (cut_short(tmp_path) or "")
    (out / "kernel_details.csv").write_text("")
    assert "kernel_details.csv is empty" in (cut_short(tmp_path) or "")


def test_the_closing_write_may_use_the_reserve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    import overlap_check.runner.manifest as manifest_module

    manifest = _manifest()
    manifest_module.reserve_space(tmp_path)
    reserve = tmp_path / manifest_module.RESERVE_NAME
    assert reserve.stat().st_size == 256 * 1024
    real = manifest_module._write_atomically

    def full(target: Path, text: str) -> Path:
        if reserve.exists():
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, text)

    monkeypatch.setattr(manifest_module, "_write_atomically", full)
    with pytest.raises(OSError, match="No space left"):
        write_manifest(tmp_path, manifest)  # an ordinary write keeps the reserve
    assert reserve.exists()
    write_manifest(tmp_path, manifest, closing=True)
    assert not reserve.exists() and read_manifest(tmp_path) == manifest


def test_a_run_folder_is_read_as_its_completed_runs(tmp_path: Path) -> None:
    from dataclasses import replace

    from overlap_check.runner.manifest import run_folder_paths

    runs = (
        RunRecord(1, "run-1", "t", status="ok", result_dirs=("run-1/a_ascend_pt",)),
        RunRecord(2, "run-2", "t", status="interrupted", result_dirs=("run-2/b_ascend_pt",)),
    )
    write_manifest(tmp_path, replace(_manifest(), runs=runs, status="interrupted"))
    paths, notes = run_folder_paths([str(tmp_path), "other"])
    assert paths == [str(tmp_path / "run-1" / "a_ascend_pt"), "other"]
    assert notes == ["run 2 not judged (interrupted: exit code None)"]
    write_manifest(tmp_path, replace(_manifest(), runs=runs[:1], status="complete"))
    assert run_folder_paths([str(tmp_path)]) == ([str(tmp_path)], [])
    write_manifest(tmp_path, replace(_manifest(), runs=runs[1:], status="running"))
    with pytest.raises(InputError, match="no completed run to judge in this run folder"):
        run_folder_paths([str(tmp_path)])


def test_a_signal_outside_the_run_loop_interrupts_once() -> None:
    forwarder = SignalForwarder()
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with forwarder.installed():
            with forwarder.deferred():
                os.kill(os.getpid(), signal.SIGTERM)  # only recorded
                time.sleep(0.05)
            assert forwarder.received == [signal.SIGTERM]
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)
            os.kill(os.getpid(), signal.SIGINT)  # already ending: ignored
            time.sleep(0.05)
        assert forwarder.received == [signal.SIGTERM] * 2 + [signal.SIGINT]
        assert {s: signal.getsignal(s) for s in saved} == saved
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
