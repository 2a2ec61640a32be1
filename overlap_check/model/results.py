"""What one plan or stream pair was found to do: runs, occurrences, barriers, diagnosis.

Each field is a report key: docs/report.schema.json describes them, docs/contract.md lists
them; the comments here add only what those do not say. Times are integer ns here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from overlap_check.model.vocabulary import (
    Cause,
    DecidedBy,
    EvidenceKind,
    ExecutionPath,
    SideKind,
    Stage,
    Verdict,
)


@dataclass(frozen=True)
class StreamStat:
    stream_id: int
    kernels: int
    busy_ns: int  # length of the union of this stream's kernel intervals


@dataclass(frozen=True)
class RunInfo:
    """One capture as the report lists it (a run of one rank)."""

    index: int  # 1-based position among the runs of its rank, in run order
    path: str
    rank: int | None
    warm: bool
    source: str
    streams: tuple[StreamStat, ...]
    skipped_rows: int = 0
    skipped_lines: tuple[int, ...] = ()
    capture_time_ns: int | None = None
    device: int | None = None
    level: str | None = None
    communication: int = 0  # communication rows (kept apart from streams)
    stream_source: str | None = None
    unplaced_rows: int = 0  # Capture.unplaced_rows
    notes: tuple[str, ...] = ()
    origin_ns: int | None = None  # first compute kernel start: reports give times relative to it


@dataclass(frozen=True)
class StreamPairRun:
    run: int
    warm: bool
    overlap_ns: int
    overlap_pct: float
    main_busy_ns: int
    side_busy_ns: int
    sample: str | None = None  # with --per step: the step this sample is


@dataclass(frozen=True)
class StreamPair:
    """Interval-set overlap of one stream with the main stream (warm-run median)."""

    rank: int | None
    main: int
    side: int
    overlap_ns: float
    overlap_pct: float
    verdict: Verdict
    provisional: bool
    per_run: tuple[StreamPairRun, ...] = ()
    gate_failures: tuple[str, ...] = ()  # why the gate fails it (verdict.mark_gate); () passes
    method: str = "busy"  # the figure: interval-set overlap of busy time


@dataclass(frozen=True)
class RankStreamSummary:
    """Whole-timeline figures per rank (warm-run medians)."""

    rank: int | None
    main_stream: int | None
    parallelism: float  # sum of kernel time / wall span
    concurrent_ns: float  # time with >= 2 compute streams busy
    wall_ns: float
    helper_streams: tuple[int, ...] = ()  # hiding.helper_streams_of


@dataclass(frozen=True)
class Occurrence:
    """One side window paired with its own dominator instance."""

    index: int  # 1-based within the run
    side_ops: int
    side_start_ns: int | None
    side_end_ns: int | None
    dominator: str | None
    dom_start_ns: int | None
    dom_end_ns: int | None
    overlap_ns: int
    overlap_pct: float | None  # None: not judged (no side ops or no dominator)
    busy_overlap_pct: float | None
    status: Literal["ok", "no-side", "no-dominator", "zero-length"] = "ok"  # as PlanRun counts
    layer: int | None = None  # the layer (dominator instance) it belongs to, 1-based
    hidden_pct: float | None = None  # docs/hidden-fraction.md; None: no side busy time
    dominator_pct: float | None = None  # the share under its own dominator
    side_busy_ns: int | None = None
    hidden_ns: int | None = None
    verdict: Verdict | None = None  # the band of hidden_pct (no-evidence: not judged)
    join_not_waited: bool = False


@dataclass(frozen=True)
class BarrierCandidate:
    name: str
    stream_id: int
    start_ns: int
    gap_ns: int  # idle time on the main stream just before it
    run: int
    occurrence: int
    after_side_end_ns: int  # how long after the side work that ended by the dominator's start
    occurrences: int = 1  # fake occurrences in which it is the first candidate
    covers_side_window: bool = False  # the idle gap before it began before the side window
    waited: Literal["main", "side"] = "main"  # docs/hidden-fraction.md, barriers both ways
    chain: str = ""
    lag_ns: int = 0  # "side" only (its gap_ns and after_side_end_ns are 0)


@dataclass(frozen=True)
class PlanRun:
    run: int  # the capture it comes from (1-based within the rank), with --per step too
    warm: bool
    overlap_pct: float | None  # median over this run's judged occurrences
    occurrences: int
    busy_overlap_pct: float | None
    judged: int = 0  # occurrences with side ops and a dominator
    worst: tuple[Occurrence, ...] = ()
    sample: str | None = None  # with --per step: the step this sample is
    step: int | None = None  # with --per step: its Step Id (the label's figure, as a field)
    side_ops: int = 0
    no_side: int = 0  # dominator instances with no side op (reported, not judged)
    no_dominator: int = 0  # occurrences of side ops after the last dominator (not judged)
    zero_length: int = 0  # occurrences with a zero-length window (not judged)
    fake: int = 0  # judged occurrences whose hidden_pct is at or below the fake threshold
    unpaired: tuple[Occurrence, ...] = ()  # the first few unjudged occurrences
    hidden_pct: float | None = None  # median hidden_pct over the judged occurrences
    hidden_counts: tuple[int, int, int] = (0, 0, 0)  # judged occurrences: real, partial, fake
    layers: tuple[Occurrence, ...] = ()
    join_not_waited: int = 0  # layers whose side work ended after their join started
    lag: bool = False  # first dominator without side work, side work after the last one
    walls: LayerFigures | None = None  # joins.layer_figures of this sample


@dataclass(frozen=True)
class Evidence:
    """One measured figure behind a diagnosis, in words, with the time it accounts for."""

    kind: EvidenceKind
    text: str
    size_ns: int | None = None  # the time it stands for: causes are listed largest first


@dataclass(frozen=True)
class Diagnosis:
    """A plan's diagnosis as data (docs/advice.md)."""

    stage: Stage | None  # None: no evidence to place it
    cause: Cause
    path: ExecutionPath | None  # the path the fix steps are written for; None: unknown
    evidence: tuple[Evidence, ...] = ()
    fix: tuple[str, ...] = ()
    decided_by: DecidedBy = "band"  # what decided the verdict
    band: Verdict | None = None  # the band of the deciding figure (hidden_pct), before a cap
    fake_runs: tuple[str, ...] = ()  # decided_by fake-run: the warm samples fake in every layer

    @property
    def capped(self) -> bool:
        """The fake-share cap decided the verdict, not the band of its figure."""
        return self.decided_by in ("fake-share", "fake-run")


@dataclass(frozen=True)
class TailOp:
    name: str  # the TAIL_OPERATORS entry it matched
    count: float
    ns: float


@dataclass(frozen=True)
class ShapeCount:
    role: Literal["dominator", "side"]
    label: str  # the operator type (the kernel name when the table has none)
    shapes: str  # the Input Shapes text as the profiler wrote it
    count: int


@dataclass(frozen=True)
class LayerFigures:
    """One sample's layer figures (docs/gain.md); ns as floats (a median of two is a half)."""

    layers: int  # occurrences with a dominator
    steps: int  # profiler steps in the sample (1 without a step column)
    layer_wall_ns: float | None  # span of side window and dominator
    dominator_ns: float | None
    side_total_ns: float | None  # sum of the side ops' durations in the layer
    join_wait_ns: float | None  # main-stream idle after the dominator, waiting for the side tail
    side_tail_ns: float | None  # side busy time after the dominator that no main work covered
    join_wait_max_ns: int | None  # the sample's worst layer
    join_wait_layer: int | None  # and which layer it is (1-based)
    step_wall_ns: float | None  # median over the sample's steps of first start to last end
    step_walls: tuple[tuple[int | None, int], ...] = ()  # (Step Id, wall ns)
    tail_ops: tuple[TailOp, ...] = ()  # tail operators after the join, per layer


@dataclass(frozen=True)
class PlanResult:
    name: str
    rank: int | None
    verdict: Verdict
    overlap_pct: float | None  # median over warm samples of the per-sample figure
    provisional: bool
    side_stream: int | None
    main_stream: int | None
    method: str = "window"
    busy_overlap_pct: float | None = None  # interval-set figure, labelled as such
    per_run: tuple[PlanRun, ...] = ()
    runs_used: int = 0
    overlap_min: float | None = None
    overlap_max: float | None = None
    barrier_candidates: tuple[BarrierCandidate, ...] = ()
    placement: tuple[str, ...] = ()  # evidence for not-split
    diagnosis: str = ""  # the one-line form (verdict.diagnosis); the parts are in `diagnosed`
    fake_occurrences: int = 0  # fake occurrences in the warm samples (barrier search input)
    dominator: str | None = None  # the plan's dominator regex (None: longest main-stream kernel)
    side: str | None = None  # the plan's side regex
    config_file: str | None = None  # Plan.config_file: the config that defined the plan
    config_line: int | None = None  # and the line of its [[plan]] header
    gate_failures: tuple[str, ...] = ()  # why the gate fails it (verdict.mark_gate); () passes
    hidden_pct: float | None = None  # median over warm samples: what the verdict follows
    decided_by: str = "hidden_pct"  # the figure the verdict bands were applied to
    verdict_counts: tuple[int, int, int] = (0, 0, 0)  # real, partial, fake
    diagnosed: Diagnosis | None = None  # the diagnosis as data: cause, evidence, fix steps
    findings: tuple[str, ...] = ()
    walls: PlanWalls | None = None  # joins.plan_walls: warm medians of the layer figures
    side_kind: SideKind = "compute"  # Plan.side_kind: what the side ops were
    stayed: tuple[str, ...] = ()
    op_type: str | None = None  # the plan's op_type regex
    shapes: tuple[ShapeCount, ...] | None = None  # JSON input_shapes; None: not read

    def deciding_occurrence(self) -> tuple[PlanRun, Occurrence] | None:
        """The occurrence the verdict names (:func:`deciding_occurrence`)."""
        return deciding_occurrence(self.per_run)


@dataclass(frozen=True)
class PlanWalls:
    """Warm medians of the samples' LayerFigures (docs/gain.md); ns as floats."""

    layers: int  # layers per sample (median, rounded down)
    steps: int
    layer_wall_ns: float | None
    dominator_ns: float | None
    side_total_ns: float | None
    join_wait_ns: float | None
    side_tail_ns: float | None
    step_wall_ns: float | None
    join_wait_worst_ns: int | None  # the worst layer of the warm samples
    join_wait_worst_layer: int | None
    join_wait_worst_run: int | None
    tail_ops: tuple[TailOp, ...] = ()  # warm medians per layer, most time first


@dataclass(frozen=True)
class StepWall:
    run: int  # the sample's run (1-based within the rank)
    step: int | None  # its Step Id (None: no step column, the run is one step)
    wall_ns: int


def deciding_occurrence(runs: Sequence[PlanRun]) -> tuple[PlanRun, Occurrence] | None:
    """The deciding (and worst) occurrence every renderer names: the lowest judged hidden_pct
    among the warm runs' worst ones (the cold runs' when no warm run has any; ties: the first
    in run order). None: none was judged."""
    pool = [r for r in runs if r.warm and r.worst] or [r for r in runs if r.worst]
    judged = [(r, o) for r in pool for o in r.worst if o.hidden_pct is not None]
    if not judged:
        return None
    return min(judged, key=lambda item: item[1].hidden_pct or 0.0)
