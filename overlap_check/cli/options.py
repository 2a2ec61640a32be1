"""Options shared by ``analyze`` and ``run``, turning them into Options, and emitting the report.

Values left unset on the command line are None so that the config file and the
environment can fill them (config.merge_options decides the precedence)."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, Literal, TypeVar, get_origin

import click

from overlap_check.cli.config.settings import BY_NAME, MERGED, SETTINGS, Setting
from overlap_check.model import Capture, ExecutionPath, Options, Plan, Report, SideKind, choices_of
from overlap_check.model.errors import UsageError
from overlap_check.report.color import COLOR_MODES, color_for
from overlap_check.report.escape import displayed, guarded, json_text, shown

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
    "(FORCE_COLOR forces it). Never in other formats, nor in a file.",
)

# The command-line-only options, and by name where each setting (config/settings.py) goes
# among them in --help; a setting not named here goes at OTHER_SETTINGS.
OTHER_SETTINGS = "..."
_OPTIONS: list[Callable[[F], F] | str] = [
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
        "--name",
        metavar="NAME",
        help="Name of the one-off plan [the --side regex, else --op-type's, else 'stream N'].",
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
    "warmup",
    "min_runs",
    "strict",
    "per",
    "real",
    "fake",
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
    "fail_on",
    click.option(
        "--baseline",
        metavar="FILE",
        help="A previous JSON report; fail when a plan's hidden_pct (without plans: a stream "
        "pair's overlap_pct) drops by more than --tolerance.",
    ),
    "tolerance",
    "reference",
    "require_gain",
    "max_join_wait_us",
    click.option(
        "--plot",
        metavar="FILE",
        help="The timeline to FILE (.png/.svg), plot's other charts beside.",
    ),
    "order",
    "soc",
    "soc_ini",
    "graph_dump",
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
    "fail_on_contention",
    OTHER_SETTINGS,
    click.option(
        "-q", "--quiet", is_flag=True, help="Only the report; nothing on stderr but errors."
    ),
    click.option(
        "-v", "--verbose", count=True, help="More detail on stderr (skipped row line numbers)."
    ),
]


def analysis_options(command: F) -> F:
    """Add the options shared by `analyze` and `run` (docs/contract.md) to a click command."""
    named = {entry for entry in _OPTIONS if isinstance(entry, str)}
    for entry in reversed(_OPTIONS):
        if entry == OTHER_SETTINGS:
            for setting in reversed(SETTINGS):
                if setting.option and setting.scope == "analysis" and setting.name not in named:
                    command = setting_option(setting)(command)
        elif isinstance(entry, str):
            command = setting_option(BY_NAME[entry])(command)
        else:
            command = entry(command)
    return command


def setting_option(setting: Setting) -> Callable[[F], F]:
    """The click option of a setting: its type, help and default from its definition. Unset,
    it is None, so that the environment and the config file can fill it."""
    kind, shown = setting.value_type, setting.help.format(default=setting.value_default)
    if kind is bool:
        return click.option(setting.flag, is_flag=True, default=None, help=shown)
    if get_origin(kind) is Literal:
        return click.option(setting.flag, type=click.Choice(choices_of(kind)), help=shown)
    click_type = None if kind is str or setting.text else kind
    return click.option(setting.flag, type=click_type, metavar=setting.metavar, help=shown)


# the options describing a one-off plan (plan_from_cli's arguments; --main-stream as well
# when one of these is given)
ONE_OFF_PLAN = ("side", "dominator", "name", "side_stream", "side_kind", "op_type")


def options_from_params(params: Mapping[str, Any]) -> Options:
    """Options from the click parameters, merged with the config file and the environment."""
    from overlap_check.cli.config import load_config, merge_options, plan_from_cli

    config = load_config(params.get("config"), Path.cwd())
    if params.get("output"):  # a bad --output fails now, not after the analysis
        from overlap_check.cli.config import format_for_path
        from overlap_check.report.output_file import check_target

        format_for_path(params["output"])
        check_target(params["output"])
    one_off = {key: params.get(key) for key in ONE_OFF_PLAN}
    describes_plan = any(value is not None for value in one_off.values())
    plan = plan_from_cli(
        **one_off, main_stream=params.get("main_stream") if describes_plan else None
    )
    overrides: dict[str, Any] = {s.name: params.get(s.name) for s in MERGED if s.option}
    overrides |= {key: params.get(key) for key in ("main_stream", "baseline")}
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


def stdout_color(mode: str | None) -> bool:
    """Whether text printed to stdout is coloured: ``--color MODE``, the environment, a TTY."""
    return color_for(mode or "auto", sys.stdout, os.environ)


def render(report: Report, fmt: str, *, color: bool = False) -> str:
    """The report in one of FORMATS, by the renderer module of that name (only text colours),
    safe for its reader (escape.py): JSON exact, every other format from the names shown."""
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt} is not available yet in this build")
    module = importlib.import_module(f"overlap_check.report.{fmt}")
    if fmt == "json":
        return json_text(module.render(report))
    shown_report = displayed(report)
    if fmt == "text":  # fitted to the terminal (COLUMNS, else 100 columns)
        from overlap_check.report.text_table import terminal_width

        fit = terminal_width(os.environ)
        text: str = module.render(shown_report, color=color, width=fit)
    else:
        text = module.render(shown_report)
    return text if fmt == "github" else guarded(text)


def warn(message: str) -> None:
    """One line on stderr, ``overlap-check: `` first; names in it shown escaped (escape.py)."""
    click.echo(f"overlap-check: {shown(message)}", err=True)


def _stderr_details(report: Report, captures: Sequence[Capture], verbose: int, fmt: str) -> None:
    if fmt != "text":  # the text report lists its notes itself
        for note in report.notes:
            warn(f"note: {note}")
    if verbose < 1:
        return
    for capture in captures:
        if capture.skipped_lines:
            lines = ", ".join(str(n) for n in capture.skipped_lines)
            warn(f"skipped rows in {capture.skipped_file or capture.path}: line(s) {lines}")


def emit(report: Report, params: Mapping[str, Any], captures: Sequence[Capture]) -> int:
    """Print the chosen format to stdout, write --output and --plot; return the exit code."""
    from overlap_check.cli.config import format_for_path

    fmt = str(params.get("format_") or params.get("format") or "text")
    colored = fmt == "text" and stdout_color(params.get("color"))
    text = render(report, fmt, color=colored)
    output = params.get("output")
    if output:  # files never get colour
        target_format = format_for_path(output)
        written = text if target_format == fmt and not colored else render(report, target_format)
    # a name that is not UTF-8 (surrogates from the file system) shown escaped, \udcff (in
    # JSON the exact escape): stdout may be strict UTF-8 (output_file.write_output alike)
    data = text.encode("utf-8", "backslashreplace")  # as bytes: a 70 MB report is not copied
    # color=True keeps the escapes click would strip from a pipe (FORCE_COLOR, --color always)
    click.echo(data.decode("utf-8") if colored else data, nl=False, color=True if colored else None)
    if output:
        from overlap_check.report.output_file import write_output

        write_output(output, written)
    # on GitHub Actions ($GITHUB_STEP_SUMMARY set) the Markdown summary, whatever the format
    from overlap_check.report.markdown import append_step_summary

    append_step_summary(report, os.environ)
    plot = params.get("plot")
    if plot:
        from overlap_check.report.plots import write_plots

        for path in write_plots(report, captures, plot):
            if not params.get("quiet"):
                warn(f"wrote {path}")
    if not params.get("quiet"):
        _stderr_details(report, captures, int(params.get("verbose") or 0), fmt)
    return report.exit_code
