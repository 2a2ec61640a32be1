"""`overlap-check lint`: check model source for multi-stream API routing mistakes."""

from __future__ import annotations

from pathlib import Path

import click

from overlap_check.cli.options import color_option, stdout_color
from overlap_check.lint.render import FORMATS


@click.command(name="lint")
@click.argument("paths", nargs=-1, metavar="PATH...")
@click.option(
    "--select",
    metavar="RULES",
    help="Only these rules (comma-separated codes or prefixes, e.g. OC101,OC104 or OC1).",
)
@click.option(
    "--ignore", metavar="RULES", help="Skip these rules (comma-separated codes or prefixes)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Report format on stdout.",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the report to FILE (.json -> json, .xml -> junit, .sarif -> sarif, "
    ".txt -> text, else --format).",
)
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    help="Config with a [lint] table (select/ignore). Default: the nearest "
    "overlap-check.toml, or pyproject.toml with [tool.overlap-check], from here up to "
    "the repository root. The options above win over it.",
)
@color_option
@click.option("--list-rules", is_flag=True, help="List the rules and exit.")
@click.option(
    "--explain",
    metavar="RULE",
    help="Print why RULE exists, with a wrong and a right example, and exit.",
)
def lint(
    paths: tuple[str, ...],
    select: str | None,
    ignore: str | None,
    fmt: str,
    output: Path | None,
    config_path: str | None,
    color: str,
    list_rules: bool,
    explain: str | None,
) -> None:
    """Check Python model source for multi-stream API routing mistakes.

    PATH is a file or a directory (searched for *.py). The source is parsed,
    never imported or run. Each module's execution path (GE graph via
    torchair.get_npu_backend, npugraph_ex via torch.compile(backend="npugraph_ex"),
    or eager) is taken from its compile calls, else from the other files linted
    with it. Silence one finding with `# overlap-check: ignore[OC103]` on its line, or
    list it in the config ([lint] suppress = ["model.py:12:OC103"]); the report counts
    what was suppressed. The OC2xx rules check CUDA stream code (torch.cuda).

    Exit status: 0 clean, 1 findings, 2 unreadable input or a syntax error.

    \b
    Examples:
      overlap-check lint models/
      overlap-check lint model.py runner.py --ignore OC105
      overlap-check lint src/ --format github
      overlap-check lint src/ --format junit --output lint.xml
      overlap-check lint src/ --format sarif --output lint.sarif
      overlap-check lint src/ --select OC1 --config pyproject.toml
      overlap-check lint --list-rules
      overlap-check lint --explain OC104"""
    from overlap_check.cli.config import load_config
    from overlap_check.lint import RULES, lint_paths, parse_rule_list
    from overlap_check.lint.render import render

    if list_rules:
        for code, (_, summary) in RULES.items():
            click.echo(f"{code}  {summary}")
        return
    if explain is not None:
        from overlap_check.lint.explain import explain as explanation

        code = explain.strip().upper()
        if code not in RULES:
            raise click.UsageError(f"unknown rule {explain!r}; known: {', '.join(RULES)}")
        click.echo(explanation(code, RULES[code][1]), nl=False)
        return
    if not paths:
        raise click.UsageError("missing argument PATH (a file or a directory of Python source)")
    config = load_config(config_path, Path.cwd())
    selected = parse_rule_list(select, option="--select")
    if selected is None and config.lint_select:
        selected = parse_rule_list(config.lint_select, option=config.key_origin("lint", "select"))
    ignored = parse_rule_list(ignore, option="--ignore")
    if ignored is None and config.lint_ignore:
        ignored = parse_rule_list(config.lint_ignore, option=config.key_origin("lint", "ignore"))
    result = lint_paths(paths, select=selected, ignore=ignored, suppress=config.lint_suppress)
    colored = fmt == "text" and stdout_color(color)
    click.echo(render(result, fmt, color=colored), nl=False, color=True if colored else None)
    if output is not None:
        from overlap_check.report.output_file import format_of_suffix, write_output

        # the format its suffix names, else the --format given; no colour
        text = render(result, format_of_suffix(output, FORMATS) or fmt)
        write_output(output, text)
    if result.findings:
        raise click.exceptions.Exit(1)
