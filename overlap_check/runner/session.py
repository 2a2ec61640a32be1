"""The ``run`` loop: profile the workload N times into ``<out>/run-<i>/``, keeping a manifest.

Pure orchestration: process handling is in :mod:`process`, the profilers'
specifics in :mod:`torch_npu_injection` and :mod:`msprof`, the record in
:mod:`manifest`. Progress goes through a callback (the CLI prints it on
stderr); errors are raised only after the manifest says what happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from overlap_check.errors import InputError, Interrupted, WorkloadError
from overlap_check.runner import msprof, torch_npu_injection
from overlap_check.runner.manifest import (
    Manifest,
    RunRecord,
    now_iso,
    write_manifest,
)
from overlap_check.runner.process import SignalForwarder, describe_exit, run_workload


@dataclass(frozen=True)
class RunPlan:
    """Everything one ``run`` session needs, decided by the CLI."""

    command: tuple[str, ...]
    out_dir: Path
    runs: int
    profiler: str  # "torch_npu" | "msprof"
    level: str = "Level1"
    window: str = "auto"
    keep_going: bool = False
    msprof_path: str = "msprof"
    cwd: Path = Path(".")


Progress = Callable[[str], None]


def run_dir_name(index: int) -> str:
    return f"run-{index}"


def analyze_paths(out: Path, manifest: Manifest) -> list[Path]:
    """What ``analyze`` should read to judge the usable runs: ``out`` itself when every
    run is usable, else the usable run dirs (failed and interrupted runs may have
    left partial profiles that ``analyze <out>`` would read too)."""
    usable = manifest.usable_runs()
    if usable and len(usable) == len(manifest.runs):
        return [out]
    return [out / r.dir for r in usable]


def workload_argv(plan: RunPlan, run_dir: Path) -> list[str]:
    if plan.profiler == "msprof":
        return msprof.msprof_argv(plan.msprof_path, run_dir, plan.command, plan.level)
    return list(plan.command)


def workload_env(
    plan: RunPlan, base: Mapping[str, str], run_dir: Path, index: int
) -> dict[str, str]:
    if plan.profiler == "msprof":
        env = dict(base)
        env[torch_npu_injection.ENV_RUN_INDEX] = str(index)
        return env
    return torch_npu_injection.injection_env(
        base, run_dir, level=plan.level, window=plan.window, run_index=index
    )


def collect_results(plan: RunPlan, run_dir: Path) -> tuple[tuple[Path, ...], str | None]:
    """The usable result dirs of one run, or the reason there are none."""
    if plan.profiler == "msprof":
        found = tuple(p for p in msprof.find_prof_dirs(run_dir) if msprof.is_exported(p))
        return found, None if found else msprof.explain_missing_prof(run_dir)
    found = tuple(
        p for p in torch_npu_injection.find_result_dirs(run_dir) if torch_npu_injection.is_parsed(p)
    )
    if found:
        return found, None
    return found, torch_npu_injection.explain_missing_profile(run_dir, plan.window)


def execute(
    plan: RunPlan,
    manifest: Manifest,
    *,
    base_env: Mapping[str, str],
    output: IO[Any] | None,
    progress: Progress,
) -> Manifest:
    """Run the workload ``plan.runs`` times; returns the final manifest.

    Raises (after writing the manifest): :class:`Interrupted` on Ctrl-C,
    :class:`WorkloadError` when a run fails, :class:`InputError` when a run
    leaves no profile (both only without ``keep_going``), and
    :class:`InputError` when no run at all left a profile.
    """
    out = plan.out_dir
    out.mkdir(parents=True, exist_ok=True)
    write_manifest(out, manifest)
    forwarder = SignalForwarder()
    session_began = time.monotonic()
    with forwarder.installed():
        for index in range(1, plan.runs + 1):
            if forwarder.interrupted:
                break
            run_dir = out / run_dir_name(index)
            run_dir.mkdir(parents=True, exist_ok=True)
            log_path = None if output is not None else run_dir / ".overlap-check" / "workload.log"
            argv = workload_argv(plan, run_dir)
            record = RunRecord(
                index=index,
                dir=run_dir.relative_to(out).as_posix(),
                started=now_iso(),
                log=log_path.relative_to(out).as_posix() if log_path else None,
            )
            manifest = manifest.with_run(record)
            if index == 1:
                manifest = replace(manifest, profiler_argv=tuple(argv))
            write_manifest(out, manifest)
            elapsed = time.monotonic() - session_began
            progress(f"run {index}/{plan.runs} ({plan.profiler}, {elapsed:.0f} s elapsed)")
            result = run_workload(
                argv,
                env=workload_env(plan, base_env, run_dir, index),
                cwd=plan.cwd,
                forwarder=forwarder,
                output=output,
                log_path=log_path,
            )
            found, problem = collect_results(plan, run_dir)
            traces = (
                torch_npu_injection.read_process_traces(run_dir)
                if plan.profiler == "torch_npu"
                else ()
            )
            status: Any
            if result.interrupted:
                status = "interrupted"
            elif result.exit_code != 0:
                status = "failed"
            elif problem is not None:
                status = "no-profile"
            else:
                status = "ok"
            record = replace(
                record,
                ended=now_iso(),
                seconds=round(result.seconds, 3),
                exit_code=result.exit_code,
                status=status,
                result_dirs=tuple(p.relative_to(out).as_posix() for p in found),
                problem=problem if status != "ok" else None,
                processes=len(traces),
            )
            manifest = manifest.with_run(record)
            write_manifest(out, manifest)
            progress(
                f"run {index}/{plan.runs} {status}: {describe_exit(result.exit_code)}, "
                f"{result.seconds:.1f} s, {len(found)} result dir(s)"
            )
            if status == "interrupted":
                break
            if status == "failed":
                message = (
                    f"run {index} of {plan.runs}: the command failed "
                    f"({describe_exit(result.exit_code)})"
                )
                if not plan.keep_going:
                    manifest = _finish(out, manifest, "failed")
                    raise WorkloadError(message, path=run_dir, hint=_log_hint(out, record))
                progress(f"{message}; --keep-going: continuing")
            elif status == "no-profile":
                if not plan.keep_going:
                    manifest = _finish(out, manifest, "failed")
                    raise InputError(f"run {index} left no profile", path=run_dir, hint=problem)
                progress(f"run {index} left no profile: {problem}; --keep-going: continuing")
    if forwarder.interrupted:
        manifest = _finish(out, manifest, "interrupted")
        done = len(manifest.usable_runs())
        paths = " ".join(str(p) for p in analyze_paths(out, manifest))
        raise Interrupted(
            f"interrupted; {done} completed run(s) kept in {out}",
            hint=f"judge them with: overlap-check analyze {paths}" if done else None,
        )
    manifest = _finish(out, manifest, "complete")
    if not manifest.usable_runs():
        raise InputError(
            f"none of the {plan.runs} runs left a usable profile",
            path=out,
            hint=next((r.problem for r in manifest.runs if r.problem), None),
        )
    return manifest


def _finish(out: Path, manifest: Manifest, status: Any) -> Manifest:
    manifest = replace(manifest, status=status, updated=now_iso())
    write_manifest(out, manifest)
    return manifest


def _log_hint(out: Path, record: RunRecord) -> str:
    if record.log:
        return f"its output is in {out / record.log}"
    return "its output is above"
