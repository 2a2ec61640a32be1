"""The ``run`` loop: profile the workload N times into ``<out>/run-<i>/``, keeping a manifest.

Orchestration only (processes: :mod:`process`, profilers: :mod:`profilers`, the record:
:mod:`manifest`); errors are raised only after the manifest says what happened."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from overlap_check.model.errors import InputError, Interrupted, UsageError, WorkloadError
from overlap_check.runner import profilers
from overlap_check.runner.manifest import (
    MANIFEST_NAME,
    Manifest,
    RunRecord,
    RunStatus,
    SessionStatus,
    now_iso,
    release_reserve,
    reserve_space,
    write_manifest,
)
from overlap_check.runner.process import (
    SignalForwarder,
    WorkloadResult,
    describe_exit,
    run_workload,
)


@dataclass(frozen=True)
class RunPlan:
    """What a session needs beyond its manifest (the command, profiler, level, window, runs)."""

    out_dir: Path
    keep_going: bool = False
    msprof_path: str = "msprof"
    with_stack: bool = False  # torch: torch.profiler with_stack (a module: plan needs it)


Progress = Callable[[str], None]


# The --out folder's lock file (also its write test), locked (flock) for the whole session so
# that a second run into the same folder stops at once; the process's end releases it.
LOCK_NAME = ".overlap-check.lock"
_HELD_LOCKS: list[int] = []


def prepare_out_dir(out: Path) -> None:
    """Create the --out folder and lock it; a place that cannot hold it, a symbolic link and a
    folder another run holds are usage errors naming it."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        if out.is_symlink():
            hint = "runs are never written through a link; name a new folder"
            raise UsageError(f"--out {out} is a symbolic link", hint=hint)
        fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as err:
        raise UsageError(
            f"cannot use --out {out}: {_os_reason(err)}",
            hint="choose a writable folder on a local disk (not under a file, /proc or /sys)",
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise UsageError(
            f"--out {out} is in use by another overlap-check run",
            hint="wait for it to end, or choose another folder",
        ) from None
    _HELD_LOCKS.append(fd)


def _os_reason(err: OSError) -> str:
    where = f" ({err.filename})" if err.filename else ""
    return f"{err.strerror or type(err).__name__}{where}"


def _workload(
    plan: RunPlan, manifest: Manifest, base: Mapping[str, str], run_dir: Path, index: int
) -> tuple[list[str], dict[str, str]]:
    """One run's command line and environment."""
    if manifest.profiler == "msprof":
        argv = profilers.msprof_argv(plan.msprof_path, run_dir, manifest.command, manifest.level)
        return argv, {**base, profilers.ENV_RUN_INDEX: str(index)}
    env = profilers.injection_env(
        base,
        run_dir,
        level=manifest.level,
        window=manifest.window,
        run_index=index,
        profiler=manifest.profiler,
        with_stack=plan.with_stack,
    )
    return list(manifest.command), env


def collect_results(manifest: Manifest, run_dir: Path) -> tuple[tuple[Path, ...], str | None]:
    """The usable result dirs of one run, or the reason there are none."""
    if manifest.profiler == "msprof":
        found = tuple(p for p in profilers.find_prof_dirs(run_dir) if profilers.is_exported(p))
        return found, None if found else profilers.explain_missing_prof(run_dir)
    if manifest.profiler == "torch":
        found = profilers.find_kineto_traces(run_dir)
    else:
        found = tuple(p for p in profilers.find_result_dirs(run_dir) if profilers.is_parsed(p))
    if found:
        return found, None
    return found, profilers.explain_missing_profile(run_dir, manifest.window, manifest.profiler)


def export_problem(found: tuple[Path, ...], run_dir: Path) -> str | None:
    """Why a run's export is not whole: the profiler's stop failed, or a file is cut short."""
    for trace in profilers.read_process_traces(run_dir):
        for error in trace.errors:
            if error.startswith("stop:"):
                return f"the profiler's export failed in process {trace.pid}: {error[5:].strip()}"
    # A Kineto trace (a file) is checked by its reader.
    return next(filter(None, (profilers.cut_short(f) for f in found if f.is_dir())), None)


def run_status(result: WorkloadResult, problem: str | None, incomplete: str | None) -> RunStatus:
    if result.interrupted:
        return "interrupted"
    if result.exit_code != 0:
        return "failed"
    if problem is not None:
        return "no-profile"
    if incomplete is not None:
        return "incomplete"
    return "ok"


@dataclass
class _Session:
    """The manifest as it stands, the writes that keep it on disk, and the run's callbacks."""

    plan: RunPlan
    manifest: Manifest
    progress: Progress
    forwarder: SignalForwarder

    def save(self, manifest: Manifest, *, closing: bool = False) -> None:
        self.manifest = manifest
        write_manifest(self.plan.out_dir, manifest, closing=closing)

    def finish(self, status: SessionStatus, problem: str | None = None) -> Manifest:
        manifest = replace(self.manifest, status=status, problem=problem, updated=now_iso())
        self.save(manifest, closing=True)
        release_reserve(self.plan.out_dir)
        return manifest

    def disk_error(self, err: OSError) -> InputError:
        """Close the manifest after a failed write, if the disk still lets us; the error."""
        reason, out = _os_reason(err), self.plan.out_dir
        for record in self.manifest.runs:
            if record.status == "running":
                failed = replace(record, ended=now_iso(), status="failed", problem=reason)
                self.manifest = self.manifest.with_run(failed)
        hint = f"{len(self.manifest.usable_runs())} completed run(s) kept in {out}"
        try:
            self.finish("failed", problem=f"cannot write: {reason}")
        except OSError:
            hint += f"; {out / MANIFEST_NAME} could not be updated and may still say running"
        return InputError(f"cannot write the runs: {reason}", path=out, hint=hint)


def execute(
    plan: RunPlan,
    manifest: Manifest,
    *,
    base_env: Mapping[str, str],
    output: IO[Any] | None,
    progress: Progress,
    forwarder: SignalForwarder,
) -> Manifest:
    """Run the workload ``manifest.runs_requested`` times; returns the final manifest.

    Signals only stop the loop at its next check, so the manifest is always closed. Raises,
    after writing it: Interrupted; WorkloadError or InputError for a run that failed or left no
    profile (unless ``keep_going``); InputError when no run left a whole profile or the disk
    refused a write."""
    session = _Session(plan, manifest, progress, forwarder)
    with forwarder.deferred():
        try:
            _loop(session, base_env, output)
            if forwarder.interrupted:
                manifest = session.finish("interrupted")
                done = len(manifest.usable_runs())
                raise Interrupted(
                    f"interrupted; {done} completed run(s) kept in {plan.out_dir}",
                    hint=f"judge them with: overlap-check analyze {plan.out_dir}" if done else None,
                )
            manifest = session.finish("complete")
        except OSError as err:
            raise session.disk_error(err) from None
    if not manifest.usable_runs():
        raise InputError(
            f"none of the {manifest.runs_requested} runs left a usable profile",
            path=plan.out_dir,
            hint=next((r.problem for r in manifest.runs if r.problem), None),
        )
    return manifest


def _loop(session: _Session, base_env: Mapping[str, str], output: IO[Any] | None) -> None:
    plan, progress, forwarder = session.plan, session.progress, session.forwarder
    out, runs, profiler = plan.out_dir, session.manifest.runs_requested, session.manifest.profiler
    out.mkdir(parents=True, exist_ok=True)
    session.save(session.manifest)
    reserve_space(out)
    cwd, session_began = Path(session.manifest.cwd), time.monotonic()
    for index in range(1, runs + 1):
        if forwarder.interrupted:
            return
        run_dir = out / f"run-{index}"
        run_dir.mkdir(parents=True, exist_ok=True)
        log_path = run_dir / ".overlap-check" / "workload.log"
        log = log_path.relative_to(out).as_posix()
        argv, env = _workload(plan, session.manifest, base_env, run_dir, index)
        record = RunRecord(index, run_dir.name, now_iso(), log=log if output is None else None)
        manifest = session.manifest.with_run(record)
        if index == 1:
            manifest = replace(manifest, profiler_argv=tuple(argv))
        session.save(manifest)
        elapsed = time.monotonic() - session_began
        progress(f"run {index}/{runs} ({profiler}, {elapsed:.0f} s elapsed)")
        result = run_workload(
            argv, env=env, cwd=cwd, forwarder=forwarder, output=output, log_path=log_path
        )
        if result.output_problem is not None:
            output = None  # the rest of the runs log their output, as with -q
            progress(f"run {index}: {result.output_problem}")
        found, problem = collect_results(session.manifest, run_dir)
        incomplete = export_problem(found, run_dir) if problem is None else None
        traces = profilers.read_process_traces(run_dir) if profiler != "msprof" else ()
        status = run_status(result, problem, incomplete)
        why = result.problem or (problem if status == "no-profile" else incomplete)
        record = replace(
            record,
            ended=now_iso(),
            seconds=round(result.seconds, 3),
            exit_code=result.exit_code,
            status=status,
            result_dirs=tuple(p.relative_to(out).as_posix() for p in found),
            problem=why if status != "ok" else None,
            processes=len(traces),
            log=log if log_path.exists() else None,
        )
        session.save(session.manifest.with_run(record))
        exit_text = result.problem or describe_exit(result.exit_code)
        progress(
            f"run {index}/{runs} {status}: {exit_text}, "
            f"{result.seconds:.1f} s, {len(found)} result dir(s)"
        )
        if status == "interrupted":
            return
        if status == "failed":
            message = f"run {index} of {runs}: the command failed ({exit_text})"
            if not plan.keep_going:
                session.finish("failed")
                where = f"in {out / record.log}" if record.log else "above"
                raise WorkloadError(message, path=run_dir, hint=f"its output is {where}")
            progress(f"{message}; --keep-going: continuing")
        elif status == "no-profile":
            if not plan.keep_going:
                session.finish("failed")
                raise InputError(f"run {index} left no profile", path=run_dir, hint=problem)
            progress(f"run {index} left no profile: {problem}; --keep-going: continuing")
        elif status == "incomplete":
            progress(f"run {index} is not judged: {incomplete}")


def mark_bad_data(out: Path, manifest: Manifest, path: str | None, why: str) -> Manifest | None:
    """The manifest with the run holding ``path`` marked ``bad-data`` (and written), or None
    when ``path`` is in no usable run (the error is then not about one run's data)."""
    if path is None:
        return None
    target = Path(path).resolve()
    for record in manifest.usable_runs():
        run_dir = (out / record.dir).resolve()
        if target == run_dir or run_dir in target.parents:
            marked = manifest.with_run(replace(record, status="bad-data", problem=why))
            write_manifest(out, marked)
            return marked
    return None
