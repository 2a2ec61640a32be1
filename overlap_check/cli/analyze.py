"""`overlap-check analyze PATH... [options]`: judge existing profiler output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from overlap_check.cli.options import analysis_options, emit, options_from_params, warn

if TYPE_CHECKING:
    from overlap_check.model import Capture, Options, Report


@click.command("analyze")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@analysis_options
@click.pass_context
def analyze(ctx: click.Context, /, paths: tuple[str, ...], **params: Any) -> None:
    """Judge existing profiler output: is each multi-stream plan really parallel?

    PATH is a torch_npu result directory (*_ascend_pt), a folder of them (runs,
    ranks), an msprof PROF_* directory, a bare kernel_details.csv, op_summary_*.csv,
    trace_view.json or .db file, or a CUDA PyTorch profiler trace (*.json[.gz]).
    Several PATHs are several runs, by capture time (--order given: as given).
    Without a plan, each compute stream is judged against the main stream.

    \b
    Examples:
      overlap-check analyze runs/                       # stream-level overlap
      overlap-check analyze runs/ --side SharedExpert --dominator GroupedMatmul
      overlap-check analyze run1/ run2/ run3/ run4/ run5/ --config overlap-check.toml
      overlap-check analyze runs/ --format json --output report.json
      overlap-check analyze runs/ --baseline main.json --tolerance 0.1 --format junit
      overlap-check analyze multi/ --reference single/ --side SharedExpert --require-gain 0
      overlap-check analyze runs/ --side-stream 5 --side-kind copy --fail-on fake
      overlap-check analyze runs/ --config overlap-check.toml --path ge --plot timeline.png

    Exit codes: 0 pass, 1 the gate failed, 2 bad usage or input, 130 interrupted."""
    options = options_from_params(params)
    report, captures = judge_paths(paths, options, plot=bool(params.get("plot")))
    if not params.get("quiet"):
        from overlap_check.measure.runs import rank_key
        from overlap_check.model import rank_text

        ranks = [rank_text(r) for r in sorted({c.rank for c in captures}, key=rank_key)]
        warn(f"read {len(captures)} capture(s), rank(s) {', '.join(ranks)}")
    ctx.exit(emit(report, params, captures))


def judge_paths(
    paths: Sequence[str], options: Options, *, plot: bool
) -> tuple[Report, list[Capture]]:
    """The Report of these PATHs and their captures (with kernel tables only for ``plot``).

    A folder written by ``run`` (it holds ``manifest.json``) stands for its completed
    runs only; the report notes the runs left out."""
    from dataclasses import replace

    from overlap_check.judge.pipeline import analyze_captures, check_paths
    from overlap_check.readers import load_paths, order_note, time_order
    from overlap_check.runner.manifest import run_folder_paths

    if plot:
        from overlap_check.model.extras import require

        require("matplotlib", "plot", "--plot")  # before the analysis, not after
    paths, notes = run_folder_paths(paths)
    if plot:  # pictures need the kernel tables: read them all into memory
        from overlap_check.measure.figures import task_kinds

        captures = load_paths(list(paths), "given", task_kinds(options))
        order = order_note(captures, options.order)
        notes = [*notes, *([order] if order else [])]
        if options.order == "time":
            captures.sort(key=time_order)
        report = analyze_captures(captures, options)
    else:
        checked = check_paths(paths, options)  # only figures: one capture per reducer at a time
        report, captures = checked.report, list(checked.captures)
    if notes:
        report = replace(report, notes=report.notes + tuple(notes))
    return report, captures
