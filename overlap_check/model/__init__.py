"""Plain, frozen data objects shared by every stage.

Inputs (Capture, Options, Plan ...) and the one portable result object
(Report) that every renderer consumes. Internally times are integer
nanoseconds (``*_ns``); renderers turn them into microseconds. Nothing here
imports polars at run time, so the CLI can import this module cheaply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

SCHEMA_VERSION = 1

Verdict = Literal["real", "partial", "fake", "not-split", "no-evidence"]
PlanMode = Literal["ge", "npugraph_ex"]
# Option vocabularies: the click choices, the config checks and the gate's table derive
# from these (choices_of), so each is spelled once.
FailOn = Literal["fake", "partial", "never"]
# The execution path a plan's model runs under: the fix advice names that path's APIs
# (docs/advice.md). None where a plan gives none: the advice is generic and says so.
ExecutionPath = Literal["ge", "npugraph_ex", "eager"]
Per = Literal["run", "step"]
Order = Literal["given", "time"]
BaselineFigure = Literal["hidden_pct", "overlap_pct"]
# The recipes establish a plan only at >= the real threshold, so partial fails by default.
DEFAULT_FAIL_ON: FailOn = "partial"
# What a plan's side ops are: compute kernels, communication tasks or memory copies.
SideKind = Literal["compute", "communication", "copy"]


def choices_of(kind: object) -> tuple[str, ...]:
    """The values of one of the Literal vocabularies above, in their order."""
    return tuple(str(value) for value in get_args(kind))


CoresSource = Literal["info.json", "config", "soc", "soc-ini", "observed"]


# --------------------------------------------------------------------------- inputs


def rank_text(rank: int | None) -> str:
    """A rank as reports print it: ``-`` when unknown (a bare file without profiler_info)."""
    return "-" if rank is None else str(rank)


@dataclass(frozen=True)
class DeviceCores:
    """Physical cores of the device: AI Core (cube, "aic") and AI Vector ("aiv")."""

    aicore: int
    vectorcore: int
    source: CoresSource
    detail: str | None = None  # the file, SoC name or note the figure came from


@dataclass(frozen=True)
class ProfilerStepTime:
    """One row of the profiler's own step_trace_time.csv (or analysis.db StepTraceTime):
    its compute-vs-communication figures for the whole device in one step (None: N/A)."""

    step: int | None  # None: the file's blank Step (no schedule)
    device: int | None
    computing_ns: int | None
    not_overlapped_ns: int | None  # Communication(Not Overlapped)
    overlapped_ns: int | None
    communication_ns: int | None
    free_ns: int | None


@dataclass(frozen=True)
class Capture:
    """One profiler capture of one rank (one run), read into the kernel table.

    ``kernels`` has the schema of :data:`overlap_check.model.table.KERNEL_SCHEMA`.
    """

    path: str  # the result directory (or bare file) it was read from
    source: str  # "kernel_details.csv" | "trace_view.json" | "db" | "op_summary" | "task_time"
    rank: int | None
    device: int | None
    level: str | None  # "Level0" | "Level1" | "Level2" | None when unknown
    capture_time_ns: int | None  # end of collection, wall clock ns; orders runs
    kernels: pl.DataFrame
    skipped_rows: int = 0
    skipped_lines: tuple[int, ...] = ()  # 1-based line numbers of skipped rows
    skipped_file: str | None = None  # the file the skipped lines belong to
    device_cores: DeviceCores | None = None  # from PROF_*/device_N/info.json.N
    stream_source: str | None = None  # where Stream IDs came from when not the kernel file
    # compute rows left without a stream (a Level0 row no task matched, a Stream ID N/A):
    # in no stream's figures; a plan they may belong to is provisional
    unplaced_rows: int = 0
    # where a copy / communication plan's task rows came from when the kernel file lists
    # none (Level1 kernel_details.csv has no copy task): the .db, task_time or trace
    task_source: str | None = None
    notes: tuple[str, ...] = ()
    profiler_steps: tuple[ProfilerStepTime, ...] = ()  # step_trace_time.csv / analysis.db
    profiler_steps_file: str | None = None  # the file they were read from
    # why the kernel file looks cut short against the profiler's own files (None: it does not)
    incomplete: str | None = None

    def to_pandas(self) -> pd.DataFrame:
        """The kernel table as a pandas DataFrame (needs the `pandas` extra)."""
        from overlap_check.model.extras import require

        for module in ("pandas", "pyarrow"):
            require(module, "pandas", "Capture.to_pandas()")
        return self.kernels.to_pandas()


@dataclass(frozen=True)
class Thresholds:
    real: float = 0.5
    fake: float = 0.05


# Layers a sample's table lists (PlanRun.layers, the JSON per_run[].layers); the count of
# all of them is PlanRun.occurrences. A bound on the report: a layout that pairs tens of
# thousands of occurrences in one capture would otherwise write an entry for each.
MAX_LISTED_LAYERS = 1_000
FAKE_SHARE = 0.25  # the default of Options.fake_share (and of Report.fake_share)
MAX_INPUT_SIZE = 16 * 2**30  # the default of Options.max_input_size (a 1M-kernel CSV: 0.3 GiB)

MODULE_SCOPE = "module:"  # side = "module:Name": the kernels launched inside nn.Module Name


@dataclass(frozen=True)
class CoreLimit:
    """`limit_core_num` applied to a plan's side operators."""

    aicore: int | None = None
    vectorcore: int | None = None
    mode: PlanMode = "ge"


@dataclass(frozen=True)
class Plan:
    """A multi-stream plan: which operators were moved aside, and what should hide them.

    ``side`` and ``dominator`` are regular expressions searched in the kernel name
    (``side = "module:Name"``: the kernels launched inside that nn.Module);
    ``op_type`` one searched in the operator type. ``side``, ``side_stream`` and
    ``op_type`` all restrict the side selection (selection.side_expr). ``side`` omitted:
    every kernel (of ``side_kind``) on ``side_stream``. ``dominator`` omitted: the
    longest main-stream kernel of each occurrence.
    """

    name: str
    side: str | None = None
    dominator: str | None = None
    side_stream: int | None = None
    main_stream: int | None = None
    limit_core: CoreLimit | None = None
    # the main path's limit (npugraph_ex: its stream's): the kernels on main_stream, else
    # the dominator kernels; the side ops' limit_core wins where both govern a kernel
    main_limit_core: CoreLimit | None = None
    path: ExecutionPath | None = None  # None: Options.path, else unknown
    # compute: side ops are compute kernels; communication / copy: the capture's
    # communication tasks / memory copies matching ``side`` (and ``side_stream``), hidden
    # under compute (docs/hidden-fraction.md, "Side kinds")
    side_kind: SideKind = "compute"
    op_type: str | None = None
    # Where the plan was written: its [[plan]] header in the config (None for a plan given
    # on the command line). CI annotations point there (report/github.py); not part of
    # the plan's identity, so equal plans from two places compare equal.
    config_file: str | None = field(default=None, compare=False)
    config_line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DeviceConfig:
    soc: str | None = None
    aicore: int | None = None
    vectorcore: int | None = None
    ge_aicore_num: str | None = None  # GE's global "aic|aiv" string


@dataclass(frozen=True)
class Options:
    """Everything that changes an analysis. Every default lives here (config/settings.py, the
    CLI and docs/config.md take theirs from these fields)."""

    plans: tuple[Plan, ...] = ()
    thresholds: Thresholds = field(default_factory=Thresholds)
    warmup: int = 2
    min_runs: int = 5
    strict: bool = False
    per: Per = "run"
    fail_on: FailOn = DEFAULT_FAIL_ON
    fake_share: float = FAKE_SHARE  # a plan is at best partial above this share of fake occurrences
    main_stream: int | None = None  # stream level: force the main stream
    order: Order = "time"  # several PATHs: by capture time, or as given (a note when they differ)
    device: DeviceConfig = field(default_factory=DeviceConfig)
    soc_ini: str | None = None
    graph_dump: str | None = None
    fail_on_contention: bool = False
    baseline: str | None = None
    tolerance: float = 0.1
    config_path: str | None = None  # the config file read; None: none found or given
    path: ExecutionPath | None = None  # --path / --source: plans that give no path of their own
    path_source: str | None = None  # where ``path`` came from (a compile call found by --source)
    # kernel-name regexes of Ascend C operators beyond cores.rules.ASCEND_C_OPERATORS
    ascend_c: tuple[str, ...] = ()
    # docs/gain.md: the same workload captured without the multi-stream change, and the
    # gates on it (None: off)
    reference: str | None = None
    require_gain: float | None = None  # percent the step must be faster than the reference
    max_join_wait_us: float | None = None  # main waits after the dominator (new ones, with one)
    # a --reference capture (docs/gain.md): the plan's matches on the main stream are its
    # side ops too (the side work ran inline), not main work
    inline_side: bool = False
    # a missing wait (a join that did not wait, a side stream a layer behind) is a data
    # race and fails the gate unless accepted knowingly (--allow-missing-wait)
    allow_missing_wait: bool = False
    # the largest kernel file read, in bytes (0: no limit); --max-input-size lifts it
    max_input_size: int = MAX_INPUT_SIZE


# --------------------------------------------------------------------------- results


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
    # streams not judged (hiding.helper_streams): only helper work, or next to no busy time
    helper_streams: tuple[int, ...] = ()


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
    # no-side: a dominator instance with no side op; no-dominator: side ops after the
    # last dominator; zero-length: a window of length 0 (nothing to divide by)
    status: Literal["ok", "no-side", "no-dominator", "zero-length"] = "ok"
    layer: int | None = None  # the layer (dominator instance) it belongs to, 1-based
    # docs/hidden-fraction.md: side busy time, the part under compute on any other stream,
    # and the shares of it (None: no side busy time, or not computed)
    hidden_pct: float | None = None
    dominator_pct: float | None = None  # the share under its own dominator
    side_busy_ns: int | None = None
    hidden_ns: int | None = None
    verdict: Verdict | None = None  # the band of hidden_pct (no-evidence: not judged)
    # the side work ended after the layer's join had started (a join that did not wait)
    join_not_waited: bool = False


@dataclass(frozen=True)
class BarrierCandidate:
    name: str
    stream_id: int
    start_ns: int
    gap_ns: int  # idle time on the main stream just before it
    run: int
    occurrence: int
    after_side_end_ns: int  # how long after the side window's end it started
    occurrences: int = 1  # fake occurrences in which it is the first candidate
    covers_side_window: bool = False  # the idle gap before it began before the side window
    # docs/hidden-fraction.md, barriers both ways. "main": the main stream waited for the
    # side stream (``chain``: the ops from this one up to the dominator, by op type);
    # "side": the side stream waited for this main op (``chain``: its op type), its side
    # window starting ``lag_ns`` after it ended (gap_ns, after_side_end_ns: 0)
    waited: Literal["main", "side"] = "main"
    chain: str = ""
    lag_ns: int = 0


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
    # the layer table: every occurrence of the sample, in order (docs/hidden-fraction.md)
    layers: tuple[Occurrence, ...] = ()
    join_not_waited: int = 0  # layers whose side work ended after their join started
    lag: bool = False  # first dominator without side work, side work after the last one
    walls: LayerFigures | None = None  # joins.layer_figures of this sample


# What a plan's diagnosis found (docs/advice.md). Other stages add causes here; the
# fix advice is keyed by it (overlap_check/advice.py), never parsed from prose.
Cause = Literal["no-evidence", "not-split", "fake", "partial", "real"]
Stage = Literal["3a", "3b", "3c"]  # docs/method.md's failure modes
# What decided a plan's verdict (verdict.decide): the band of its hidden_pct; the
# fake-share cap (more than fake_share of the judged warm layers fake), "fake-run" when a
# warm sample was fake in every layer; placement (not-split); nothing judged.
DecidedBy = Literal["band", "fake-share", "fake-run", "not-split", "no-evidence"]
# The last five are measured after the judgement (the side tail, the join wait and the
# tail operators from the layer figures; against a reference the dominator stretched and
# the shapes changed) and go in through verdict.with_cause, listed by size with the rest.
EvidenceKind = Literal[
    "nothing-judged",
    "placement",
    "barrier",
    "contention",
    "cube-saturated",
    "band-mismatch",
    "side-tail",
    "join-wait",
    "dominator-stretched",
    "shape-change",
    "tail-ops",
]


@dataclass(frozen=True)
class Evidence:
    """One measured figure behind a diagnosis, in words, with the time it accounts for."""

    kind: EvidenceKind
    text: str
    size_ns: int | None = None  # the time it stands for: causes are listed largest first


@dataclass(frozen=True)
class Diagnosis:
    """A plan's diagnosis as data: the method's stage, the cause, the measured evidence
    (largest first) and the fix steps for the plan's execution path."""

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
    """One kind of tail operator after the join (joins.TAIL_OPERATORS), per layer: how many
    ran and their time (a sample's totals over its layers divided by its layers; in
    PlanWalls, the warm median of that)."""

    name: str  # the TAIL_OPERATORS entry it matched
    count: float
    ns: float


@dataclass(frozen=True)
class ShapeCount:
    """How often one operator of a plan ran with one ``Input Shapes`` string in a capture
    (shapes.shape_signature): the small evidence a reference comparison reads."""

    role: Literal["dominator", "side"]
    label: str  # the operator type (the kernel name when the table has none)
    shapes: str  # the Input Shapes text as the profiler wrote it
    count: int


@dataclass(frozen=True)
class LayerFigures:
    """Wall-time figures of one sample's layers (docs/gain.md), medians over its layers
    (occurrences with a dominator); ns as floats (a median of two is a half)."""

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
    # every step of the sample in Step Id order: (Step Id, its wall in ns); the Step Id is
    # None without a step column (the sample is one step)
    step_walls: tuple[tuple[int | None, int], ...] = ()
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
    # judged warm occurrences per hidden_pct band: real, partial, fake
    verdict_counts: tuple[int, int, int] = (0, 0, 0)
    diagnosed: Diagnosis | None = None  # the diagnosis as data: cause, evidence, fix steps
    # signs of a missing wait over the warm samples (a join that did not wait, a side
    # stream a layer behind), one sentence each; () when none
    findings: tuple[str, ...] = ()
    walls: PlanWalls | None = None  # joins.plan_walls: warm medians of the layer figures
    side_kind: SideKind = "compute"  # Plan.side_kind: what the side ops were
    # placement (3a): the named ops that stayed off the side stream, "SwiGlu x20 on stream 2"
    stayed: tuple[str, ...] = ()
    op_type: str | None = None  # the plan's op_type regex
    # Input Shapes of the dominator and side ops over the warm captures (read only with a
    # reference: shapes.py; JSON input_shapes); None: not read or not available
    shapes: tuple[ShapeCount, ...] | None = None

    def deciding_occurrence(self) -> tuple[PlanRun, Occurrence] | None:
        """The occurrence the verdict's figure (hidden_pct) names, which every renderer and
        the plots call the deciding (and worst) one: see deciding_occurrence."""
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
    """One warm profiler step's wall: its first compute start to its last compute end."""

    run: int  # the sample's run (1-based within the rank)
    step: int | None  # its Step Id (None: no step column, the run is one step)
    wall_ns: int


@dataclass(frozen=True)
class StepWallDelta:
    """The n-th warm step of a capture against the n-th warm step of its reference."""

    before: StepWall
    after: StepWall
    delta_pct: float | None  # (after - before) / before x 100: positive = slower


@dataclass(frozen=True)
class ReferenceDelta:
    """One plan of one rank against the reference capture (docs/gain.md). Δ% positive =
    slower than the reference."""

    plan: str
    rank: int | None
    layers: int  # layers matched by order per sample
    before: PlanWalls
    after: PlanWalls
    layer_wall_delta_pct: float | None
    step_wall_delta_pct: float | None
    new_join_wait_ns: float | None  # after - before (a new hole after the join)
    # the warm steps step by step (gain.compare): matched by order, the first
    # min(steps_after, steps_before) of each side
    steps: tuple[StepWallDelta, ...] = ()
    steps_before: int = 0  # warm steps of the reference
    steps_after: int = 0  # warm steps of this capture
    step_delta_median_pct: float | None = None  # median of the matched steps' Δ%
    worst_step: int | None = None  # 1-based position in ``steps`` of the largest Δ%
    # the plan's dominator and side ops ran other Input Shapes than in the reference, one
    # sentence per operator (shapes.shape_changes); () when the same or not available
    shape_changes: tuple[str, ...] = ()
    shapes_available: bool = False  # both captures had Input Shapes to compare


@dataclass(frozen=True)
class ReferenceResult:
    path: str
    matched: str  # what was matched, in words
    plans: tuple[ReferenceDelta, ...] = ()


@dataclass(frozen=True)
class CoreViolation:
    run: int
    rank: int | None
    stream_id: int | None
    name: str
    accelerator_core: str | None
    block_num: int | None
    mix_block_num: int | None
    limit: int
    kind: Literal["aicore", "vectorcore"]
    start_ns: int
    plan: str | None = None
    message: str = ""
    limit_source: str | None = None  # "plan:<name>" | "graph-dump" | "ge-global"
    blocks_field: Literal["block_num", "mix_block_num"] = "block_num"  # the count compared


@dataclass(frozen=True)
class ContentionInterval:
    run: int
    rank: int | None
    start_ns: int
    duration_ns: int
    kind: Literal["aicore", "vectorcore"]
    demand: int
    maximum: int
    kernels: tuple[str, ...] = ()
    streams: tuple[int, ...] = ()
    excess_block_ns: int = 0  # sum over the interval of (demand - maximum) x time: the ranking key


@dataclass(frozen=True)
class AppliedLimit:
    """A configured core limit and how many kernels it governed (all runs)."""

    source: Literal["plan", "graph-dump", "ge-global"]
    aicore: int | None
    vectorcore: int | None
    mode: PlanMode = "ge"
    plan: str | None = None
    detail: str | None = None  # the aicore_num string, or the dump file(s)
    kernels: int = 0


@dataclass(frozen=True)
class CoresResult:
    device: DeviceCores | None
    violations: tuple[CoreViolation, ...] = ()
    warnings: tuple[CoreViolation, ...] = ()  # npugraph_ex non-Ascend C, MIX_AIV reports
    contention: tuple[ContentionInterval, ...] = ()
    over_limit_ns: int = 0  # total time with demand above the device maximum
    checked_kernels: int = 0
    exempt_kernels: int = 0
    limits: tuple[AppliedLimit, ...] = ()
    unchecked_kernels: int = 0  # governed by a limit but without core type / block count
    violation_count: int = 0  # all violations; `violations` lists at most a capped number
    warning_count: int = 0
    contention_count: int = 0  # all over-limit intervals; `contention` lists the worst
    aicore_over_limit_ns: int = 0
    vectorcore_over_limit_ns: int = 0
    contention_runs: int = 0  # warm runs swept for contention
    over_limit_by_rank: tuple[tuple[int | None, int], ...] = ()  # (rank, over_limit_ns)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommunicationStep:
    """Communication of one step of one run (docs/method.md, "Communication"): the union of
    the communication rows (busy), its part under the union of compute kernels on all
    streams (hidden) and the rest (exposed); beside them the profiler's own figures for the
    same step, when the capture has step_trace_time.csv."""

    run: int  # 1-based within the rank
    warm: bool
    step: int | None  # None: the whole run (a capture without steps)
    busy_ns: int
    hidden_ns: int
    exposed_ns: int
    compute_ns: int  # union of compute kernels, all streams
    profiler: ProfilerStepTime | None = None
    # largest of |busy - Communication|, |hidden - Overlapped|, |exposed - Not Overlapped|
    # as a share of the profiler's Communication (None: nothing to compare with)
    profiler_difference: float | None = None


@dataclass(frozen=True)
class RankCommunication:
    """Communication busy, hidden and exposed time of one rank: each a warm median of its own
    over the samples (runs, or steps with --per step), and every step of every run."""

    rank: int | None
    busy_ns: float | None  # None: no warm sample
    hidden_ns: float | None
    exposed_ns: float | None
    hidden_pct: float | None  # median of hidden / busy over warm samples with busy time
    provisional: bool
    steps: tuple[CommunicationStep, ...] = ()


@dataclass(frozen=True)
class BaselineDelta:
    plan: str
    rank: int | None
    base: float | None
    head: float | None
    delta: float | None
    status: Literal["ok", "regressed", "improved", "missing-in-base", "missing-in-head"]
    # What was compared: a plan's deciding figure, or a stream pair's busy-time overlap.
    figure: BaselineFigure = "hidden_pct"


@dataclass(frozen=True)
class Report:
    """The portable result of one analysis; every renderer reads only this."""

    tool_version: str
    verdict: Literal["pass", "fail"]
    exit_code: int
    thresholds: Thresholds
    runs: tuple[RunInfo, ...]
    stream_pairs: tuple[StreamPair, ...] = ()
    ranks: tuple[RankStreamSummary, ...] = ()
    plans: tuple[PlanResult, ...] = ()
    cores: CoresResult | None = None
    baseline: tuple[BaselineDelta, ...] | None = None
    gate_reasons: tuple[str, ...] = ()  # why the gate failed (empty on pass)
    notes: tuple[str, ...] = ()  # warnings a reader must see (provisional, skipped rows)
    # why a judged figure is provisional, each cause once ("judged on fewer than 5 runs
    # (--min-runs)", "malformed rows were skipped"): renderers show these words, never guess
    provisional_reasons: tuple[str, ...] = ()
    warmup: int = 2
    min_runs: int = 5
    per: str = "run"
    schema_version: int = SCHEMA_VERSION
    worst_rank: int | None = None  # the rank with the lowest figure, when several ranks
    # The gate settings the report was judged with, so that CI renderers can mark each
    # plan / stream pair as failing or not (added for report/cases.py).
    fail_on: FailOn = DEFAULT_FAIL_ON
    strict: bool = False
    baseline_tolerance: float | None = None  # set by baseline.apply_baseline
    fake_share: float = FAKE_SHARE  # Options.fake_share the plans were judged with
    allow_missing_wait: bool = False  # Options.allow_missing_wait the gate was built with
    config_path: str | None = None  # the config file the options came from (Options.config_path)
    communication: tuple[RankCommunication, ...] = ()  # ranks with communication rows
    reference: ReferenceResult | None = None  # --reference: the comparison (gain.apply_reference)
    evidence_summary: tuple[str, ...] = ()  # one line per plan (gain.evidence_summary)

    @classmethod
    def from_json(cls, document: object, path: str | None = None) -> Report:
        """The Report back from a parsed JSON report (report/json.py's document): rendering
        it again gives the same JSON. InputError naming ``path`` and the key when it is not one."""
        from overlap_check.model.json_codec import from_dict

        return from_dict(document, path)

    @property
    def provisional(self) -> bool:
        """A judged figure stands on fewer runs (or steps) than ``min_runs``, or on a capture
        that lost rows (``provisional_reasons`` says which)."""
        return any(p.provisional for p in self.plans) or any(
            p.provisional for p in self.stream_pairs
        )

    @property
    def provisional_text(self) -> str:
        """Why the result is provisional, in words ("" when it is not); a report written
        before the causes were recorded stood only on its run count."""
        if not self.provisional:
            return ""
        fallback = f"judged on fewer than {self.min_runs} runs (--min-runs)"
        return "; ".join(self.provisional_reasons) or fallback

    def failing(self, *reasons: str) -> Report:
        """A copy whose gate fails for these extra reasons (baselines, contention)."""
        if not reasons:
            return self
        return replace(
            self, verdict="fail", exit_code=1, gate_reasons=self.gate_reasons + tuple(reasons)
        )


def deciding_occurrence(
    runs: Sequence[PlanRun],
) -> tuple[PlanRun, Occurrence] | None:
    """The occurrence the text names for a verdict taken on hidden_pct: the lowest judged
    hidden_pct among the warm runs' worst ones (the cold runs' when no warm run recorded
    any; ties: the first in run order). None: none was judged."""
    pool = [r for r in runs if r.warm and r.worst] or [r for r in runs if r.worst]
    judged = [(r, o) for r in pool for o in r.worst if o.hidden_pct is not None]
    if not judged:
        return None
    return min(judged, key=lambda item: item[1].hidden_pct or 0.0)
