"""`overlap-check plot PATH... [options]`: draw the timeline, runs and block-demand charts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from overlap_check.cli.config.settings import SETTINGS
from overlap_check.cli.options import analysis_options, options_from_params, warn

# Options of `analyze` that choose the analysis; the ones about the report and the
# gate (format, output, baseline, fail-on ...) mean nothing for a picture.
_GATE = {setting.name for setting in SETTINGS if setting.section == "gate"}
_NOT_FOR_PLOTS = _GATE | {"format_", "output", "plot", "baseline", "color"}
DEFAULT_FILE = "overlap-check.png"


@click.command("plot")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "-o",
    "--output",
    "out_file",
    metavar="FILE",
    default=DEFAULT_FILE,
    show_default=True,
    help="The first picture (.png or .svg); the others are written beside it.",
)
@click.option("--rank", type=int, metavar="R", help="Draw only this rank.")
@click.option(
    "--run",
    type=click.IntRange(min=1),
    metavar="K",
    help="Timeline of run K (1-based within its rank) [the run of the deciding warm "
    "occurrence: the lowest hidden_pct; with --occurrence: the first warm run that has it].",
)
@click.option(
    "--occurrence",
    type=click.IntRange(min=1),
    metavar="N",
    help="Timeline of occurrence N (1-based within the run) [the deciding warm one].",
)
@click.option(
    "--chart",
    "charts",
    type=click.Choice(["timeline", "runs", "demand"]),
    multiple=True,
    help="Only these charts (repeatable) [all three].",
)
@analysis_options
def plot(paths: tuple[str, ...], **params: Any) -> None:
    """Draw the timeline of a plan occurrence, the runs chart and the block demand.

    PATH is what `analyze` takes. The analysis is the one `analyze` runs (same
    --config, --plan, --side/--dominator, --warmup ...); without a plan, the
    timeline shows each rank's streams around their busiest overlap region.

    \b
    Files: the first chart goes to FILE; every other chart is written beside it
    as <stem>-<chart>[-<plan>][-rank<R>].png (or .svg), e.g. for -o out.png:
      out.png                          timeline of the first plan (deciding warm occurrence)
      out-timeline-<plan>.png          timeline of each further plan
      out-runs.png                     hidden_pct per run and rank (pairs: overlap_pct) vs the bands
      out-demand-<plan>.png            AI Core / AI Vector blocks demanded vs device cores
    (no demand chart without block counts: CUDA). The rank part appears only when the
    capture holds several ranks. The written paths are listed on stderr.

    \b
    Examples:
      overlap-check plot fixtures/fake-dual-stream --side SharedExpert --dominator GroupedMatmul
      overlap-check plot runs/ -o streams.svg          # no plan: stream-level timeline
      overlap-check plot runs/ --config overlap-check.toml --plan moe-shared-expert --rank 1
      overlap-check plot runs/ --side SharedExpert --dominator GroupedMatmul \\
          --run 4 --occurrence 17 --chart timeline -o layer17.svg

    Exit codes: 0 the pictures were written, 2 bad usage or input, or matplotlib is
    missing (pip install 'overlap-check[plot]')."""
    from overlap_check.model.extras import require

    require("matplotlib", "plot", "overlap-check plot")  # before the analysis, not after
    from overlap_check.judge.pipeline import analyze_captures
    from overlap_check.measure.figures import task_kinds
    from overlap_check.readers import load_paths
    from overlap_check.report.plots import CHART_KINDS, picture_format, write_plots
    from overlap_check.runner.manifest import run_folder_paths

    out_file = Path(params.pop("out_file"))
    picture_format(out_file)  # a bad suffix fails before the analysis, not after
    options = options_from_params(params)
    read, notes = run_folder_paths(paths)  # a `run` folder: its completed runs only
    if not params.get("quiet"):
        for note in notes:
            warn(f"note: {note}")
    from overlap_check.measure.occurrence import measurer

    captures = load_paths(read, options.order, task_kinds(options))
    report = analyze_captures(captures, options)
    written = write_plots(
        report,
        captures,
        out_file,
        rank=params.get("rank"),
        run=params.get("run"),
        occurrence=params.get("occurrence"),
        kinds=tuple(params.get("charts") or CHART_KINDS),
        measure=measurer(options.plans),
    )
    if not params.get("quiet"):
        for path in written:
            warn(f"wrote {path}")


plot.params = [p for p in plot.params if p.name not in _NOT_FOR_PLOTS]
