"""``overlap-check compare BASE.json HEAD.json``: the baseline check without new captures.

Exit 1 when a figure regressed by more than the tolerance or is missing from
HEAD, 0 otherwise, 2 on bad input. The tolerance comes from ``--tolerance``,
else OVERLAP_CHECK_TOLERANCE, else the config's ``[gate] tolerance``, else 0.1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from overlap_check.cli.config import load_config, merge_options
from overlap_check.cli.options import DEFAULTS, color_option, stdout_color
from overlap_check.judge.baseline import compare_reports, comparison_to_dict, failing, load_baseline
from overlap_check.model import BaselineDelta
from overlap_check.model.verdicts import describe
from overlap_check.report.color import paint, paint_verdict
from overlap_check.report.escape import displayed, guarded, json_text
from overlap_check.report.markdown import append_markdown, render_comparison, step_summary_target


def _text(
    deltas: tuple[BaselineDelta, ...], tolerance: float, base: str, head: str, color: bool = False
) -> str:
    lines = [f"overlap-check compare: {base} vs {head} (tolerance {tolerance:.3f})"]
    marks = {"regressed": "REGRESSED", "missing-in-head": "MISSING"}
    for delta in deltas:
        mark = marks.get(delta.status)
        flag = f"  [{paint(mark, 'bold red', color)}]" if mark else ""
        lines.append(f"  {describe(delta, tolerance)}{flag}")
    bad = failing(deltas)
    verdict = paint_verdict("fail" if bad else "pass", color)
    lines.append(f"result: {verdict} ({len(bad)} failing of {len(deltas)})")
    return "\n".join(lines) + "\n"


@click.command("compare")
@click.argument("base", type=click.Path(dir_okay=False))
@click.argument("head", type=click.Path(dir_okay=False))
@click.option(
    "--tolerance",
    type=float,
    default=None,
    help=(
        "Allowed absolute drop of a plan's hidden_pct (a stream pair's overlap_pct); "
        "unset: OVERLAP_CHECK_TOLERANCE  "
        f"[default: {DEFAULTS.tolerance}, or the config's]"
    ),
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="Comparison format on stdout.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (for [gate] tolerance).",
)
@color_option
@click.pass_context
def compare(
    ctx: click.Context,
    base: str,
    head: str,
    tolerance: float | None,
    output_format: str,
    config_path: str | None,
    color: str,
) -> None:
    """Compare two JSON reports: BASE (e.g. the main branch's) and HEAD.

    \b
    Examples:
      overlap-check compare main.json pr.json
      overlap-check compare main.json pr.json --tolerance 0.05 --format markdown
      overlap-check compare main.json pr.json --config overlap-check.toml --format json

    Exit codes: 0 no regression, 1 a figure regressed or is missing from HEAD,
    2 a file that is not a report."""
    config = load_config(config_path, Path.cwd())
    tolerance = merge_options(config, {"tolerance": tolerance}, os.environ).tolerance
    deltas = compare_reports(load_baseline(base), load_baseline(head), tolerance)
    if output_format == "json":
        document = comparison_to_dict(deltas, tolerance, base, head)
        click.echo(json_text(json.dumps(document, indent=2)))
    # the other formats show the names escaped (escape.py)
    shown_deltas, base, head = displayed((deltas, base, head))
    if output_format == "markdown":
        click.echo(guarded(render_comparison(shown_deltas, tolerance, base, head)), nl=False)
    elif output_format == "text":
        colored = stdout_color(color)
        text = guarded(_text(shown_deltas, tolerance, base, head, colored))
        click.echo(text, nl=False, color=True if colored else None)
    summary = step_summary_target(os.environ)
    if summary is not None:
        append_markdown(render_comparison(shown_deltas, tolerance, base, head), summary)
    if failing(deltas):
        ctx.exit(1)
