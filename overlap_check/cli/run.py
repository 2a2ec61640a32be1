"""``overlap-check run [options] -- COMMAND ARGS...``: profile a workload N times, then judge it.

The runs, their manifest, the exit codes and the signals: docs/run.md."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import IO, Any, cast

import click

from overlap_check import ALLOCATOR, __version__, allocator_is_ours
from overlap_check.cli.config.settings import BY_NAME, LEVELS, PROFILERS
from overlap_check.cli.options import analysis_options, emit, options_from_params
from overlap_check.model.errors import InputError, Interrupted, UsageError
from overlap_check.report.escape import shown
from overlap_check.runner.process import SignalForwarder, to_devnull

# Parameters of `run` that `analyze` does not have.
RUN_ONLY = ("command", "runs", "out", "profiler", "level", "window", "keep_going")
DEFAULT_RUNS = BY_NAME["runs"].default
DEFAULT_LEVEL = BY_NAME["level"].default


@click.command(
    "run",
    context_settings={"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]},
)
@click.option(
    "--runs",
    type=click.IntRange(min=1),
    default=None,
    help=f"How many times to run the workload  [default: [run] runs, else {DEFAULT_RUNS}]",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for the runs (must be new or empty)  [default: ./overlap-check-runs/<timestamp>]",
)
@click.option(
    "--profiler",
    type=click.Choice(PROFILERS),
    default=None,
    help="torch_npu: inject torch_npu.profiler into the Python workload (no code change); "
    "torch: inject torch.profiler (CUDA GPUs; PyTorch profiler traces); "
    "msprof: wrap the command with the msprof CLI; auto: torch for Python commands on a "
    "CUDA host, else torch_npu; msprof for other commands when it is on PATH, else torch_npu  "
    "[default: [run] profiler, else auto]",
)
@click.option(
    "--level",
    type=click.Choice(LEVELS),
    default=None,
    help="Profiler level (Level1 and up record Stream IDs)  "
    f"[default: [run] level, else {DEFAULT_LEVEL}]",
)
@click.option(
    "--window",
    type=click.Choice(["auto", "explicit", "process"]),
    default="auto",
    show_default=True,
    help="torch_npu: what is captured when the workload uses overlap_check.profile(): "
    "auto: the block if there is one, else the whole process; explicit: only the block; "
    "process: the whole process",
)
@click.option("--keep-going", is_flag=True, help="Continue after a failing run; judge the rest.")
@analysis_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND [ARGS]...")
@click.pass_context
def run(ctx: click.Context, /, **params: Any) -> None:
    """Profile COMMAND N times, then judge the runs as `analyze` does.

    \b
    Examples:
      overlap-check run -- python infer.py --batch 8
      overlap-check run --runs 7 --plan moe-shared-expert -- torchrun --nproc-per-node 2 infer.py
      overlap-check run --profiler msprof --out runs/ -- ./serve.sh
      overlap-check run --format json --output report.json -- python bench.py

    Exit codes: 0 pass, 1 the gate failed, 2 bad usage or input or no profile,
    3 the workload failed, 130 interrupted."""
    # Installed first and never removed: a signal at any moment of the command ends it
    # with exit 130 (Interrupted), never a traceback or a death by SIGTERM.
    forwarder = SignalForwarder()
    state = _Progress(quiet=bool(params.get("quiet")))
    with forwarder.installed(restore=False):
        try:
            _run(ctx, params, forwarder, state)
        except KeyboardInterrupt:
            # CPython marks "unhandled KeyboardInterrupt, exit by SIGINT (-2)" when one
            # leaves code run by exec() of a string (dataclass creation does that), even
            # if it is caught later; exec() of a string clears the mark again.
            exec("")
            state.forget_empty_out()
            raise state.interrupted() from None


class _Progress:
    """Progress lines on stderr, and what an interruption message needs to say."""

    def __init__(self, *, quiet: bool) -> None:
        self.quiet = quiet
        self.out: Path | None = None
        self.manifest: Any = None  # the final Manifest, once the runs are done

    def __call__(self, message: str) -> None:
        if self.quiet:
            return
        try:
            click.echo(f"overlap-check: {shown(message)}", err=True)
        except (OSError, ValueError):  # a closed pipe (`run ... 2>&1 | head`) ends no session:
            self.quiet = True  # the workload's output is logged from then on, as with -q
            to_devnull(sys.stderr)

    # run_workload's ``output``: our stderr, until a write to it failed (process._Sink)
    def write(self, text: str) -> int:
        if self.quiet:
            raise ValueError("stderr is closed")
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def fileno(self) -> int:
        return sys.stderr.fileno()

    def forget_empty_out(self) -> None:
        """Interrupted before the session began: remove the --out folder made for it."""
        if self.manifest is None and self.out is not None:
            from overlap_check.runner.session import LOCK_NAME

            with contextlib.suppress(OSError):
                (self.out / LOCK_NAME).unlink(missing_ok=True)
                self.out.rmdir()  # only when still empty

    def interrupted(self) -> Interrupted:
        if self.manifest is None:
            return Interrupted("interrupted before the first run")
        done = len(self.manifest.usable_runs())
        return Interrupted(
            f"interrupted while judging; {done} completed run(s) kept in {self.out}",
            hint=f"judge them with: overlap-check analyze {self.out}" if done else None,
        )


def _run(ctx: click.Context, params: dict[str, Any], forwarder: Any, progress: _Progress) -> None:
    from overlap_check.cli.analyze import judge_paths
    from overlap_check.cli.config import load_config
    from overlap_check.runner.manifest import Manifest, now_iso
    from overlap_check.runner.profilers import check_output_path, choose_profiler, find_msprof
    from overlap_check.runner.session import RunPlan, execute, mark_bad_data, prepare_out_dir

    command = tuple(params["command"])
    if not command:
        raise UsageError("no command to run", hint="usage: overlap-check run [options] -- COMMAND")
    cwd = Path.cwd()
    # Options first: a config error (or a missing extra) must not wait for an hour of runs.
    options = options_from_params(params)
    if params.get("plot"):
        from overlap_check.model.extras import require

        require("matplotlib", "plot", "--plot")
    config = load_config(params.get("config"), cwd)
    env = dict(os.environ)
    if allocator_is_ours():  # the console entry's, not the workload's
        del env[ALLOCATOR[0]]
    profiler, reason = choose_profiler(
        params["profiler"] or BY_NAME["profiler"].default, command, env, configured=config.profiler
    )
    msprof_path = "msprof"
    if profiler == "msprof":
        found = find_msprof(env)
        if found is None:
            raise UsageError(
                "msprof not found on PATH",
                hint="source the CANN set_env.sh, or use --profiler torch_npu",
            )
        msprof_path = found
    runs = params["runs"] or config.runs or DEFAULT_RUNS
    out = _out_dir(params["out"], cwd)
    if profiler == "torch_npu":
        check_output_path(out)
    prepare_out_dir(out)
    progress.out = out
    level = params["level"] or config.level or DEFAULT_LEVEL

    progress(f"profiler: {profiler} ({reason}); {runs} run(s) into {out}")
    manifest = Manifest(
        tool_version=__version__,
        command=command,
        cwd=str(cwd),
        profiler=profiler,
        profiler_reason=reason,
        level=level,
        window=params["window"],
        runs_requested=runs,
        created=now_iso(),
        options=json.loads(json.dumps(ctx.params, default=str)),
        # `analyze <out>` reads the manifest and judges only the runs that completed.
        analyze_args=("overlap-check", "analyze", str(out), *_analyze_args(ctx)),
    )
    plan = RunPlan(
        out_dir=out,
        keep_going=params["keep_going"],
        msprof_path=msprof_path,
        with_stack=any((p.side or "").startswith("module:") for p in options.plans),
    )
    output = None if progress.quiet else cast("IO[Any]", progress)
    manifest = execute(
        plan, manifest, base_env=env, output=output, progress=progress, forwarder=forwarder
    )
    progress.manifest = manifest
    while True:  # a run whose export cannot be read is set aside; the others are judged
        progress(f"judging {len(manifest.usable_runs())} run(s) from {out}")
        try:
            report, captures = judge_paths([str(out)], options, plot=bool(params.get("plot")))
            break
        except InputError as err:
            try:
                marked = mark_bad_data(out, manifest, err.path, str(err))
            except OSError as write_error:
                raise InputError(
                    f"cannot update the run manifest: {write_error.strerror}", path=out
                ) from None
            if marked is None:
                raise
            progress(f"not judged: {err}")
            manifest = progress.manifest = marked
            if not manifest.usable_runs():
                raise InputError(
                    "none of the runs left a readable profile", path=out, hint=str(err)
                ) from None
    try:
        code = emit(report, params, captures)
    except BrokenPipeError:  # stdout's reader went away (`run ... | head -0`): say it all to no one
        to_devnull(sys.stdout)
        code = emit(report, params, captures)
    progress(f"runs kept in {out}; judge them again with: overlap-check analyze {out}")
    ctx.exit(code)


def _out_dir(given: Path | None, cwd: Path) -> Path:
    """The --out folder: new or empty; by default a fresh timestamped one."""
    if given is not None:
        out = given if given.is_absolute() else cwd / given
        if out.is_symlink():
            raise UsageError(
                f"--out {given} is a symbolic link",
                hint="runs are never written through a link; name a new folder",
            )
        try:
            taken = out.exists() and any(out.iterdir())
        except OSError as err:
            raise UsageError(f"cannot use --out {given}: {err.strerror}") from None
        if taken:
            raise UsageError(
                f"--out {given} is not empty",
                hint="runs are never overwritten; choose a new folder",
            )
        return out
    base = cwd / "overlap-check-runs" / time.strftime("%Y%m%d-%H%M%S")
    out, suffix = base, 1
    while out.exists():
        suffix += 1
        out = base.with_name(f"{base.name}-{suffix}")
    return out


def _analyze_args(ctx: click.Context) -> list[str]:
    """The shared options the user set, as `analyze` arguments (for the manifest)."""
    args: list[str] = []
    for param in ctx.command.params:
        name = param.name
        if not isinstance(param, click.Option) or name is None or name in RUN_ONLY:
            continue
        source = ctx.get_parameter_source(name)
        if source in (None, click.core.ParameterSource.DEFAULT):
            continue
        value = ctx.params.get(name)
        flag = max(param.opts, key=len)
        if param.is_flag and not param.count:
            if param.secondary_opts and not value:
                args.append(max(param.secondary_opts, key=len))
            elif value:
                args.append(flag)
        elif param.count:
            args.extend([flag] * int(value or 0))
        elif param.multiple:
            for item in value or ():
                args.extend([flag, str(item)])
        elif value is not None:
            args.extend([flag, str(value)])
    return args
