"""The library entry point: captures in, one Report out.

``check(paths_or_captures, options)`` reads paths with the readers (runs in
the order given, or by capture time with ``order="time"``) and hands the
captures to ``analyze_captures``, which composes the stages:

samples (runs or steps, warm flags) → stream level (busy sets, main stream,
pairs, parallelism) → core limits (when ``overlap_check.cores`` exists) →
plans (occurrences, placement, barriers) → gate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from overlap_check import __version__
from overlap_check.errors import InputError, UsageError
from overlap_check.model import (
    Capture,
    CoresResult,
    Options,
    PlanResult,
    RankStreamSummary,
    Report,
    RunInfo,
    StreamPair,
)
from overlap_check.plans import evaluate_plan
from overlap_check.runs import Sample, WarmupPlan, group_by_rank, make_samples
from overlap_check.streams import (
    StreamSets,
    choose_main_stream,
    rank_summary,
    stream_pairs,
    stream_sets,
    stream_stats,
)
from overlap_check.table import compute_kernels
from overlap_check.verdict import gate, worst_rank

if TYPE_CHECKING:
    from os import PathLike


def check(
    paths_or_captures: Iterable[str | PathLike[str] | Capture], options: Options | None = None
) -> Report:
    """Analyse profiler output (paths) or already-read captures into a Report."""
    options = options or Options()
    items = list(paths_or_captures)
    captures = [i for i in items if isinstance(i, Capture)]
    paths = [str(i) for i in items if not isinstance(i, Capture)]
    if paths:
        from overlap_check.readers import load_paths

        captures += load_paths([Path(p) for p in paths], options.order)
    return analyze_captures(captures, options)


def _run_info(capture: Capture, index: int, warm: bool, sets: StreamSets) -> RunInfo:
    kernels = capture.kernels
    return RunInfo(
        index=index,
        path=capture.path,
        rank=capture.rank,
        warm=warm,
        source=capture.source,
        streams=stream_stats(sets),
        skipped_rows=capture.skipped_rows,
        skipped_lines=capture.skipped_lines,
        capture_time_ns=capture.capture_time_ns,
        device=capture.device,
        level=capture.level,
        communication=int(kernels.get_column("is_communication").sum() or 0),
        stream_source=capture.stream_source,
        notes=capture.notes,
        origin_ns=sets.origin_ns,
    )


def _cores(
    captures: Sequence[Capture], runs: Sequence[RunInfo], options: Options
) -> CoresResult | None:
    try:
        from overlap_check.cores import check_cores
    except ModuleNotFoundError as err:
        if err.name != "overlap_check.cores":
            raise
        return None
    return check_cores(captures, runs, options)


def _warmup_note(rank: int | None, plan: WarmupPlan, options: Options) -> str | None:
    if not plan.provisional:
        return None
    unit = "steps" if options.per == "step" else "runs"
    reduced = f" (reduced from {options.warmup})" if plan.warmup < options.warmup else ""
    return (
        f"rank {rank}: provisional: {plan.samples} {unit} (the method asks for at least "
        f"{options.min_runs}); {plan.warmup} discarded as warm-up{reduced}, "
        f"{plan.samples - plan.warmup} judged"
    )


def analyze_captures(captures: Sequence[Capture], options: Options | None = None) -> Report:
    """Judge captures (runs of one workload, possibly several ranks) into a Report."""
    options = options or Options()
    if not captures:
        raise InputError("no profiler capture to analyse")
    runs: list[RunInfo] = []
    ordered: list[Capture] = []
    notes: list[str] = []
    ranks: list[RankStreamSummary] = []
    pairs: list[StreamPair] = []
    provisional_ranks: list[int | None] = []
    per_rank: list[tuple[int | None, list[Sample], int | None, bool]] = []
    for rank, rank_runs in group_by_rank(captures).items():
        samples, warmup = make_samples(rank_runs, options.per, options.warmup, options.min_runs)
        sets = [stream_sets(s.kernels) for s in samples]
        main = choose_main_stream(sets, options.main_stream)
        for index, capture in enumerate(rank_runs, start=1):
            mine = [i for i, s in enumerate(samples) if s.run == index]
            warm = any(samples[i].warm for i in mine)
            capture_sets = (
                sets[mine[0]]
                if options.per == "run"
                else stream_sets(compute_kernels(capture.kernels))
            )
            runs.append(_run_info(capture, index, warm, capture_sets))
            ordered.append(capture)
            if capture.skipped_rows:
                notes.append(
                    f"rank {rank} run {index}: {capture.skipped_rows} malformed row(s) skipped in "
                    f"{capture.skipped_file or capture.path}"
                )
        note = _warmup_note(rank, warmup, options)
        if note:
            notes.append(note)
            provisional_ranks.append(rank)
        if main is not None and all(main not in s.busy for s in sets):
            notes.append(f"rank {rank}: main stream {main} has no compute kernel")
        pairs.extend(
            stream_pairs(rank, samples, sets, main, options.thresholds, warmup.provisional)
        )
        ranks.append(rank_summary(rank, samples, sets, main))
        per_rank.append((rank, samples, main, warmup.provisional))
    cores = _cores(ordered, runs, options)
    plans: list[PlanResult] = []
    for plan in options.plans:
        for rank, samples, main, provisional in per_rank:
            plans.append(
                evaluate_plan(
                    plan,
                    rank,
                    samples,
                    main,
                    options.thresholds,
                    provisional,
                    _contention_ns(cores, rank),
                )
            )
    decision = gate(
        plans,
        pairs,
        ranks,
        cores,
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
        ranks=tuple(ranks),
        plans=tuple(plans),
        cores=cores,
        gate_reasons=decision.reasons,
        notes=tuple(notes),
        warmup=options.warmup,
        min_runs=options.min_runs,
        per=options.per,
        worst_rank=_worst_rank(decision.worst_rank, plans, pairs, len(per_rank)),
        fail_on=options.fail_on,
        strict=options.strict,
    )
    return _with_baseline(report, options)


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
