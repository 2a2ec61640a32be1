"""Runs and steps: which samples a figure is a median over, and which of them are warm.

Ranks apart, runs in the readers' order numbered from 1 per rank, a sample a capture or a
profiler step, the first ``warmup`` samples cold (fewer when the runs are few, then
provisional): docs/method.md, "Runs, steps, warm-up"."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import polars as pl

from overlap_check.model import Capture
from overlap_check.model.errors import UsageError
from overlap_check.model.table import ANALYSIS_COLUMNS, compute_kernels


@dataclass(frozen=True)
class Sample:
    """One unit a per-run figure is computed from (a run, or a step of a run)."""

    index: int  # 1-based within the rank, in run (then step) order
    run: int  # 1-based index of the capture it comes from, within the rank
    label: str | None  # "run 3" / "run 3 step 50"; None for plain runs
    kernels: pl.DataFrame  # compute kernels only (no communication rows)
    warm: bool
    step: int | None = None  # with per="step": the Step Id


@dataclass(frozen=True)
class WarmupPlan:
    samples: int
    warmup: int  # effective warm-up (cold samples discarded)
    provisional: bool


@dataclass(frozen=True)
class Spread:
    """Median over the warm samples of a figure, with its range."""

    median: float | None
    minimum: float | None
    maximum: float | None
    used: int  # warm samples that had a figure


def rank_key(rank: int | None) -> tuple[int, int]:
    """Sort key for ranks: by number, an unknown rank last (as the readers order them)."""
    return (1, 0) if rank is None else (0, rank)


T = TypeVar("T")


def _rank_of_capture(capture: Capture) -> int | None:
    return capture.rank


def group_by_rank(
    items: Sequence[T],
    rank_of: Callable[[T], int | None] = _rank_of_capture,  # type: ignore[assignment]
) -> dict[int | None, list[T]]:
    """Items (captures, or what stands for them) per rank, each list in run order; ranks in
    ascending order, an unknown rank last."""
    groups: dict[int | None, list[T]] = {}
    for item in items:
        groups.setdefault(rank_of(item), []).append(item)
    return {rank: groups[rank] for rank in sorted(groups, key=rank_key)}


def plan_warmup(samples: int, warmup: int, min_runs: int) -> WarmupPlan:
    """The warm-up actually applied to ``samples`` samples, and whether it is provisional."""
    effective = max(0, min(warmup, samples - 1))
    provisional = samples < min_runs or effective < warmup
    return WarmupPlan(samples=samples, warmup=effective, provisional=provisional)


def make_samples(
    runs: Sequence[Capture],
    per: str,
    warmup: int,
    min_runs: int,
    columns: Sequence[str] = ANALYSIS_COLUMNS,
) -> tuple[list[Sample], WarmupPlan]:
    """The samples of one rank's runs, with their warm flags (``columns``: the kernel
    columns kept)."""
    raw: list[tuple[int, int | None, pl.DataFrame]] = []
    for run_index, capture in enumerate(runs, start=1):
        kernels = compute_kernels(capture.kernels, columns)
        if per == "run":
            raw.append((run_index, None, kernels))
            continue
        stepped = kernels.filter(pl.col("step").is_not_null())
        if stepped.is_empty():
            raise UsageError(
                "--per step: this capture has no profiler steps (no Step Id)",
                path=capture.path,
                hint="profile with a schedule and prof.step(), or use --per run",
            )
        # One partition per step, in step order; kernels keep their time order.
        by_step = stepped.sort("step", maintain_order=True).partition_by(
            "step", maintain_order=True
        )
        for part in by_step:
            raw.append((run_index, int(part.item(0, "step")), part))
    return number_samples(raw, warmup, min_runs)


def number_samples(
    raw: Sequence[tuple[int, int | None, pl.DataFrame]], warmup: int, min_runs: int
) -> tuple[list[Sample], WarmupPlan]:
    """Samples of one rank from (run, step or None, kernels) in run (then step) order:
    numbered from 1, labelled, the first ``plan_warmup`` of them cold."""
    plan = plan_warmup(len(raw), warmup, min_runs)
    samples = [
        Sample(
            index=i,
            run=run,
            label=None if step is None else f"run {run} step {step}",
            kernels=table,
            warm=i > plan.warmup,
            step=step,
        )
        for i, (run, step, table) in enumerate(raw, start=1)
    ]
    return samples, plan


def spread(values: Sequence[float | None], warm: Sequence[bool]) -> Spread:
    """Median, min and max of the warm values that exist (None: the sample had no figure)."""
    used = [v for v, w in zip(values, warm, strict=True) if w and v is not None]
    if not used:
        return Spread(None, None, None, 0)
    return Spread(float(statistics.median(used)), min(used), max(used), len(used))
