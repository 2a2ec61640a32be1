"""The plain-text report: verdict and reasons first, then plans, stream pairs, ranks and runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from overlap_check.model import (
    BarrierCandidate,
    CommunicationStep,
    Occurrence,
    PlanResult,
    PlanRun,
    ReferenceDelta,
    Report,
    Thresholds,
    rank_text,
)
from overlap_check.model.verdicts import barrier_phrase, figure_text
from overlap_check.report.cases import diagnosis_lines, pct
from overlap_check.report.color import BASELINE_STYLE, VERDICT_STYLE, bold, paint
from overlap_check.report.text_cores import Origins, render_cores
from overlap_check.report.text_table import Painter, fitted, table

WINDOW = "window overlap_pct = overlap / min(side window, dominator window), median over warm runs"
HIDDEN = "hidden_pct: side busy time under the main path, warm median (decides)"
BUSY = (
    "busy-time overlap_pct = |busy(main) ∩ busy(side)| / min(busy(main), busy(side)), warm median"
)


def us(ns: float | None) -> str:
    return "n/a" if ns is None else f"{ns / 1000:.3f}"


def _heading(title: str, explanation: str, color: bool) -> str:
    return bold(title, color) + (f" ({explanation})" if explanation else "")


def _judged(color: bool) -> Painter:
    """Paints a figure's "(provisional)" mark: the figure stands on fewer runs than asked."""
    mark = " (provisional)"
    return lambda cell: cell.replace(mark, " " + paint(mark[1:], "yellow", color))


def _styled(styles: Mapping[str, str], color: bool) -> Painter:
    return lambda cell: paint(cell, styles.get(cell), color)


def _deciding_cell(plan: PlanResult) -> str:
    found = plan.deciding_occurrence()
    if found is None or not found[0].warm:
        return "-"
    run, occ = found
    return f"#{occ.index}, {run.sample or f'run {run.run}'}"


def _samples(plan: PlanResult) -> str:
    return "runs" if not plan.per_run or plan.per_run[0].sample is None else "steps"


def _per_run(runs: Sequence[PlanRun], thresholds: Thresholds) -> str:
    return ", ".join(
        f"{r.sample or f'run {r.run}'}{'' if r.warm else ' (cold)'} "
        f"{figure_text(r.hidden_pct, thresholds)} (overlap_pct {pct(r.overlap_pct)})"
        for r in runs
    )


def _occurrence_counts(plan: PlanResult) -> str:
    warm = [r for r in plan.per_run if r.warm] or list(plan.per_run)
    if not warm:
        return "-"
    counts = {(r.judged, r.occurrences) for r in warm}
    return f"{warm[0].judged}/{warm[0].occurrences}" + ("*" if len(counts) > 1 else "")


def _window(start: int | None, end: int | None, origin: int | None) -> str:
    if start is None or end is None or origin is None:
        return "[n/a]"
    return f"[{us(start - origin)}, {us(end - origin)}] µs"


def _deciding(plan: PlanResult, origins: Origins, thresholds: Thresholds) -> str:
    """The deciding occurrence's record (times from the run's first compute kernel)."""
    found = plan.deciding_occurrence()
    if found is None:
        return ""
    run, occ = found
    origin = origins.get((plan.rank, run.run))
    barrier = _barrier(plan.barrier_candidates[0]) if plan.barrier_candidates else "none"
    return (
        f"#{occ.index} ({run.sample or f'run {run.run}'}): side window "
        f"{_window(occ.side_start_ns, occ.side_end_ns, origin)}, dominator window "
        f"{_window(occ.dom_start_ns, occ.dom_end_ns, origin)} ({occ.dominator}), "
        f"hidden_pct {figure_text(occ.hidden_pct, thresholds)} ({occ.verdict or 'not judged'}"
        f" on its own; plan verdict {plan.verdict}), overlap_pct {pct(occ.overlap_pct)}, "
        f"barrier {barrier}"
    )


def _barrier(b: BarrierCandidate) -> str:
    who = "the side stream waited for it" if b.waited == "side" else "the main stream waited"
    return f"{b.chain or b.name} ({who})"


MAX_LAYERS = 5  # layer rows the text shows; the JSON report has every layer


def _layers(plan: PlanResult, origins: Origins, thresholds: Thresholds) -> list[str]:
    """The deciding run's deciding and worst layers and those whose join did not wait."""
    found = plan.deciding_occurrence()
    if found is None:
        return []
    run, deciding = found
    layers = run.layers
    if len(layers) < 2 and not any(o.join_not_waited for o in layers):
        return []  # the deciding occurrence's line says it all
    worst = {o.index for o in run.worst}
    flagged = [o for o in layers if o.join_not_waited]
    first: dict[int, Occurrence] = {}  # by index, the first pick of each
    for o in [deciding, *(o for o in layers if o.index in worst), *flagged]:
        first.setdefault(o.index, o)
    picked = sorted(list(first.values())[:MAX_LAYERS], key=lambda o: o.index)
    origin = origins.get((plan.rank, run.run))
    rows = []
    for o in picked:
        layer = str(o.layer if o.layer is not None else o.index)
        side = _window(o.side_start_ns, o.side_end_ns, origin)
        dom = _window(o.dom_start_ns, o.dom_end_ns, origin)
        figures = [figure_text(o.hidden_pct, thresholds), o.verdict or "-", pct(o.overlap_pct)]
        rows.append([layer, side, dom, *figures, "did not wait" if o.join_not_waited else ""])
    total = max(run.occurrences, len(layers))
    shown = f"{len(picked)} of {total}" if len(picked) < total else str(total)
    header = ["layer", "side window", "dominator window", "hidden_pct", "verdict"]
    # which layers the JSON lists (model.MAX_LISTED_LAYERS bounds the table)
    listed = len(run.layers) < run.occurrences
    in_json = f"{len(run.layers)} of {run.occurrences} in JSON" if listed else "every layer in JSON"
    return [
        f"    layers ({run.sample or f'run {run.run}'}, {shown} shown; {in_json}):",
        *table([*header, "overlap_pct", "join"], rows, indent="      "),
    ]


def _plans(report: Report, origins: Origins, color: bool) -> list[str]:
    thresholds = report.thresholds
    rows = []
    for plan in report.plans:
        hidden = figure_text(plan.hidden_pct, thresholds)
        hidden += " (capped)" if plan.diagnosed and plan.diagnosed.capped else ""
        hidden += " (provisional)" if plan.provisional else ""
        used = f"{plan.runs_used}/{len(plan.per_run)} {_samples(plan)}"
        cells = [plan.name, rank_text(plan.rank), hidden, plan.verdict, pct(plan.overlap_pct)]
        counts, deciding = _occurrence_counts(plan), _deciding_cell(plan)
        rows.append([*cells, pct(plan.busy_overlap_pct), used, counts, deciding])
    header = ["plan", "rank", "hidden_pct", "verdict", "overlap_pct", "busy_pct", "used"]
    header += ["judged/occ", "deciding"]  # its record is under the table
    painters = {2: _judged(color), 3: _styled(VERDICT_STYLE, color)}
    explanation = HIDDEN + "; " + WINDOW + "; busy_pct: busy-time figure"
    lines = [_heading("Plans", explanation, color), *table(header, rows, paint=painters), ""]
    for plan in report.plans:
        lines.append(f"  {plan.name}, rank {rank_text(plan.rank)}: {plan.diagnosis}")
        lines += [f"    {label}: {text}" for label, text in diagnosis_lines(plan)]
        streams = f"side {rank_text(plan.side_stream)}, main {rank_text(plan.main_stream)}"
        per_run = _per_run(plan.per_run, thresholds)
        lines.append(f"    streams: {streams}; hidden_pct per {_samples(plan)[:-1]}: {per_run}")
        tasks = f"{plan.side_kind} tasks, hidden_pct against compute on any other stream"
        lines += _line("side ops: ", tasks if plan.side_kind != "compute" else "")
        real, partial, fake = plan.verdict_counts
        counts = f"{real} real, {partial} partial, {fake} fake" if real + partial + fake else ""
        lines += _line("warm occurrences by hidden_pct: ", counts)
        lines += _line("deciding occurrence ", _deciding(plan, origins, thresholds))
        lines += _layers(plan, origins, thresholds)
        lines += [f"    finding: {finding}" for finding in plan.findings]
        lines += _line("walls: ", _walls(plan))
        lines += _line("not judged (warm runs): ", _unjudged(plan))
        faked = plan.fake_occurrences
        phrases = [barrier_phrase(b, faked, hint=False) for b in plan.barrier_candidates]
        lines += [f"    barrier candidate: {phrase}" for phrase in phrases]
    return lines


def _line(label: str, text: str) -> list[str]:
    return [f"    {label}{text}"] if text else []


def _walls(plan: PlanResult) -> str:
    w = plan.walls
    if w is None or not w.layers:
        return ""
    text = (
        f"{w.layers} per {_samples(plan)[:-1]}, wall {us(w.layer_wall_ns)} µs, dominator "
        f"{us(w.dominator_ns)} µs, side ops {us(w.side_total_ns)} µs; join wait "
        f"{us(w.join_wait_ns)} µs"
    )
    if w.join_wait_worst_ns:
        where = f"layer {w.join_wait_worst_layer} of run {w.join_wait_worst_run}"
        text += f" (worst {us(w.join_wait_worst_ns)} µs, {where})"
    text += f", side tail {us(w.side_tail_ns)} µs"
    if w.tail_ops:  # only when some ran: reports without them read as before
        ops = ", ".join(f"{t.name} x{round(t.count, 2):g} {us(t.ns)} µs" for t in w.tail_ops)
        text += f"; tail ops {ops}"
    return text + f"; step wall {us(w.step_wall_ns)} µs"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}%"


def _reference(report: Report, color: bool) -> list[str]:
    ref = report.reference
    if ref is None:
        return []
    rows = []
    for d in ref.plans:  # each wall figure before -> after, its change beside two of them
        layer, dominator, side, step, join = (
            f"{us(getattr(d.before, f))} -> {us(getattr(d.after, f))}" for f in WALLS
        )
        layer_delta, step_delta = _signed(d.layer_wall_delta_pct), _signed(d.step_wall_delta_pct)
        cells = [d.plan, rank_text(d.rank), str(d.layers), layer, layer_delta, dominator, side]
        rows.append([*cells, step, step_delta, join, us(d.new_join_wait_ns)])
    header = ["plan", "rank", "layers", "layer wall µs", "Δ%", "dominator µs", "side ops µs"]
    header += ["step wall µs", "Δ%", "join wait µs", "new join wait µs"]
    explanation = f"against {ref.path}, warm medians, before -> after; Δ% positive = slower"
    steps = [_steps_line(d) for d in ref.plans]
    return ["", _heading("Reference", explanation, color), *table(header, rows), *steps]


WALLS = ("layer_wall_ns", "dominator_ns", "side_total_ns", "step_wall_ns", "join_wait_ns")


def _steps_line(d: ReferenceDelta) -> str:
    """The step-by-step comparison in one line (every step is in the JSON)."""
    text = (
        f"  {d.plan}, rank {rank_text(d.rank)}, step by step: {d.steps_after} warm step(s) vs "
        f"{d.steps_before} in the reference, {len(d.steps)} matched by order"
    )
    if d.worst_step is None:
        return text
    worst = d.steps[d.worst_step - 1]
    step = "" if worst.after.step is None else f" step {worst.after.step}"
    where = f"run {worst.after.run}{step}"
    return text + (
        f"; step wall Δ median {_signed(d.step_delta_median_pct)}, worst {where}: "
        f"{us(worst.before.wall_ns)} -> {us(worst.after.wall_ns)} µs "
        f"({_signed(worst.delta_pct)})"
    )


def _unjudged(plan: PlanResult) -> str:
    warm = [r for r in plan.per_run if r.warm]
    counts = {
        "dominators with no side op": sum(r.no_side for r in warm),
        "side-op groups after the last dominator": sum(r.no_dominator for r in warm),
        "zero-length windows": sum(r.zero_length for r in warm),
    }
    return ", ".join(f"{n} {what}" for what, n in counts.items() if n)


def _pairs(report: Report, color: bool) -> list[str]:
    if not report.stream_pairs:
        return [bold("Stream pairs", color) + ": none (fewer than two compute streams)"]
    rows = []
    for p in report.stream_pairs:
        figure = figure_text(p.overlap_pct, report.thresholds)
        figure += " (provisional)" if p.provisional else ""
        cells = [rank_text(p.rank), str(p.main), str(p.side), us(p.overlap_ns)]
        rows.append([*cells, figure, p.verdict])
    header = ["rank", "main", "side", "overlap_us", "overlap_pct", "verdict"]
    return [
        _heading("Stream pairs", BUSY, color),
        *table(header, rows, paint={4: _judged(color), 5: _styled(VERDICT_STYLE, color)}),
    ]


def _ranks(report: Report, color: bool) -> list[str]:
    rows = []
    for r in report.ranks:
        figures = [f"{r.parallelism:.3f}", us(r.concurrent_ns), us(r.wall_ns)]
        rows.append([rank_text(r.rank), rank_text(r.main_stream), *figures])
    header = ["rank", "main", "parallelism", "concurrent_us (>= 2 streams)", "wall_us"]
    explanation = "warm medians; parallelism = kernel time / wall span, ~1.0 is serial"
    helpers = [
        f"  rank {rank_text(r.rank)}: helper stream(s) {', '.join(map(str, r.helper_streams))}"
        " (only AI_CPU/DSA_SQE work or under 1% of the main stream's busy time): not judged"
        for r in report.ranks
        if r.helper_streams
    ]
    return [_heading("Ranks", explanation, color), *table(header, rows), *helpers]


def _runs(report: Report, color: bool) -> list[str]:
    rows = []
    for r in report.runs:
        warm = "warm" if r.warm else "cold"
        streams = " ".join(f"{s.stream_id}:{s.kernels}/{us(s.busy_ns)}" for s in r.streams)
        cells = [rank_text(r.rank), str(r.index), warm, r.source, r.level or "-", streams or "-"]
        rows.append([*cells, str(r.skipped_rows), str(r.unplaced_rows), r.path])
    header = ["rank", "run", "warm", "source", "level", "streams id:kernels/busy_us", "skipped"]
    header += ["unplaced", "path"]
    unit = "steps" if report.per == "step" else "runs"
    explanation = (
        f"first {report.warmup} {unit} of each rank are cold, unless fewer runs: see notes"
    )
    return [_heading("Runs", explanation, color), *table(header, rows)]


COMMUNICATION = (
    "whole device, per rank: busy = union of communication ops, hidden = its part under "
    "compute on any stream, exposed = busy - hidden; warm medians"
)
COMMUNICATION_STEPS = (
    "per step; profiler: step_trace_time.csv Communication, Overlapped, "
    "Communication(Not Overlapped), Computing, Free; diff: largest gap / its Communication"
)


def step_table(report: Report) -> tuple[str, list[str], list[list[str]]]:
    """The per-step explanation, header and rows; the profiler's columns only where a step has
    its figures (a CUDA trace has no step_trace_time.csv: they would be five "-" columns)."""
    rows = [step_cells(c.rank, s) for c in report.communication for s in c.steps]
    if any(cells[8:] != ["-"] * 6 for cells in rows):
        return COMMUNICATION_STEPS, STEP_HEADER, rows
    return "per step (no profiler figures to compare)", STEP_HEADER[:8], [r[:8] for r in rows]


def step_cells(rank: int | None, s: CommunicationStep) -> list[str]:
    p = s.profiler
    theirs = ["-"] * 5
    if p is not None:
        figures = (p.communication_ns, p.overlapped_ns, p.not_overlapped_ns, p.computing_ns)
        theirs = [us(ns) for ns in (*figures, p.free_ns)]
    ours = [us(ns) for ns in (s.busy_ns, s.hidden_ns, s.exposed_ns, s.compute_ns)]
    step, warm = "-" if s.step is None else str(s.step), "warm" if s.warm else "cold"
    diff = "-" if s.profiler_difference is None else f"{s.profiler_difference:.2%}"
    return [rank_text(rank), str(s.run), step, warm, *ours, *theirs, diff]


STEP_HEADER = ["rank", "run", "step", "warm", "busy_us", "hidden_us", "exposed_us", "compute_us"]
STEP_HEADER += ["profiler comm_us", "overlapped_us", "not_overlapped_us", "computing_us"]
STEP_HEADER += ["free_us", "diff"]
RANK_HEADER = ["rank", "busy_us", "hidden_us", "exposed_us", "hidden_pct"]


def rank_cells(report: Report) -> list[list[str]]:
    rows = []
    for c in report.communication:
        busy = us(c.busy_ns) + (" (provisional)" if c.provisional else "")
        rows.append([rank_text(c.rank), busy, us(c.hidden_ns), us(c.exposed_ns), pct(c.hidden_pct)])
    return rows


def _communication(report: Report, color: bool) -> list[str]:
    if not report.communication:
        return []
    explanation, header, steps = step_table(report)
    ranks = table(RANK_HEADER, rank_cells(report))
    head = _heading("Communication", COMMUNICATION, color)
    ours = table(header[:8], [row[:8] for row in steps])
    if len(header) == 8:  # no profiler figures
        return [head, *ranks, "  " + explanation, *ours, ""]
    # the profiler's figures by run and step, in a table of their own: one table would wrap
    theirs = table([*header[:3], "comm_us", *header[9:]], [[*r[:3], *r[8:]] for r in steps])
    return [head, *ranks, "  per step", *ours, "  " + explanation, *theirs, ""]


@fitted  # to the terminal's width, its terms explained (text_table.py)
def render(report: Report, *, color: bool = False) -> str:
    passed = report.verdict == "pass"
    status = paint("PASS" if passed else "FAIL", "bold green" if passed else "bold red", color)
    lines = [f"overlap-check {report.tool_version}: {status} (exit {report.exit_code})"]
    origins = {(run.rank, run.index): run.origin_ns for run in report.runs}
    if report.provisional:
        # First, before any verdict: a provisional figure is not yet evidence.
        warning = f"PROVISIONAL: {report.provisional_text}; rerun or repair the capture"
        lines.insert(0, paint(warning + " before trusting the verdict", "bold yellow", color))
    if report.gate_reasons:
        lines.append(paint("Gate failed because:", "bold red", color))
        lines += [f"  - {reason}" for reason in report.gate_reasons]
    if report.worst_rank is not None:
        lines.append(f"Worst rank: {report.worst_rank}")
    if report.config_path is not None:
        lines.append(f"Config: {report.config_path}")
    lines.append("")
    if report.evidence_summary:
        lines += [bold("Evidence:", color), *[f"  {line}" for line in report.evidence_summary], ""]
    if report.plans:
        lines += [*_plans(report, origins, color), ""]
    lines += [*_pairs(report, color), "", *_ranks(report, color), ""]
    lines += [*_communication(report, color), *_runs(report, color), *_reference(report, color)]
    if report.baseline:
        header = ["plan", "rank", "base", "head", "delta", "status"]
        rows = [
            [d.plan, rank_text(d.rank), pct(d.base), pct(d.head), pct(d.delta), d.status]
            for d in report.baseline
        ]
        painters = {5: _styled(BASELINE_STYLE, color)}
        lines += ["", bold("Baseline", color), *table(header, rows, paint=painters)]
    if report.cores is not None:
        lines += ["", render_cores(report.cores, origins, color=color).rstrip("\n")]
    if report.notes:
        lines += ["", bold("Notes:", color), *[f"  - {note}" for note in report.notes]]
    return "\n".join(lines) + "\n"
