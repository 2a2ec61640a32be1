"""Judging: evidence of every run + the decisions over them (judge.decide) -> one Report,
which carries every decision (warm runs, main streams, plan streams, device cores) and the
gate's mark on each plan and stream pair."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace

from overlap_check import __version__
from overlap_check.judge.decide import RankDecisions, decide
from overlap_check.judge.plan_results import plan_result
from overlap_check.judge.verdict import gate, mark_gate, with_cause, worst_rank
from overlap_check.measure.communication import PROFILER_TOLERANCE, CommFigure, profiler_difference
from overlap_check.measure.cores import Limits, combine_cores, contention_at
from overlap_check.measure.figures import CaptureFigures
from overlap_check.measure.joins import join_wait_cause, plan_walls, side_tail_cause, tail_ops_cause
from overlap_check.measure.runs import spread
from overlap_check.measure.shapes import warm_signature
from overlap_check.measure.streams import pair_results, rank_summary
from overlap_check.model import (
    Capture,
    CommunicationStep,
    CoresResult,
    Evidence,
    Options,
    Plan,
    PlanResult,
    ProfilerStepTime,
    RankCommunication,
    RankStreamSummary,
    Report,
    RunInfo,
    StreamPair,
    rank_text,
)
from overlap_check.model.errors import InputError, OverlapCheckError


def _helper_streams(
    figures: Sequence[CaptureFigures], members: Sequence[int], main: int
) -> frozenset[int]:
    """The rank's helper streams: named so in every run where the stream ran compute."""
    named = [frozenset(figures[i].helpers.get(main, ())) for i in members]
    present = [frozenset(figures[i].helpers) for i in members]
    candidates = frozenset().union(*named)
    return frozenset(
        s for s in candidates if all(s in n for n, p in zip(named, present, strict=True) if s in p)
    )


# Report fields that echo the options; CommunicationStep's times, as the step's figure has them
_ECHOED = ("thresholds", "fake_share", "allow_missing_wait", "warmup", "min_runs", "per",
           "fail_on", "strict", "config_path")  # fmt: skip
_COMM_TIMES = ("busy_ns", "hidden_ns", "exposed_ns", "compute_ns")


def _capture_notes(where: str, capture: Capture) -> list[str]:
    notes = []
    if capture.skipped_rows:  # the first five lines named: the JSON lists them all
        first = ", ".join(map(str, capture.skipped_lines[:5]))
        at = f" (line(s) {first}{' ...' * (len(capture.skipped_lines) > 5)})" * bool(first)
        notes.append(
            f"{where}: {capture.skipped_rows} malformed row(s) skipped in "
            f"{capture.skipped_file or capture.path}{at}"
        )
    if capture.incomplete:
        notes.append(f"{where}: incomplete: {capture.incomplete} ({capture.path})")
    if capture.unplaced_rows:
        notes.append(
            f"{where}: {capture.unplaced_rows} kernel row(s) of {capture.path} "
            f"({capture.source}) could not be placed on a stream: left out of every stream's "
            "figures"
        )
    return notes


def judge(
    figures: Sequence[CaptureFigures],
    options: Options,
    limits: Limits | None,
    limits_error: OverlapCheckError | None,
) -> Report:
    """The Report of these runs (in run order; ranks mixed). ``limits_error``: why the
    core limits could not be configured (raised where the core checks begin)."""
    if not figures:
        raise InputError("no profiler capture to analyse")
    decisions = decide(figures, options)
    ranks, device, ordered = decisions.ranks, decisions.device, decisions.order
    if limits_error is not None:
        raise limits_error
    if limits is None:
        raise ValueError("no core limits and no error saying why")
    runs: list[RunInfo] = []
    notes: list[str] = []
    summaries: list[RankStreamSummary] = []
    pairs: list[StreamPair] = []
    provisional_ranks: list[tuple[int | None, str]] = []  # (rank, why), as the gate says it
    damaged_ranks: list[int | None] = []
    run_reasons: set[str] = set()  # why the run count makes a rank provisional
    unit = "steps" if options.per == "step" else "runs"
    for r in ranks:
        rank = f"rank {rank_text(r.rank)}"
        for index, i in enumerate(r.members, start=1):
            runs.append(_run_info(figures[i], index, r.warm(i)))
            notes += _capture_notes(f"{rank} run {index}", figures[i].capture)
        warmup = r.warmup
        if warmup.provisional:  # too few runs, or enough but too few to leave a warm one
            few = warmup.samples < options.min_runs
            reduced = f" (reduced from {options.warmup})" * (warmup.warmup < options.warmup)
            asks = f" (the method asks for at least {options.min_runs})" * few
            counted = f"{warmup.samples} {unit[:-1] if warmup.samples == 1 else unit}"
            notes.append(
                f"{rank}: provisional: {counted}{asks}; {warmup.warmup} discarded "
                f"as warm-up{reduced}, {warmup.samples - warmup.warmup} judged"
            )
            cold = f"cold {unit} judged: warm-up reduced from {options.warmup} to {warmup.warmup}"
            why = f"fewer than {options.min_runs} {unit}" if few else cold
            provisional_ranks.append((r.rank, why))
            run_reasons.add(f"judged on {why} (--min-runs)" if few else cold)
        if _damaged(figures, r):
            notes.append(
                f"{rank}: provisional: malformed rows were skipped or an export is incomplete "
                "(above); the figures stand on the rows left"
            )
            damaged_ranks.append(r.rank)
        samples = [s for s, _, _ in r.samples]
        per_sample = [figures[i].samples[k] for _, i, k in r.samples]
        sets = [f.sets for f in per_sample]
        summary = rank_summary(r.rank, samples, sets, r.main)
        if r.main is not None:
            if all(r.main not in s.busy for s in sets):
                notes.append(f"{rank}: main stream {r.main} has no compute kernel")
            helpers = _helper_streams(figures, r.members, r.main)
            pair_figures = [
                {s: f for s, f in f.pair_figures(r.main).items() if s not in helpers}
                for f in per_sample
            ]
            pairs += pair_results(
                r.rank, r.main, samples, pair_figures, options.thresholds, _provisional(figures, r)
            )
            summary = replace(summary, helper_streams=tuple(sorted(helpers)))
            if not options.plans and not any(p.rank == r.rank for p in pairs):
                beside = f" (beside it helper stream(s) {', '.join(map(str, sorted(helpers)))})"
                notes.append(
                    f"{rank}: a single compute stream, {r.main}{beside if helpers else ''}, and "
                    "no plan: no stream pair to judge; "
                    + ("fails with --strict" if options.strict else "passes (fails with --strict)")
                )
        summaries.append(summary)
    found = [_communication(r, figures, options) for r in ranks]
    notes += [note for _, comm_notes in found for note in comm_notes]
    # a Kineto run's findings (capture validity, SM demand, HTA's figure) in every renderer
    notes += [
        f"rank {rank_text(r.rank)} run {r.index}: {n}"
        for r in runs
        if r.source == "kineto"
        for n in r.notes
    ]
    if options.plans and options.path is None and options.path_source is not None:
        notes.append(f"execution path unknown: {options.path_source}; the advice is generic")
    by_run = dict(zip(ordered, runs, strict=True))
    cores_result = combine_cores(
        device,
        limits,
        runs,
        [figures[i].rules for i in ordered],
        # a cold run is not swept
        [
            contention_at(contention, (device.aicore, device.vectorcore))
            if by_run[i].warm and (contention := figures[i].contention) is not None
            else None
            for i in ordered
        ],
        options,
    )
    plans = [
        _plan_result(plan, p, r, figures, options, cores_result, device.aicore)
        for p, plan in enumerate(options.plans)
        for r in ranks
    ]
    unplaced_notes = _unplaced_notes(options.plans, ranks, figures)
    notes += unplaced_notes
    provisional_reasons = (
        *sorted(run_reasons),
        *["malformed rows were skipped or an export is incomplete"] * bool(damaged_ranks),
        *["kernel rows without a stream may belong to a plan"] * bool(unplaced_notes),
    )
    decision = gate(
        plans,
        pairs,
        summaries,
        cores_result,
        options,
        provisional_ranks=provisional_ranks,
        damaged_ranks=damaged_ranks,
        use_plans=bool(options.plans),
    )
    worst = decision.worst_rank if decision.worst_rank is not None else worst_rank(plans, pairs)
    report = Report(
        provisional_reasons=provisional_reasons,
        tool_version=__version__,
        verdict="pass" if decision.passed else "fail",
        exit_code=0 if decision.passed else 1,
        **{name: getattr(options, name) for name in _ECHOED},
        runs=tuple(runs),
        stream_pairs=tuple(pairs),
        ranks=tuple(summaries),
        plans=tuple(plans),
        # the Ascend core rules (Block Num, limit_core_num) say nothing of CUDA GPUs, whose
        # SM demand is advice in each Kineto run's notes (readers.kineto.sm_demand)
        cores=None if runs and all(r.source == "kineto" for r in runs) else cores_result,
        gate_reasons=decision.reasons,
        notes=tuple(notes),
        worst_rank=worst if len(ranks) > 1 else None,  # the worst failing rank, else lowest
        communication=tuple(comm for comm, _ in found if comm is not None),
    )
    report = mark_gate(report)
    if options.baseline is None:
        return report
    from overlap_check.judge.baseline import apply_baseline, load_baseline

    return apply_baseline(report, load_baseline(options.baseline), options.tolerance)


def _profiler_row(fig: CaptureFigures, step: int | None) -> ProfilerStepTime | None:
    """The capture's step_trace_time.csv row of this step (its own device's, when several)."""
    rows = [p for p in fig.capture.profiler_steps if p.step == step]
    own = [p for p in rows if p.device is None or p.device == fig.capture.device]
    return next(iter(own or rows), None)


def _us_text(*values: int | None) -> str:
    return "/".join("n/a" if v is None else f"{v / 1000:.3f}" for v in values)


def _communication(
    r: RankDecisions, figures: Sequence[CaptureFigures], options: Options
) -> tuple[RankCommunication | None, list[str]]:
    """The rank's communication (docs/method.md, "Communication"), and notes for a step that
    differs from the profiler's figures or has communication only the profiler saw."""
    warm_steps = {(i, s.step): s.warm for s, i, _ in r.samples}
    steps: list[CommunicationStep] = []
    notes: list[str] = []
    unseen: list[str] = []  # steps with communication where the kernel table has none
    for run, i in enumerate(r.members, start=1):
        fig, where = figures[i], f"rank {rank_text(r.rank)} run {run}"
        ours = fig.comm.steps if fig.comm is not None else ()
        for figure in ours:
            profiler = _profiler_row(fig, figure.step)
            difference = None if profiler is None else profiler_difference(figure, profiler)
            steps.append(
                CommunicationStep(
                    run=run,
                    warm=warm_steps.get((i, figure.step), r.warm(i)),
                    **{f: getattr(figure, f) for f in ("step", *_COMM_TIMES)},
                    profiler=profiler,
                    profiler_difference=difference,
                )
            )
            if profiler is not None and difference is not None and difference > PROFILER_TOLERANCE:
                at = "" if figure.step is None else f" step {figure.step}"
                theirs = _us_text(
                    profiler.communication_ns, profiler.overlapped_ns, profiler.not_overlapped_ns
                )
                notes.append(
                    f"{where}{at}: communication busy/hidden/exposed "
                    f"{_us_text(figure.busy_ns, figure.hidden_ns, figure.exposed_ns)} µs differ "
                    f"from the profiler's Communication/Overlapped/Not Overlapped {theirs} µs by "
                    f"{difference:.1%} of its Communication "
                    f"({fig.capture.profiler_steps_file}; docs/method.md)"
                )
        steps_seen = {f.step for f in ours}
        for row in fig.capture.profiler_steps:
            seen = row.step in steps_seen or row is not _profiler_row(fig, row.step)
            if row.communication_ns and not seen:
                at = "" if row.step is None else f" step {row.step}"
                unseen.append(
                    f"{where}{at}: the profiler counts {_us_text(row.communication_ns)} µs "
                    f"of communication ({fig.capture.profiler_steps_file}) but "
                    f"{fig.capture.source} has no communication row there: not compared"
                )
    notes += unseen
    if all(figures[i].comm is None for i in r.members):
        return None, notes
    samples: list[CommFigure] = []
    for sample, i, _ in r.samples:
        comm = figures[i].comm
        if comm is not None and options.per != "step":
            samples.append(comm.whole)
        else:
            match = [f for f in comm.steps if f.step == sample.step] if comm is not None else []
            samples.append(match[0] if match else CommFigure(sample.step, 0, 0, 0))
    warm = [s.warm for s, _, _ in r.samples]

    def median(values: Sequence[float | None]) -> float | None:
        return spread(values, warm).median

    return (
        RankCommunication(
            rank=r.rank,
            busy_ns=median([f.busy_ns for f in samples]),
            hidden_ns=median([f.hidden_ns for f in samples]),
            exposed_ns=median([f.exposed_ns for f in samples]),
            hidden_pct=median([f.hidden_ns / f.busy_ns if f.busy_ns else None for f in samples]),
            provisional=_provisional(figures, r),
            steps=tuple(steps),
        ),
        notes,
    )


def _run_info(fig: CaptureFigures, index: int, warm: bool) -> RunInfo:
    shared = {f.name for f in fields(Capture)} & {f.name for f in fields(RunInfo)}
    return RunInfo(
        index=index,
        warm=warm,
        streams=fig.streams,
        communication=fig.communication,
        origin_ns=fig.origin_ns,
        **{name: getattr(fig.capture, name) for name in shared},
    )


def _damaged(figures: Sequence[CaptureFigures], r: RankDecisions) -> bool:
    """A run of the rank lost rows or looks cut short: provisional, never a silent pass."""
    return any(figures[i].capture.skipped_rows or figures[i].capture.incomplete for i in r.members)


def _provisional(figures: Sequence[CaptureFigures], r: RankDecisions) -> bool:
    return r.warmup.provisional or _damaged(figures, r)


def _unplaced_notes(
    plans: Sequence[Plan], ranks: Sequence[RankDecisions], figures: Sequence[CaptureFigures]
) -> list[str]:
    return [
        f"plan {plan.name!r} rank {rank_text(r.rank)}: provisional: {count} kernel row(s) "
        "without a stream may be its own (see the runs' unplaced column): its figures leave "
        "them out"
        for p, plan in enumerate(plans)
        for r in ranks
        if (count := sum(figures[i].plans[p].unplaced for i in r.members))
    ]


def _plan_result(
    plan: Plan,
    p: int,
    r: RankDecisions,
    figures: Sequence[CaptureFigures],
    options: Options,
    cores: CoresResult | None,
    aicore: int,
) -> PlanResult:
    pieces = [figures[i].plans[p] for i in r.members]
    streams = r.plans[p]
    warm_members = [i for i in r.members if r.warm(i)] or list(r.members)
    blocks = [
        figures[i].plans[p].dominator_blocks[streams.main]
        for i in warm_members
        if streams.main in figures[i].plans[p].dominator_blocks
    ]
    causes = list(_contention_evidence(cores, r.rank))
    if blocks and min(blocks) >= aicore > 0:
        causes.append(
            Evidence(
                "cube-saturated",
                f"cube saturated: every dominator kernel asked for at least {min(blocks)} "
                f"AI-core blocks, and the device has {aicore} AI cores",
            )
        )
    samples = []
    siblings = []
    for sample, i, k in r.samples:
        figure = figures[i].samples[k].plan(p, streams.main)
        run = replace(
            figure.run, run=sample.run, warm=sample.warm, sample=sample.label, step=sample.step
        )
        samples.append((run, figure.barriers))
        siblings.append(figure.siblings)
    kineto = all(figures[i].capture.source == "kineto" for i in r.members)
    result = plan_result(
        plan,
        r.rank,
        streams,
        [x.matched for x in pieces],
        samples,
        options.thresholds,
        provisional=_provisional(figures, r) or any(x.unplaced for x in pieces),
        contention_ns=_contention_ns(cores, r.rank),
        fake_share=options.fake_share,
        # a rank captured on CUDA (Kineto) gets advice in torch.cuda's APIs, never torch_npu's
        path=plan.path or options.path or ("cuda" if r.members and kineto else None),
        causes=causes,
        siblings=siblings,
    )
    walls = plan_walls(result.per_run)
    found = result.diagnosed
    # causes measured on the layer figures, each placed by size (verdict.with_cause)
    for measured in (side_tail_cause(walls), join_wait_cause(walls), tail_ops_cause(walls)):
        if measured is not None and found is not None:
            found = with_cause(found, measured)
    shapes = warm_signature([figures[i].plans[p].shapes for i in warm_members])
    return replace(result, walls=walls, diagnosed=found, shapes=shapes)


def _contention_evidence(cores: CoresResult | None, rank: int | None) -> tuple[Evidence, ...]:
    total = _contention_ns(cores, rank)
    listed = [c for c in cores.contention if c.rank == rank] if cores is not None else []
    if total <= 0 or not listed:
        return ()
    worst = max(listed, key=lambda c: (c.demand - c.maximum, -c.start_ns))
    kernels = " + ".join(worst.kernels[:3]) or "kernels of several streams"
    return (
        Evidence(
            "contention",
            f"block demand over the device's cores for {total / 1000:.3f} µs over the warm "
            f"runs; worst instant: {worst.kind} demand {worst.demand} of {worst.maximum} cores "
            f"(run {worst.run}, {kernels})",
            total,
        ),
    )


def _contention_ns(cores: CoresResult | None, rank: int | None) -> int:
    if cores is None:
        return 0
    # the per-rank total, not the listed (capped, per-kind) intervals, which would
    # double-count time where both core kinds are over and miss unlisted intervals
    return dict(cores.over_limit_by_rank).get(rank, 0)
