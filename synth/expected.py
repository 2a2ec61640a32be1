"""The known answers that come with a built-in scenario.

Every figure is derived from the construction (window lengths, durations the
builder chose), never by running the analyser on the generated files.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from synth.layout import write_runs
from synth.model import Scenario, Variant

REAL = 0.5
FAKE = 0.05
WARMUP = 2
MIN_RUNS = 5


def verdict_of(pct: float | None) -> str:
    if pct is None:
        return "no-evidence"
    if pct >= REAL:
        return "real"
    if pct <= FAKE:
        return "fake"
    return "partial"


def warm_median(per_run: Sequence[float], warmup: int = WARMUP) -> float:
    """Median over warm runs; with too few runs, warmup shrinks so one run is judged."""
    skip = min(warmup, len(per_run) - 1)
    return float(statistics.median(per_run[skip:]))


@dataclass(frozen=True)
class ExpectedPlan:
    name: str
    side: str
    dominator: str
    side_stream: int | None
    main_stream: int | None
    overlap_pct: float | None  # warm-run median of the per-run window figure
    verdict: str  # real | partial | fake | not-split | no-evidence
    barrier: str | None = None  # op type of the expected first barrier candidate, e.g. "Cast"
    rank: int = 0
    per_run: tuple[float | None, ...] = ()  # per-run figure, run order, cold runs included
    occurrences: int = 1  # occurrences (layers) per run
    barrier_name: str | None = None  # full kernel name of that barrier
    provisional: bool = False  # fewer than MIN_RUNS runs
    all_runs_overlap_pct: float | None = None  # median if no run were discarded


@dataclass(frozen=True)
class ExpectedStream:
    rank: int
    run: int  # 1-based run index within the rank
    stream_id: int
    kernels: int
    busy_ns: int


@dataclass(frozen=True)
class ExpectedStreamPair:
    """Interval-set overlap of a side stream with the main stream in one run."""

    rank: int
    run: int
    main: int
    side: int
    overlap_ns: int
    overlap_pct: float
    verdict: str


@dataclass(frozen=True)
class ExpectedViolation:
    run: int
    rank: int
    stream_id: int
    name: str
    accelerator_core: str
    block_num: int
    mix_block_num: int
    limit: int
    kind: str  # "aicore" | "vectorcore"
    blocks_field: str  # "block_num" | "mix_block_num"
    start_ns: int


@dataclass(frozen=True)
class ExpectedContention:
    """Time where main + side block demand of one core kind exceeds the device."""

    run: int
    rank: int
    start_ns: int
    duration_ns: int
    kind: str  # "aicore" | "vectorcore"
    demand: int  # main + side blocks of this kind while both run
    maximum: int


@dataclass(frozen=True)
class Expected:
    plans: tuple[ExpectedPlan, ...]
    streams: tuple[ExpectedStream, ...] = ()
    stream_pairs: tuple[ExpectedStreamPair, ...] = ()
    violations: tuple[ExpectedViolation, ...] = ()
    warnings: tuple[ExpectedViolation, ...] = ()  # MIX_AIV: reported, not failed
    contention: tuple[ExpectedContention, ...] = ()
    device_cores: tuple[int, int] = (24, 48)  # (aicore, vectorcore) in info.json
    limit_core: tuple[int, int] | None = None  # the plan's (aicore, vectorcore) limit
    exempt: tuple[str, ...] = ()  # side kernels that no core limit applies to (AI_CPU, DSA_SQE)
    notes: str = ""

    def plan(self, name: str = "moe-shared-expert", rank: int = 0) -> ExpectedPlan:
        for plan in self.plans:
            if plan.name == name and plan.rank == rank:
                return plan
        raise KeyError(f"no expected plan {name!r} for rank {rank}")

    def pair_median(self, rank: int = 0, side: int = 3) -> float:
        per_run = [p.overlap_pct for p in self.stream_pairs if p.rank == rank and p.side == side]
        return warm_median(per_run)


@dataclass(frozen=True)
class Built:
    """Runs (one Scenario per run and rank, in run order) and their known answer."""

    scenarios: tuple[Scenario, ...]
    expected: Expected
    variant: Variant = field(default_factory=Variant)  # how the fixture is best written

    def runs(self, rank: int = 0) -> tuple[Scenario, ...]:
        return tuple(s for s in self.scenarios if s.rank == rank)

    def write(self, root: Path, variant: Variant | None = None) -> list[Path]:
        """Write every run as a result dir under ``root`` (ranks side by side)."""
        return write_runs(self.scenarios, Path(root), variant or self.variant)
