"""The Report: every plan's result with walls, reference, cores, communication and baseline.

Each field is a report key: docs/report.schema.json describes them, docs/contract.md lists
them; the comments here add only what those do not say."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from overlap_check.model.inputs import DeviceCores, ProfilerStepTime, Thresholds
from overlap_check.model.results import (
    PlanResult,
    PlanWalls,
    RankStreamSummary,
    RunInfo,
    StepWall,
    StreamPair,
)
from overlap_check.model.vocabulary import (
    DEFAULT_FAIL_ON,
    FAKE_SHARE,
    SCHEMA_VERSION,
    BaselineFigure,
    FailOn,
    PlanMode,
)


@dataclass(frozen=True)
class StepWallDelta:
    before: StepWall
    after: StepWall
    delta_pct: float | None  # (after - before) / before x 100: positive = slower


@dataclass(frozen=True)
class ReferenceDelta:
    """One plan of one rank against the reference capture (docs/gain.md)."""

    plan: str
    rank: int | None
    layers: int  # layers matched by order per sample
    before: PlanWalls
    after: PlanWalls
    layer_wall_delta_pct: float | None
    step_wall_delta_pct: float | None
    new_join_wait_ns: float | None  # after - before (a new hole after the join)
    steps: tuple[StepWallDelta, ...] = ()
    steps_before: int = 0  # warm steps of the reference
    steps_after: int = 0  # warm steps of this capture
    step_delta_median_pct: float | None = None  # median of the matched steps' Δ%
    worst_step: int | None = None  # 1-based position in ``steps`` of the largest Δ%
    shape_changes: tuple[str, ...] = ()  # shapes.shape_changes
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
    """Communication of one step of one run (docs/method.md, "Communication")."""

    run: int  # 1-based within the rank
    warm: bool
    step: int | None  # None: the whole run (a capture without steps)
    busy_ns: int
    hidden_ns: int
    exposed_ns: int
    compute_ns: int  # union of compute kernels, all streams
    profiler: ProfilerStepTime | None = None
    profiler_difference: float | None = None


@dataclass(frozen=True)
class RankCommunication:
    """A rank's communication: warm medians over its samples, and every step of every run."""

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
    provisional_reasons: tuple[str, ...] = ()  # renderers show these words, never guess
    warmup: int = 2
    min_runs: int = 5
    per: str = "run"
    schema_version: int = SCHEMA_VERSION
    worst_rank: int | None = None  # the rank with the lowest figure, when several ranks
    fail_on: FailOn = DEFAULT_FAIL_ON  # the gate's settings: verdict.mark_gate reads them
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
        """The Report a parsed JSON report describes (rendered again: the same JSON);
        InputError naming ``path`` and the key when it is not one."""
        from overlap_check.model.json_codec import from_dict

        return from_dict(document, path)

    @property
    def provisional(self) -> bool:
        """A figure (a verdict, a rank's or its communication's) stands on too few runs or on
        lost rows: ``provisional_reasons``, or (an older report) a plan or pair says so."""
        judged = [p.provisional for p in self.plans] + [p.provisional for p in self.stream_pairs]
        return bool(self.provisional_reasons) or any(judged)

    @property
    def provisional_text(self) -> str:
        """Why the result is provisional ("" when not); older reports: only the run count."""
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
