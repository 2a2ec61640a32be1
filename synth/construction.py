"""Building runs from layers, and their expected figures from the construction.

A run is a few MoE layers (:mod:`layers`) one after another, with the profiler's
PROFILING_ENABLE/DISABLE markers on stream 0 and optionally an allreduce whose
notify/SDMA tasks sit on stream 4. Expected figures are sums and ratios of the
lengths the layers were built with.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from synth.expected import (
    MIN_RUNS,
    WARMUP,
    Built,
    Expected,
    ExpectedPlan,
    ExpectedStream,
    ExpectedStreamPair,
    verdict_of,
    warm_median,
)
from synth.layers import (
    CAST,
    COMM_STREAM,
    DOMINATOR,
    MAIN,
    SIDE,
    SIDE_OPS,
    Layer,
    Op,
    build_layer,
)
from synth.model import CommOp, Scenario, Task, Variant

PLAN = "moe-shared-expert"
SIDE_REGEX = "SharedExpert"
DOMINATOR_REGEX = "GroupedMatmul"
BASE_NS = 1_736_408_883_704_643_212  # a real capture's first kernel start
RUN_SPACING_NS = 7_300_123_457  # each run is a new capture, seconds later
RANK_OFFSET_NS = 1_234_567
LAYER_GAP_NS = 5_070


@dataclass(frozen=True)
class LayerSpec:
    mode: str  # real | fake | overlap | touch | serial
    overlap_ns: int = 0


@dataclass
class Run:
    scenario: Scenario
    layers: list[Layer]


def comm_op(t: int, index: int, step: int) -> tuple[CommOp, list[Task]]:
    """An allreduce and the tasks it puts on the communication stream."""
    duration = 2_193_583
    op = CommOp(f"hcom_allReduce__868_{index}_1", t, duration, step=step)
    tasks = [
        Task("EVENT_WAIT_SQE", COMM_STREAM, t - 148_502, 148_502),
        Task("SDMA", COMM_STREAM, t, 600),
        Task("Write Value", COMM_STREAM, t + 4_380, 700),
        Task("Notify Wait", COMM_STREAM, t + 7_580, duration - 27_580),
        Task("EVENT_RECORD_SQE", COMM_STREAM, t + duration + 120, 20),
    ]
    return op, tasks


def build_run(
    name: str,
    specs: Sequence[LayerSpec],
    *,
    run: int,
    rank: int = 0,
    seed: int = 0,
    comm: bool = False,
    side_ops: tuple[Op, ...] = SIDE_OPS,
    side_wait: bool = False,
    step: int = 50,
    aicore: int = 24,
    vectorcore: int = 48,
    t0: int | None = None,
    dominator: Op = DOMINATOR,
    tail_ops: tuple[Op, ...] = (),
) -> Run:
    rng = random.Random(seed * 1_000_003 + run * 101 + rank)
    t = BASE_NS + run * RUN_SPACING_NS + rank * RANK_OFFSET_NS if t0 is None else t0
    first = t
    layers: list[Layer] = []
    for spec in specs:
        layer = build_layer(
            t,
            spec.mode,
            overlap_ns=spec.overlap_ns,
            step=step,
            rng=rng,
            side_ops=side_ops,
            side_wait_over_dominator=side_wait,
            dominator=dominator,
            tail_ops=tail_ops,
        )
        layers.append(layer)
        t = layer.end_ns + LAYER_GAP_NS
    kernels = [k for layer in layers for k in layer.kernels]
    tasks = [task for layer in layers for task in layer.tasks]
    communication: list[CommOp] = []
    if comm:
        op, comm_tasks = comm_op(t + 3_000, run, step)
        communication.append(op)
        tasks += comm_tasks
        tasks.append(Task("EVENT_RECORD_SQE", MAIN, t + 3_000 - 232_000, 20))
        t = op.end_ns + 10_000
    # the profiler's own markers on stream 0: a stream with tasks and no kernels
    tasks = [
        Task("PROFILING_ENABLE", 0, first - 30_148_520, 20),
        *tasks,
        Task("PROFILING_DISABLE", 0, t + 512_169, 20),
    ]
    scenario = Scenario(
        name=name,
        kernels=tuple(kernels),
        communication=tuple(communication),
        tasks=tuple(tasks),
        rank=rank,
        device=rank,
        aicore=aicore,
        vectorcore=vectorcore,
    )
    return Run(scenario, layers)


def check_serial(kernels: Sequence[tuple[int, int]]) -> None:
    spans = sorted(kernels)
    for (_, end), (start, _) in pairwise(spans):
        if start < end:
            raise AssertionError("kernels of one stream overlap: the construction is wrong")


def expected_streams(
    runs: Sequence[Run], rank: int
) -> tuple[list[ExpectedStream], list[ExpectedStreamPair]]:
    streams, pairs = [], []
    for index, run in enumerate(runs, start=1):
        busy: dict[int, int] = {}
        for sid in sorted({k.stream_id for k in run.scenario.kernels}):
            mine = [k for k in run.scenario.kernels if k.stream_id == sid]
            check_serial([(k.start_ns, k.end_ns) for k in mine])
            busy[sid] = sum(k.duration_ns for k in mine)  # serial kernels: busy = sum
            streams.append(ExpectedStream(rank, index, sid, len(mine), busy[sid]))
        if SIDE in busy:
            overlap = sum(layer.busy_overlap_ns for layer in run.layers)
            pct = overlap / min(busy[MAIN], busy[SIDE])
            pairs.append(ExpectedStreamPair(rank, index, MAIN, SIDE, overlap, pct, verdict_of(pct)))
    return streams, pairs


def layer_pct(layer: Layer) -> float:
    side_len = layer.side_window[1] - layer.side_window[0]
    dom_len = layer.dom_window[1] - layer.dom_window[0]
    return layer.window_overlap_ns / min(side_len, dom_len)


def expected_plan(
    runs: Sequence[Run], rank: int, *, barrier: bool, warmup: int = WARMUP, not_split: bool = False
) -> ExpectedPlan:
    per_run = [float(statistics.median(layer_pct(layer) for layer in run.layers)) for run in runs]
    plan = ExpectedPlan(
        name=PLAN,
        side=SIDE_REGEX,
        dominator=DOMINATOR_REGEX,
        side_stream=SIDE,
        main_stream=MAIN,
        overlap_pct=None,
        verdict="not-split",
        rank=rank,
        occurrences=len(runs[0].layers),
        provisional=len(runs) < MIN_RUNS,
        per_run=tuple(None for _ in runs),
    )
    if not_split:
        return replace(plan, side_stream=MAIN)
    pct = warm_median(per_run, warmup)
    return replace(
        plan,
        overlap_pct=pct,
        verdict=verdict_of(pct),
        barrier="Cast" if barrier else None,
        barrier_name=CAST.name if barrier else None,
        per_run=tuple(per_run),
        all_runs_overlap_pct=float(statistics.median(per_run)),
    )


def assemble(
    runs_by_rank: dict[int, list[Run]],
    *,
    barrier: dict[int, bool] | None = None,
    variant: Variant | None = None,
    warmup: int = WARMUP,
    notes: str = "",
    not_split: bool = False,
) -> Built:
    plans, streams, pairs = [], [], []
    for rank, runs in sorted(runs_by_rank.items()):
        wants_barrier = (barrier or {}).get(rank, False)
        plans.append(
            expected_plan(runs, rank, barrier=wants_barrier, warmup=warmup, not_split=not_split)
        )
        s, p = expected_streams(runs, rank)
        streams += s
        pairs += p
    scenarios = tuple(run.scenario for _, runs in sorted(runs_by_rank.items()) for run in runs)
    expected = Expected(
        plans=tuple(plans), streams=tuple(streams), stream_pairs=tuple(pairs), notes=notes
    )
    return Built(scenarios, expected, variant or Variant())


def same(mode: str, layers: int, overlap_ns: int = 0) -> list[LayerSpec]:
    return [LayerSpec(mode, overlap_ns)] * layers
