"""joins.layer_figures on hand-laid layers: wall, dominator, side ops, join wait, side tail."""

from __future__ import annotations

import polars as pl

from overlap_check.joins import layer_figures, step_wall
from overlap_check.model import LayerFigures, Plan
from overlap_check.plans import PlanStreams, main_kernels, occurrences, tag
from overlap_check.table import conform

T0 = 1_736_408_883_704_643_212
PLAN = Plan("moe", side="Shared", dominator="GroupedMatmul")
Row = tuple[str, int, int, int]  # name, stream, start, end (µs after T0)


def figures(rows: list[Row]) -> LayerFigures:
    frame = conform(
        pl.DataFrame(
            {
                "name": [r[0] for r in rows],
                "stream_id": [r[1] for r in rows],
                "start_ns": [T0 + r[2] * 1000 for r in rows],
                "end_ns": [T0 + r[3] * 1000 for r in rows],
                "is_communication": [False] * len(rows),
            },
            schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
        )
    )
    tagged = tag(frame, PLAN)
    main = main_kernels(tagged, 2)
    occ = occurrences(tagged, PLAN, PlanStreams(main=2, side=3), main)
    return layer_figures(main, occ, step_wall(frame))


def test_side_tail_partly_covered_by_main_work() -> None:
    # dominator [0, 100]; side ops [10, 60] and [70, 150]; a main Add [110, 120], then the
    # next main op at 160, after the side work ends at 150
    fig = figures(
        [
            ("GroupedMatmul", 2, 0, 100),
            ("SharedA", 3, 10, 60),
            ("SharedB", 3, 70, 150),
            ("Add", 2, 110, 120),
            ("Norm", 2, 160, 170),
        ]
    )
    assert fig.layers == 1
    assert fig.layer_wall_ns == (150 - 0) * 1000
    assert fig.dominator_ns == 100_000
    assert fig.side_total_ns == (50 + 80) * 1000
    # main idle in [100, 160] less the Add's 10 µs
    assert fig.join_wait_ns == (160 - 100 - 10) * 1000
    assert fig.join_wait_max_ns == 50_000 and fig.join_wait_layer == 1
    # side busy after the dominator: [100, 150], 10 µs of it under the Add
    assert fig.side_tail_ns == (150 - 100 - 10) * 1000
    assert fig.steps == 1 and fig.step_wall_ns == 170_000


def test_side_work_ending_first_leaves_no_wait() -> None:
    fig = figures(
        [
            ("GroupedMatmul", 2, 0, 100),
            ("SharedA", 3, 10, 60),
            ("Norm", 2, 130, 140),  # a gap after the dominator, but nothing was waited for
        ]
    )
    assert fig.join_wait_ns == 0 and fig.side_tail_ns == 0
    assert fig.join_wait_max_ns is None and fig.join_wait_layer is None


def test_no_main_op_after_the_side_work() -> None:
    # the capture ends with the side tail: the wait runs to the side work's end
    fig = figures([("GroupedMatmul", 2, 0, 100), ("SharedA", 3, 10, 130)])
    assert fig.join_wait_ns == 30_000 and fig.side_tail_ns == 30_000


def test_median_over_layers_and_worst_layer() -> None:
    # layer 1 waits 20 µs (side ends at 120, next main op at 120); layer 2 waits 50 µs
    fig = figures(
        [
            ("GroupedMatmul", 2, 0, 100),
            ("SharedA", 3, 10, 120),
            ("Norm", 2, 120, 130),
            ("GroupedMatmul", 2, 200, 300),
            ("SharedB", 3, 210, 350),
            ("Norm", 2, 350, 360),
        ]
    )
    assert fig.layers == 2
    assert fig.join_wait_ns == (20 + 50) / 2 * 1000
    assert fig.join_wait_max_ns == 50_000 and fig.join_wait_layer == 2
    assert fig.layer_wall_ns == ((120 - 0) + (350 - 200)) / 2 * 1000


def test_step_walls_in_step_id_order() -> None:
    # step 7 [0, 100] and [150, 180]; step 3 [200, 260] listed after it; a kernel without
    # a step is left out of the steps when other kernels have one
    frame = conform(
        pl.DataFrame(
            {
                "name": ["A", "B", "C", "D"],
                "stream_id": [2, 3, 2, 2],
                "start_ns": [T0, T0 + 150_000, T0 + 200_000, T0 + 300_000],
                "end_ns": [T0 + 100_000, T0 + 180_000, T0 + 260_000, T0 + 400_000],
                "step": [7, 7, 3, None],
                "is_communication": [False] * 4,
            },
            schema_overrides={
                "stream_id": pl.Int64,
                "start_ns": pl.Int64,
                "end_ns": pl.Int64,
                "step": pl.Int64,
            },
        )
    )
    steps = step_wall(frame)
    assert steps.walls == ((3, 260_000 - 200_000), (7, 180_000 - 0))
    assert steps.number == 2 and steps.median_ns == (60_000 + 180_000) / 2
    # no step column: the sample is one step, its Step Id None
    bare = step_wall(frame.with_columns(pl.lit(None, dtype=pl.Int64).alias("step")))
    assert bare.walls == ((None, 400_000 - 0),)
