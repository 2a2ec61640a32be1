"""Every choice that needs all runs of a rank, taken once: :func:`decide` -> :class:`Decisions`.

A capture's evidence holds its figures for every stream; which count is decided here over
all runs: each rank's runs and warm flags, its main stream (most busy time), each plan's
main and side stream (configured, else most dominator / side-op time), the device cores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from overlap_check.measure.cores import resolve_device
from overlap_check.measure.figures import (
    CaptureFigures,
    Mains,
    figures_key,
    plan_main,
    ranked_streams,
    time_per_stream,
)
from overlap_check.measure.occurrences import PlanStreams
from overlap_check.measure.runs import Sample, WarmupPlan, group_by_rank, number_samples
from overlap_check.measure.streams import choose_main_stream
from overlap_check.model import DeviceCores, Options, Plan
from overlap_check.model.errors import OverlapCheckError
from overlap_check.model.table import empty_kernel_table


@dataclass(frozen=True)
class RankDecisions:
    rank: int | None
    members: tuple[int, ...]  # positions of its runs in the evidence list, in run order
    samples: tuple[tuple[Sample, int, int], ...]  # sample, member position, its index there
    warmup: WarmupPlan
    main: int | None  # the rank's main stream (None: no compute kernel)
    plans: tuple[PlanStreams, ...]  # per plan of Options.plans: its main and side stream

    def warm(self, member: int) -> bool:
        """Whether any sample of this run is warm."""
        return any(s.warm for s, i, _ in self.samples if i == member)


@dataclass(frozen=True)
class Decisions:
    ranks: tuple[RankDecisions, ...]  # ascending rank, an unknown rank last
    device: DeviceCores

    @property
    def order(self) -> list[int]:
        """Evidence positions in report order (rank by rank, runs in order)."""
        return [i for r in self.ranks for i in r.members]


def plan_streams(
    plan: Plan, p: int, evidence: Sequence[CaptureFigures], rank_main: int | None
) -> PlanStreams:
    """Plan ``p``'s main stream (measure.figures.plan_main) and side stream: the configured
    one, else the one with the most side-op time other than the main stream."""
    pieces = [e.plans[p] for e in evidence]
    main = plan_main(plan, [x.dominator_ns for x in pieces], rank_main)
    if plan.side_stream is not None:
        return PlanStreams(main=main, side=plan.side_stream)
    ranked = ranked_streams(time_per_stream([x.side_ns for x in pieces]), main)  # ties: lowest
    return PlanStreams(main=main, side=ranked[0] if ranked else None)


def decide(evidence: Sequence[CaptureFigures], options: Options) -> Decisions:
    """The decisions over all runs (raises a run's --per step error, or the device cores')."""
    empty = empty_kernel_table()
    ranks = []
    groups = group_by_rank(range(len(evidence)), lambda i: evidence[i].capture.rank)
    for rank, members in groups.items():
        errors = [evidence[i].step_error for i in members]
        for error in filter(None, errors):  # as make_samples raises for the first run
            raise error
        raw = [
            (run, i, k, s)
            for run, i in enumerate(members, start=1)
            for k, s in enumerate(evidence[i].samples)
        ]
        numbered, warmup = number_samples(
            [(run, s.step, empty) for run, _, _, s in raw], options.warmup, options.min_runs
        )
        main = choose_main_stream([s.sets for *_, s in raw], options.main_stream)
        runs = [evidence[i] for i in members]
        samples = tuple((sample, i, k) for sample, (_, i, k, _) in zip(numbered, raw, strict=True))
        streams = tuple(plan_streams(plan, p, runs, main) for p, plan in enumerate(options.plans))
        ranks.append(RankDecisions(rank, tuple(members), samples, warmup, main, streams))
    order = [i for r in ranks for i in r.members]
    device = resolve_device(
        [evidence[i].capture.device_cores for i in order],
        lambda: [m for i in order if (m := evidence[i].observed) is not None],
        options,
    )
    return Decisions(ranks=tuple(ranks), device=device)


def undecided(evidence: Sequence[CaptureFigures], options: Options) -> dict[int, Mains]:
    """The captures whose plan figures miss a main stream decided over their rank's runs (a
    capture builds them for the stream it chooses alone: measure.figures.Mains), each with
    the figures key of every plan to build again; none when a decision fails (judge raises)."""
    try:
        decisions = decide(evidence, options)
    except OverlapCheckError:
        return {}
    again: dict[int, Mains] = {}
    for rank, i in ((r, i) for r in decisions.ranks for i in r.members):
        plans = evidence[i].plans
        keys = tuple(figures_key(s.main, plans[p].matters) for p, s in enumerate(rank.plans))
        if any(k not in s.plans[p] for s in evidence[i].samples for p, k in enumerate(keys)):
            again[i] = keys
    return again
