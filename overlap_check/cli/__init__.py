"""The command line: a thin click layer over the library.

Each command lives in its own module, imported only when invoked (``overlap-check --help``
imports no polars, numpy or matplotlib). Library errors carry their exit code; they become
one line on stderr here and nowhere else."""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any

import click

from overlap_check import ALLOCATOR, UNSET_ALLOCATOR, __version__

# command name -> (module, attribute, one-line help shown by `overlap-check --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "analyze": ("overlap_check.cli.analyze", "analyze", "Judge existing profiler output."),
    "run": ("overlap_check.cli.run", "run", "Profile a workload N times, then judge it."),
    "compare": (
        "overlap_check.cli.compare",
        "compare",
        "Compare two JSON reports (baseline vs head).",
    ),
    "plot": ("overlap_check.cli.plot", "plot", "Draw the timeline, runs and block-demand charts."),
    "lint": ("overlap_check.cli.lint", "lint", "Check model source for multi-stream API mistakes."),
}


def internal_error_message(err: BaseException, args: list[str]) -> str:
    """One line for an exception no reader turned into the tool's error class."""
    if isinstance(err, ModuleNotFoundError) and err.name in ("polars", "numpy", "msgspec"):
        # the lint-only environment of the pre-commit hook (.pre-commit-hooks.yaml)
        return (
            f"{err.name} is not installed: only lint works without it; install overlap-check "
            "with its dependencies"
        )
    filename = getattr(err, "filename", None)
    if isinstance(err, OSError) and filename is not None:
        return f"{filename}: {err.strerror or err}"
    inputs = " ".join(a for a in args if not a.startswith("-")) or "(no PATH)"
    kind = type(err).__name__
    return f"internal error on {inputs}: {kind}: {err}".replace("\n", " ") + (
        " - please report it at the overlap-check issue tracker"
    )


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attribute, _ = entry
        command: click.Command = getattr(importlib.import_module(module_name), attribute)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        # The one place where library errors become a message and an exit code,
        # so that CliRunner tests and the console script behave the same.
        from overlap_check.model.errors import OverlapCheckError, Terminated
        from overlap_check.report.escape import shown

        args = [*ctx._protected_args, *ctx.args]  # Group.invoke consumes them
        try:
            return super().invoke(ctx)
        except OverlapCheckError as err:
            click.echo(f"overlap-check: error: {shown(str(err))}", err=True)
            ctx.exit(err.exit_code)
        except Terminated:
            click.echo("overlap-check: terminated", err=True)
            ctx.exit(Terminated.exit_code)
        except KeyboardInterrupt:
            click.echo("overlap-check: interrupted", err=True)
            ctx.exit(130)
        except click.ClickException as err:  # a usage error may name a path: shown escaped
            vars(err)["message"] = shown(err.message)  # typed Final; click reads it to show
            raise
        except (click.exceptions.Exit, click.Abort, SystemExit, GeneratorExit):
            raise
        except BaseException as err:  # also a Rust panic in polars (not an Exception)
            # A crash is a bug, not a failed gate: exit 2 with one line, never a traceback.
            message = shown(internal_error_message(err, args[1:]))
            click.echo(f"overlap-check: error: {message}", err=True)
            ctx.exit(2)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help without importing every command module.
        rows = [(name, help_text) for name, (_, _, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="overlap-check")
def cli() -> None:
    """Tell whether a multi-stream plan really runs in parallel (Ascend NPU, CUDA GPU).

    \b
    Examples:
      overlap-check analyze fixtures/fake-dual-stream
      overlap-check run --runs 5 -- python infer.py
      overlap-check analyze ./prof_dir --format junit --output report.xml
      overlap-check compare main.json pr.json
      overlap-check plot ./prof_dir --side SharedExpert --dominator GroupedMatmul -o timeline.png
      overlap-check lint model/

    Exit codes: 0 pass, 1 the gate failed (lint: findings), 2 bad usage, input or
    config, 3 the profiled workload failed, 130 interrupted. `overlap-check
    COMMAND --help` lists each command's options."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    # A console script without an ``if __name__ == "__main__":`` guard is run again by
    # every worker process that "spawn" starts (it imports the parent's main script as
    # __mp_main__): the worker would analyse everything again and print a second report.
    if sys._getframe(1).f_globals.get("__name__") == "__mp_main__":
        return
    gc.set_threshold(100_000, 50, 100)  # measure.workers.GC_THRESHOLDS: why, there
    if os.environ.get(ALLOCATOR[0], "") in UNSET_ALLOCATOR:  # a user's own setting stays
        os.environ[ALLOCATOR[0]] = ALLOCATOR[1]
    try:
        cli.main(args=argv, prog_name="overlap-check")
    except SystemExit as done:
        # The console script ends without freeing its heap object by object (0.1-0.15 s
        # after a million-kernel analysis); an in-process caller keeps its interpreter.
        if argv is not None or not isinstance(done.code, int | None):
            raise
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:  # None: started with the descriptor closed
                    stream.flush()
        except OSError:  # a reader gone: Python's own exit says so
            raise done from None
        os._exit(done.code or 0)
