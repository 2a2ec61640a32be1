"""Options shared by ``analyze`` and ``run``, turning them into Options, and emitting the report.

Values left unset on the command line are None so that the config file and the
environment can fill them (config.merge_options decides the precedence).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import click

from overlap_check.model import (
    Capture,
    ExecutionPath,
    FailOn,
    Options,
    Order,
    Per,
    Plan,
    Report,
    SideKind,
    choices_of,
)
from overlap_check.model.errors import UsageError
from overlap_check.report.color import COLOR_MODES, color_for

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("text", "json", "markdown", "junit", "github")
DEFAULTS = Options()  # the defaults the help shows in [brackets]
PLAN_DEFAULTS = {f.name: f.default for f in fields(Plan)}  # a one-off plan's, likewise

# Shared by every command that prints a text report (analyze, run, compare, lint).
color_option = click.option(
    "--color",
    type=click.Choice(COLOR_MODES),
    default="auto",
    show_default=True,
    help="Colour the text on stdout. auto: on a terminal, unless NO_COLOR is set "
    "(FORCE_COLOR forces it). Never in other formats, nor in a file written with --output.",
)

_OPTIONS: list[Callable[[F], F]] = [
    click.option(
        "--config",
        "config",
        metavar="FILE",
        help="Plan/threshold config (default: the nearest overlap-check.toml, or "
        "pyproject.toml with [tool.overlap-check], from here up to the repository root).",
    ),
    click.option(
        "--plan",
        "plan_names",
        metavar="NAME",
        multiple=True,
        help="Analyse only this plan from the config (repeatable).",
    ),
    click.option(
        "--side", metavar="REGEX", help="One-off plan: regex of the ops moved to the side stream."
    ),
    click.option(
        "--dominator",
        metavar="REGEX",
        help="One-off plan: regex of the main-stream op(s) meant to hide them.",
    ),
    click.option(
        "--op-type",
        metavar="REGEX",
        help="One-off plan: regex of the side ops' operator Type (restricts --side).",
    ),
    click.option(
        "--name", metavar="NAME", help="Name of the one-off plan (default: the side regex)."
    ),
    click.option(
        "--main-stream",
        type=int,
        metavar="N",
        help="Expected main Stream ID (also the stream-level main stream).",
    ),
    click.option(
        "--side-stream", type=int, metavar="N", help="Expected side Stream ID of the one-off plan."
    ),
    click.option(
        "--side-kind",
        type=click.Choice(choices_of(SideKind)),
        help="What the one-off plan's side ops are: compute kernels, communication tasks or "
        f"memory copies, hidden under compute [{PLAN_DEFAULTS['side_kind']}].",
    ),
    click.option(
        "--warmup",
        type=int,
        metavar="K",
        help=f"Runs (or steps with --per step) discarded as cold starts [{DEFAULTS.warmup}].",
    ),
    click.option(
        "--min-runs",
        type=int,
        metavar="N",
        help=f"Runs the method asks for; fewer gives a provisional result [{DEFAULTS.min_runs}].",
    ),
    click.option(
        "--strict", is_flag=True, default=None, help="A provisional result fails the gate."
    ),
    click.option(
        "--per",
        type=click.Choice(choices_of(Per)),
        help=f"Unit the median is taken over [{DEFAULTS.per}].",
    ),
    click.option(
        "--real",
        type=float,
        metavar="X",
        help="A plan's hidden_pct (a stream pair's overlap_pct) at or above which it is real "
        f"[{DEFAULTS.thresholds.real}].",
    ),
    click.option(
        "--fake",
        type=float,
        metavar="Y",
        help="A plan's hidden_pct (a stream pair's overlap_pct) at or below which it is fake "
        f"[{DEFAULTS.thresholds.fake}].",
    ),
    click.option(
        "--format",
        "format_",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="Report format on stdout.",
    ),
    click.option(
        "--output",
        metavar="FILE",
        help="Also write the report there (format from the suffix: .json/.md/.xml/.txt).",
    ),
    color_option,
    click.option(
        "--fail-on",
        type=click.Choice(choices_of(FailOn)),
        help=f"Which plan verdicts fail the gate [{DEFAULTS.fail_on}].",
    ),
    click.option(
        "--baseline",
        metavar="FILE",
        help="A previous JSON report; fail when a plan's hidden_pct (without plans: a stream "
        "pair's overlap_pct) drops by more than --tolerance.",
    ),
    click.option(
        "--tolerance",
        type=float,
        metavar="X",
        help=(
            "Allowed absolute drop of a plan's hidden_pct against the baseline "
            f"[{DEFAULTS.tolerance}]."
        ),
    ),
    click.option(
        "--reference",
        metavar="PATH",
        help="The same workload captured without the multi-stream change: report layer and "
        "step wall before/after (docs/gain.md).",
    ),
    click.option(
        "--require-gain",
        type=float,
        metavar="X",
        help="With --reference: fail unless the step is at least X% faster [off].",
    ),
    click.option(
        "--max-join-wait-us",
        type=float,
        metavar="X",
        help="Fail when the main stream waits more than X µs per layer for the side tail "
        "(new waits against --reference when given) [off].",
    ),
    click.option("--plot", metavar="FILE", help="Write a timeline picture (.png/.svg)."),
    click.option(
        "--order",
        type=click.Choice(choices_of(Order)),
        help="Run order of several PATHs: by capture time, or as given on the command line "
        f"(a note says when they differ) [{DEFAULTS.order}].",
    ),
    click.option(
        "--soc",
        metavar="NAME",
        help="SoC name for the device cores when the capture lacks info.json (e.g. Ascend910B2).",
    ),
    click.option(
        "--soc-ini", metavar="FILE", help="CANN platform config <SoC>.ini giving the device cores."
    ),
    click.option(
        "--graph-dump",
        metavar="PATH",
        help="GE graph dump (file or folder) with _op_aicore_num / _op_vectorcore_num.",
    ),
    click.option(
        "--path",
        "exec_path",
        type=click.Choice(choices_of(ExecutionPath)),
        help="Execution path of the model (plans without their own `path`): the fix advice "
        "names its APIs.",
    ),
    click.option(
        "--source",
        "source_dir",
        metavar="DIR",
        help="Model code whose compile calls give the execution path (as `lint` detects it).",
    ),
    click.option(
        "--fail-on-contention",
        is_flag=True,
        default=None,
        help="Block demand above the device cores fails the gate.",
    ),
    click.option(
        "-q", "--quiet", is_flag=True, help="Only the report; nothing on stderr but errors."
    ),
    click.option(
        "-v", "--verbose", count=True, help="More detail on stderr (skipped row line numbers)."
    ),
]


def analysis_options(command: F) -> F:
    """Add the options shared by `analyze` and `run` (docs/contract.md) to a click command."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def options_from_params(params: Mapping[str, Any]) -> Options:
    """Options from the click parameters, merged with the config file and the environment."""
    from overlap_check.cli.config import load_config, merge_options, plan_from_cli

    config = load_config(params.get("config"), Path.cwd())
    describes_plan = any(
        params.get(k) is not None
        for k in ("side", "dominator", "side_stream", "name", "side_kind", "op_type")
    )
    plan = plan_from_cli(
        side=params.get("side"),
        dominator=params.get("dominator"),
        name=params.get("name"),
        side_stream=params.get("side_stream"),
        side_kind=params.get("side_kind"),
        main_stream=params.get("main_stream") if describes_plan else None,
        op_type=params.get("op_type"),
    )
    overrides: dict[str, Any] = {
        key: params.get(key)
        for key in (
            "real",
            "fake",
            "warmup",
            "min_runs",
            "per",
            "order",
            "fail_on",
            "tolerance",
            "strict",
            "fail_on_contention",
            "soc_ini",
            "graph_dump",
            "soc",
            "main_stream",
            "baseline",
            "reference",
            "require_gain",
            "max_join_wait_us",
        )
    }
    overrides["plans"] = (plan,) if plan is not None else ()
    overrides["path"], overrides["path_source"] = _execution_path(params)
    overrides["plan_names"] = tuple(params.get("plan_names") or ())
    return merge_options(config, overrides, os.environ)


def _execution_path(params: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """``--path``, else the path ``--source DIR`` detects (lint imported only then)."""
    if params.get("exec_path") is not None:
        if params.get("source_dir") is not None:
            raise UsageError("--path and --source both give the execution path; pass one")
        return params["exec_path"], "--path"
    if params.get("source_dir") is None:
        return None, None
    from overlap_check.lint import source_path

    return source_path(params["source_dir"])


def _module(package: str, name: str, what: str) -> ModuleType:
    """Import ``package.name``; a missing module is a clean usage error, not a traceback."""
    full = f"{package}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as err:
        if err.name != full:
            raise
        raise UsageError(f"{what} is not available yet in this build") from None


def stdout_color(mode: str | None) -> bool:
    """Whether text printed to stdout is coloured: ``--color MODE``, the environment, a TTY."""
    return color_for(mode or "auto", sys.stdout, os.environ)


def render(report: Report, fmt: str, *, color: bool = False) -> str:
    """The report in one of FORMATS, by the renderer module of that name (only text colours)."""
    module = _module("overlap_check.report", fmt if fmt in FORMATS else "?", f"--format {fmt}")
    text: str = (
        module.render(report, color=True) if color and fmt == "text" else module.render(report)
    )
    return text


def _warn(message: str) -> None:
    click.echo(f"overlap-check: {message}", err=True)


def _stderr_details(report: Report, captures: Sequence[Capture], verbose: int, fmt: str) -> None:
    if fmt != "text":  # the text report lists its notes itself
        for note in report.notes:
            _warn(f"note: {note}")
    if verbose < 1:
        return
    for capture in captures:
        if capture.skipped_lines:
            lines = ", ".join(str(n) for n in capture.skipped_lines)
            _warn(f"skipped rows in {capture.skipped_file or capture.path}: line(s) {lines}")


def _step_summary(report: Report) -> None:
    """On GitHub Actions ($GITHUB_STEP_SUMMARY set) append the Markdown summary, any format."""
    try:
        markdown = importlib.import_module("overlap_check.report.markdown")
    except ModuleNotFoundError as err:
        if err.name != "overlap_check.report.markdown":
            raise
        return
    markdown.append_step_summary(report, os.environ)


def emit(report: Report, params: Mapping[str, Any], captures: Sequence[Capture]) -> int:
    """Print the chosen format to stdout, write --output and --plot; return the exit code."""
    from overlap_check.cli.config import format_for_path

    fmt = str(params.get("format_") or params.get("format") or "text")
    colored = fmt == "text" and stdout_color(params.get("color"))
    text = render(report, fmt, color=colored)
    output = params.get("output")
    written = None
    if output:  # files never get colour
        target_format = format_for_path(output)
        same = target_format == fmt and not colored
        written = text if same else render(report, target_format)
    # color=True keeps the escapes click would strip from a pipe (FORCE_COLOR, --color always)
    click.echo(text, nl=False, color=True if colored else None)
    if output and written is not None:
        from overlap_check.report.output_file import write_output

        write_output(output, written)
    _step_summary(report)
    plot = params.get("plot")
    if plot:
        plots = _module("overlap_check.report", "plots", "--plot")
        for path in plots.write_plots(report, captures, plot):
            if not params.get("quiet"):
                _warn(f"wrote {path}")
    if not params.get("quiet"):
        _stderr_details(report, captures, int(params.get("verbose") or 0), fmt)
    return report.exit_code
