"""Runs and steps: rank grouping, warm-up rule, medians, per-step samples."""

from __future__ import annotations

import polars as pl
import pytest

from overlap_check.measure.runs import group_by_rank, make_samples, plan_warmup, spread
from overlap_check.model import Capture
from overlap_check.model.errors import UsageError
from overlap_check.model.table import conform

T0 = 1_736_408_883_704_643_212


def capture(
    rank: int | None = 0, steps: list[int | None] | None = None, path: str = "p"
) -> Capture:
    steps = steps if steps is not None else [None, None]
    n = len(steps)
    frame = pl.DataFrame(
        {
            "name": ["K"] * n,
            "stream_id": [2] * n,
            "start_ns": [T0 + 100 * i for i in range(n)],
            "end_ns": [T0 + 100 * i + 50 for i in range(n)],
            "is_communication": [False] * n,
            "step": steps,
        },
        schema_overrides={"step": pl.Int64, "stream_id": pl.Int64},
    )
    return Capture(path, "kernel_details.csv", rank, 0, "Level1", None, conform(frame))


@pytest.mark.parametrize(
    ("samples", "warmup", "min_runs", "effective", "provisional"),
    [
        (5, 2, 5, 2, False),  # the method: 5 runs, 2 cold
        (7, 2, 5, 2, False),
        (1, 2, 5, 0, True),  # a single run is judged: min(2, 1 - 1) = 0
        (2, 2, 5, 1, True),  # min(2, 2 - 1) = 1
        (3, 2, 5, 2, True),  # min(2, 3 - 1) = 2: one run judged
        (6, 10, 5, 5, True),  # warm-up larger than the runs: reduced, so provisional
        (5, 0, 5, 0, False),
    ],
)
def test_warmup_rule(
    samples: int, warmup: int, min_runs: int, effective: int, provisional: bool
) -> None:
    plan = plan_warmup(samples, warmup, min_runs)
    assert (plan.warmup, plan.provisional) == (effective, provisional)
    assert plan.samples - plan.warmup >= 1


def test_group_by_rank_keeps_run_order() -> None:
    caps = [
        capture(1, path="b"),
        capture(0, path="z"),
        capture(1, path="a"),
        capture(None, path="n"),
    ]
    groups = group_by_rank(caps)
    assert list(groups) == [0, 1, None]
    assert [c.path for c in groups[1]] == ["b", "a"]  # given order, not alphabetical


def test_samples_per_run() -> None:
    samples, plan = make_samples([capture(path=str(i)) for i in range(5)], "run", 2, 5)
    assert [s.warm for s in samples] == [False, False, True, True, True]
    assert [s.run for s in samples] == [1, 2, 3, 4, 5]
    assert not plan.provisional


def test_samples_per_step() -> None:
    cap = capture(steps=[50, 50, 51, None, 52, 53, 54])
    samples, plan = make_samples([cap], "step", 2, 5)
    # The kernel outside every step (None) is left out; 5 steps are 5 samples.
    assert [s.label for s in samples] == [f"run 1 step {n}" for n in (50, 51, 52, 53, 54)]
    assert [s.kernels.height for s in samples] == [2, 1, 1, 1, 1]
    assert [s.warm for s in samples] == [False, False, True, True, True]
    assert not plan.provisional


def test_per_step_without_steps_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no profiler steps") as err:
        make_samples([capture(path="dir/x_ascend_pt")], "step", 2, 5)
    assert err.value.path == "dir/x_ascend_pt"


def test_spread_uses_warm_values_only() -> None:
    result = spread([0.0, 0.0, 1.0, 0.9, None, 0.7], [False, False, True, True, True, True])
    assert result.median == 0.9  # median of 1.0, 0.9, 0.7
    assert (result.minimum, result.maximum, result.used) == (0.7, 1.0, 3)
    assert spread([0.5, 0.2], [False, False]).median is None
    assert spread([0.2, 0.4], [True, True]).median == (0.2 + 0.4) / 2
