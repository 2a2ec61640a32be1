"""Judging: the figures of every run (:mod:`overlap_check.figures`) → one Report.

Runs are grouped by rank and numbered, samples get their warm flags, and the
decisions that need every run of a rank are taken here: the main stream, each
plan's streams, the device cores. Captures reduced under a different guess are
reduced again (``redo``) before anything is judged. Then, as the stages would
on the kernel tables: stream pairs and parallelism (streams.pair_results,
streams.rank_summary), core limits (cores.combine_cores), plans
(plans.plan_result), and the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from overlap_check import __version__
from overlap_check.cores import Limits, combine_cores, resolve_device
from overlap_check.errors import InputError, OverlapCheckError, UsageError
from overlap_check.figures import CaptureFigures, Hints, SampleFigures, most_time, plan_main
from overlap_check.model import (
    CoresResult,
    Options,
    Plan,
    PlanResult,
    RankStreamSummary,
    Report,
    RunInfo,
    StreamPair,
    Thresholds,
    rank_text,
)
from overlap_check.plans import PlanStreams, plan_result
from overlap_check.runs import Sample, WarmupPlan, group_by_rank, number_samples
from overlap_check.streams import choose_main_stream, pair_results, rank_summary
from overlap_check.table import empty_kernel_table
from overlap_check.verdict import gate, mark_gate, worst_rank

Redo = Callable[[Sequence[tuple[int, Hints]]], list[CaptureFigures]]


@dataclass(frozen=True)
class _Rank:
    rank: int | None
    members: list[int]  # positions of its runs in the figures list, in run order
    samples: list[tuple[Sample, int, int]]  # sample, member position, index in its samples
    warmup: WarmupPlan
    main: int | None


def _ranks(figures: Sequence[CaptureFigures], options: Options) -> list[_Rank]:
    """Runs grouped by rank, samples numbered with their warm flags, each rank's main
    stream: runs.group_by_rank and runs.number_samples on the figures."""
    ranks = []
    empty = empty_kernel_table()
    groups = group_by_rank(range(len(figures)), lambda i: figures[i].capture.rank)
    for rank, members in groups.items():
        for i in members:  # make_samples raises for the first run without steps
            error: UsageError | None = figures[i].step_error
            if error is not None:
                raise error
        raw = [
            (run, i, k, s)
            for run, i in enumerate(members, start=1)
            for k, s in enumerate(figures[i].samples)
        ]
        numbered, warmup = number_samples(
            [(run, s.step, empty) for run, _, _, s in raw], options.warmup, options.min_runs
        )
        samples = [(sample, i, k) for sample, (_, i, k, _) in zip(numbered, raw, strict=True)]
        main = choose_main_stream([s.sets for *_, s in raw], options.main_stream)
        ranks.append(_Rank(rank, members, samples, warmup, main))
    return ranks


def _sample(figures: Sequence[CaptureFigures], i: int, k: int) -> SampleFigures:
    return figures[i].samples[k]


def judge(
    figures: Sequence[CaptureFigures],
    options: Options,
    limits: Limits | None,
    limits_error: OverlapCheckError | None,
    redo: Redo,
) -> Report:
    """The Report of these runs (in run order; ranks mixed). ``limits_error``: why the
    core limits could not be configured (raised where the core checks begin)."""
    if not figures:
        raise InputError("no profiler capture to analyse")
    figures = list(figures)
    ranks = _ranks(figures, options)
    ordered = [i for r in ranks for i in r.members]
    device = resolve_device(
        [figures[i].capture.device_cores for i in ordered],
        lambda: [m for i in ordered if (m := figures[i].observed) is not None],
        options,
    )
    if limits_error is not None:
        raise limits_error
    if limits is None:
        raise ValueError("no core limits and no error saying why")
    plan_mains = {
        (p, r.rank): plan_main(plan, [figures[i].plans[p].dominator_ns for i in r.members], r.main)
        for p, plan in enumerate(options.plans)
        for r in ranks
    }
    _reduce_again(figures, ranks, (device.aicore, device.vectorcore), redo)
    runs: list[RunInfo] = []
    notes: list[str] = []
    summaries: list[RankStreamSummary] = []
    pairs: list[StreamPair] = []
    provisional_ranks: list[int | None] = []
    for r in ranks:
        for index, i in enumerate(r.members, start=1):
            runs.append(
                _run_info(figures[i], index, any(s.warm for s, j, _ in r.samples if j == i))
            )
            capture = figures[i].capture
            if capture.skipped_rows:
                notes.append(
                    f"rank {rank_text(r.rank)} run {index}: {capture.skipped_rows} "
                    f"malformed row(s) skipped in {capture.skipped_file or capture.path}"
                )
        note = _warmup_note(r.rank, r.warmup, options)
        if note:
            notes.append(note)
            provisional_ranks.append(r.rank)
        samples = [s for s, _, _ in r.samples]
        per_sample = [_sample(figures, i, k) for _, i, k in r.samples]
        sets = [f.sets for f in per_sample]
        if r.main is not None:
            if all(r.main not in s.busy for s in sets):
                notes.append(
                    f"rank {rank_text(r.rank)}: main stream {r.main} has no compute kernel"
                )
            pair_figures = [f.pair_figures(r.main) for f in per_sample]
            pairs += pair_results(
                r.rank, r.main, samples, pair_figures, options.thresholds, r.warmup.provisional
            )
        summaries.append(rank_summary(r.rank, samples, sets, r.main))
    by_run = dict(zip(ordered, runs, strict=True))
    cores_result = combine_cores(
        device,
        limits,
        runs,
        [figures[i].rules for i in ordered],
        [figures[i].contention if by_run[i].warm else None for i in ordered],
        options,
    )
    plans = [
        _plan_result(
            plan,
            p,
            r,
            figures,
            plan_mains[p, r.rank],
            options.thresholds,
            _contention_ns(cores_result, r.rank),
        )
        for p, plan in enumerate(options.plans)
        for r in ranks
    ]
    decision = gate(
        plans,
        pairs,
        summaries,
        cores_result,
        options,
        provisional_ranks=provisional_ranks,
        use_plans=bool(options.plans),
    )
    report = Report(
        tool_version=__version__,
        verdict="pass" if decision.passed else "fail",
        exit_code=0 if decision.passed else 1,
        thresholds=options.thresholds,
        runs=tuple(runs),
        stream_pairs=tuple(pairs),
        ranks=tuple(summaries),
        plans=tuple(plans),
        cores=cores_result,
        gate_reasons=decision.reasons,
        notes=tuple(notes),
        warmup=options.warmup,
        min_runs=options.min_runs,
        per=options.per,
        worst_rank=_worst_rank(decision.worst_rank, plans, pairs, len(ranks)),
        fail_on=options.fail_on,
        strict=options.strict,
    )
    return _with_baseline(mark_gate(report), options)


def _reduce_again(
    figures: list[CaptureFigures], ranks: Sequence[_Rank], cores: tuple[int, int], redo: Redo
) -> None:
    """Reduce again, with the decided device cores, the warm captures whose contention was
    swept with other cores (captures without info.json whose Block Num maxima differ)."""
    wrong = [
        (i, Hints(cores))
        for r in ranks
        for i in sorted({i for s, i, _ in r.samples if s.warm})
        if figures[i].cores != cores
    ]
    if wrong:
        for (i, _), fig in zip(wrong, redo(wrong), strict=True):
            figures[i] = fig


def _run_info(fig: CaptureFigures, index: int, warm: bool) -> RunInfo:
    capture = fig.capture
    return RunInfo(
        index=index,
        path=capture.path,
        rank=capture.rank,
        warm=warm,
        source=capture.source,
        streams=fig.streams,
        skipped_rows=capture.skipped_rows,
        skipped_lines=capture.skipped_lines,
        capture_time_ns=capture.capture_time_ns,
        device=capture.device,
        level=capture.level,
        communication=fig.communication,
        stream_source=capture.stream_source,
        notes=capture.notes,
        origin_ns=fig.origin_ns,
    )


def _warmup_note(rank: int | None, plan: WarmupPlan, options: Options) -> str | None:
    if not plan.provisional:
        return None
    unit = "steps" if options.per == "step" else "runs"
    reduced = f" (reduced from {options.warmup})" if plan.warmup < options.warmup else ""
    return (
        f"rank {rank_text(rank)}: provisional: {plan.samples} {unit} (the method asks for at least "
        f"{options.min_runs}); {plan.warmup} discarded as warm-up{reduced}, "
        f"{plan.samples - plan.warmup} judged"
    )


def _plan_result(
    plan: Plan,
    p: int,
    r: _Rank,
    figures: Sequence[CaptureFigures],
    main: int | None,
    thresholds: Thresholds,
    contention_ns: int,
) -> PlanResult:
    """plans.plan_result on the figures of plan ``p`` for the plan's main stream."""
    pieces = [figures[i].plans[p] for i in r.members]
    side = plan.side_stream
    if side is None:
        side = most_time([x.side_ns for x in pieces], exclude=main)
    samples = []
    for sample, i, k in r.samples:
        figure = _sample(figures, i, k).plan(p, main)
        run = replace(figure.run, run=sample.run, warm=sample.warm, sample=sample.label)
        samples.append((run, figure.barriers))
    return plan_result(
        plan,
        r.rank,
        PlanStreams(main=main, side=side),
        [x.side_ops for x in pieces],
        samples,
        thresholds,
        provisional=r.warmup.provisional,
        contention_ns=contention_ns,
    )


def _with_baseline(report: Report, options: Options) -> Report:
    """Compare with ``options.baseline`` (a previous JSON report) when one is given."""
    if options.baseline is None:
        return report
    try:
        from overlap_check.baseline import apply_baseline, load_baseline
    except ModuleNotFoundError as err:
        if err.name != "overlap_check.baseline":
            raise
        raise UsageError("--baseline is not available yet in this build") from None
    return apply_baseline(report, load_baseline(options.baseline), options.tolerance)


def _worst_rank(
    failing: int | None, plans: Sequence[PlanResult], pairs: Sequence[StreamPair], n_ranks: int
) -> int | None:
    """The rank to name: the worst failing one, else the lowest figure; None with one rank."""
    if n_ranks < 2:
        return None
    return failing if failing is not None else worst_rank(plans, pairs)


def _contention_ns(cores: CoresResult | None, rank: int | None) -> int:
    if cores is None:
        return 0
    # the per-rank total, not the listed (capped, per-kind) intervals, which would
    # double-count time where both core kinds are over and miss unlisted intervals
    return dict(cores.over_limit_by_rank).get(rank, 0)
