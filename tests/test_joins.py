"""joins.layer_figures on hand-laid layers: wall, dominator, side ops, join wait, side tail."""

from __future__ import annotations

import polars as pl

from overlap_check.measure.joins import (
    JOIN_WAIT_CAUSE_SHARE,
    JOIN_WAIT_CAUSE_US,
    join_wait_cause,
    layer_figures,
    step_wall,
    tail_ops_cause,
)
from overlap_check.measure.occurrences import PlanStreams
from overlap_check.measure.plans import main_kernels, occurrences, tag
from overlap_check.model import LayerFigures, Plan, PlanWalls, TailOp
from overlap_check.model.table import conform

T0 = 1_736_408_883_704_643_212
PLAN = Plan("moe", side="Shared", dominator="GroupedMatmul")
Row = tuple[str, int, int, int]  # name, stream, start, end (µs after T0)


def figures(rows: list[Row], op_types: list[str | None] | None = None) -> LayerFigures:
    frame = conform(
        pl.DataFrame(
            {
                "name": [r[0] for r in rows],
                "op_type": op_types or [None] * len(rows),
                "stream_id": [r[1] for r in rows],
                "start_ns": [T0 + r[2] * 1000 for r in rows],
                "end_ns": [T0 + r[3] * 1000 for r in rows],
                "is_communication": [False] * len(rows),
            },
            schema_overrides={
                "stream_id": pl.Int64,
                "start_ns": pl.Int64,
                "end_ns": pl.Int64,
                "op_type": pl.String,
            },
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
    # the only layer: its dominator's start to the main stream's last end (Norm)
    assert fig.layer_wall_ns == (170 - 0) * 1000
    assert fig.dominator_ns == 100_000
    assert fig.side_total_ns == (50 + 80) * 1000
    # the join, the first main op after the dominator (the Add at 110), started before the
    # side work ended at 150: it did not wait (a race, flagged on its own), so no join wait;
    # before: main idle in [100, 160] less the Add's 10 µs, 50 µs, beside "did not wait"
    assert fig.join_wait_ns == 0
    assert fig.join_wait_max_ns is None and fig.join_wait_layer is None
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
    # one dominator's start to the next's; the last layer has no next one
    assert fig.layer_wall_ns == (200 - 0) * 1000


def test_tail_operators_right_after_the_dominator() -> None:
    # dominator [0, 100]; after it TransData [102, 112] and MemSet [114, 117] (tail ops,
    # matched in the names), then the Add, a real op: the TransData after it is not a tail
    fig = figures(
        [
            ("GroupedMatmul", 2, 0, 100),
            ("SharedA", 3, 10, 60),
            ("trans_TransData_3", 2, 102, 112),
            ("aclnnInplaceZero_MemSet_MemSet", 2, 114, 117),
            ("Add", 2, 120, 130),
            ("trans_TransData_4", 2, 135, 140),
        ]
    )
    assert fig.tail_ops == (TailOp("TransData", 1, (112 - 102) * 1000), TailOp("MemSet", 1, 3000))


def test_tail_operators_per_layer_by_op_type() -> None:
    # layer 1: a BroadcastTo of 8 µs after its dominator; layer 2: none (a Norm first).
    # Per layer: 1 / 2 = 0.5 of them, 8 / 2 = 4 µs. The type decides where the table has one.
    rows: list[Row] = [
        ("GroupedMatmul", 2, 0, 100),
        ("SharedA", 3, 10, 60),
        ("aclnnExpand_Op", 2, 101, 109),
        ("Norm", 2, 110, 120),
        ("GroupedMatmul", 2, 200, 300),
        ("SharedB", 3, 210, 260),
        ("Norm", 2, 301, 310),
        ("aclnnExpand_Op", 2, 311, 319),
    ]
    types = ["GroupedMatmul", "MatMulV3", "BroadcastTo", "RmsNorm"] * 2
    types[6:] = ["RmsNorm", "BroadcastTo"]
    fig = figures(rows, types)
    assert fig.tail_ops == (TailOp("BroadcastTo", 1 / 2, 8 * 1000 / 2),)


def _walls(wait_us: float, wall_us: float, tails: tuple[TailOp, ...] = ()) -> PlanWalls:
    return PlanWalls(
        layers=2,
        steps=1,
        layer_wall_ns=wall_us * 1000,
        dominator_ns=300_000,
        side_total_ns=160_000,
        join_wait_ns=wait_us * 1000,
        side_tail_ns=0,
        step_wall_ns=None,
        join_wait_worst_ns=None,
        join_wait_worst_layer=None,
        join_wait_worst_run=None,
        tail_ops=tails,
    )


def test_join_wait_is_a_cause_above_its_threshold_or_share() -> None:
    assert (JOIN_WAIT_CAUSE_US, JOIN_WAIT_CAUSE_SHARE) == (20.0, 0.05)
    # 19 µs of a 500 µs layer: under 20 µs and 3.8% < 5%, not a cause
    assert join_wait_cause(_walls(19, 500)) is None
    # 19 µs of a 300 µs layer: 6.3% >= 5%
    cause = join_wait_cause(_walls(19, 300))
    assert cause is not None and cause.kind == "join-wait" and cause.size_ns == 19_000
    assert cause.text == (
        "join wait: the main stream waited 19.000 µs per layer (median) for the side tail "
        f"after the dominator, {19 / 300 * 100:.1f}% of the 300.000 µs layer wall"
    )
    # 25 µs of a 1000 µs layer: 2.5%, but at least 20 µs
    assert join_wait_cause(_walls(25, 1000)) is not None
    assert join_wait_cause(_walls(0, 300)) is None


def test_tail_ops_cause_names_each_operator() -> None:
    tails = (TailOp("TransData", 1, 12_400), TailOp("MemSet", 0.5, 1_600))
    cause = tail_ops_cause(_walls(0, 300, tails))
    assert cause is not None and cause.size_ns == 12_400 + 1_600
    assert "TransData x1 (12.400 µs), MemSet x0.5 (1.600 µs); 14.000 µs" in cause.text
    assert tail_ops_cause(_walls(0, 300)) is None


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
