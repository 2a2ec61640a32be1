"""A scenario as two polars frames: kernel rows (compute + communication) and tasks.

Every writer renders these frames; :mod:`synth.big` builds the same
frames straight from numpy for benchmark-sized captures. Derived fields that the
profiler computes (per-stream Task IDs, connection ids, device-wide Wait Time)
are computed here once, vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from synth.model import Scenario, op_type_of

KERNEL_RAW_SCHEMA: dict[str, pl.DataType] = {
    "start_ns": pl.Int64(),
    "dur_ns": pl.Int64(),
    "name": pl.String(),
    "op_type": pl.String(),
    "core": pl.String(),  # Accelerator Core of a compute kernel; "" for communication
    "stream_id": pl.Int64(),  # null for communication
    "block": pl.Int64(),
    "mix": pl.Int64(),
    "step": pl.Int64(),
    "is_comm": pl.Boolean(),
    "input_shapes": pl.String(),  # null: the op type's default (synth.kernel_csv)
}
TASK_RAW_SCHEMA: dict[str, pl.DataType] = {
    "start_ns": pl.Int64(),
    "dur_ns": pl.Int64(),
    "kind": pl.String(),
    "stream_id": pl.Int64(),
}

# Task ID where each stream's numbering starts (real captures: stream 2 ~11051, 3 ~301, 4 ~806)
_TASK_ID_BASE = {0: 8, 2: 11051, 3: 301, 4: 806}
FIRST_CONNECTION_ID = 263
TASK_ID_MODULUS = 65536  # 16-bit task ids wrap on long captures


@dataclass(frozen=True)
class Frames:
    """``kernels``: sorted by start; ``tasks``: sorted by start; both with ids."""

    kernels: pl.DataFrame  # KERNEL_RAW_SCHEMA + task_id, conn_id, wait_ns
    tasks: pl.DataFrame  # TASK_RAW_SCHEMA + task_id, conn_id


def raw_frames(scenario: Scenario) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The scenario's objects as raw frames (no derived fields yet)."""
    ks = scenario.kernels
    cs = scenario.communication
    kernels = pl.DataFrame(
        {
            "start_ns": [k.start_ns for k in ks] + [c.start_ns for c in cs],
            "dur_ns": [k.duration_ns for k in ks] + [c.duration_ns for c in cs],
            "name": [k.name for k in ks] + [c.name for c in cs],
            "op_type": [k.op_type or op_type_of(k.name) for k in ks]
            + [op_type_of(c.name) for c in cs],
            "core": [k.accelerator_core for k in ks] + [""] * len(cs),
            "stream_id": [k.stream_id for k in ks] + [None] * len(cs),
            "block": [k.block_num for k in ks] + [0] * len(cs),
            "mix": [k.mix_block_num for k in ks] + [0] * len(cs),
            "step": [k.step for k in ks] + [c.step for c in cs],
            "is_comm": [False] * len(ks) + [True] * len(cs),
            "input_shapes": [k.input_shapes for k in ks] + [None] * len(cs),
        },
        schema=KERNEL_RAW_SCHEMA,
    )
    tasks = pl.DataFrame(
        {
            "start_ns": [t.start_ns for t in scenario.tasks],
            "dur_ns": [t.duration_ns for t in scenario.tasks],
            "kind": [t.kind for t in scenario.tasks],
            "stream_id": [t.stream_id for t in scenario.tasks],
        },
        schema=TASK_RAW_SCHEMA,
    )
    return kernels, tasks


def _task_id_base(stream: pl.Expr) -> pl.Expr:
    fallback = (stream * 97 + 5) % 30000
    expr: pl.Expr = fallback
    for sid, base in _TASK_ID_BASE.items():
        expr = pl.when(stream == sid).then(pl.lit(base, pl.Int64)).otherwise(expr)
    return expr


def finish(kernels: pl.DataFrame, tasks: pl.DataFrame) -> Frames:
    """Sort, then add Task IDs (per stream, kernels and tasks together), connection
    ids (capture-wide, in start order) and Wait Time (device-wide, docs/formats.md)."""
    k = kernels.with_row_index("_k").sort(["start_ns", "_k"])
    t = tasks.with_row_index("_t").sort(["start_ns", "_t"])
    # one timeline of every device task, to number them the way the hardware does
    timeline = pl.concat(
        [
            k.select(pl.lit("k").alias("src"), pl.col("_k").alias("idx"), "start_ns", "stream_id"),
            t.select(pl.lit("t").alias("src"), pl.col("_t").alias("idx"), "start_ns", "stream_id"),
        ]
    ).with_row_index("_order")
    timeline = timeline.sort(["start_ns", "_order"]).with_columns(
        (pl.int_range(pl.len(), dtype=pl.Int64) + FIRST_CONNECTION_ID).alias("conn_id"),
        pl.when(pl.col("stream_id").is_not_null())
        .then(
            (
                _task_id_base(pl.col("stream_id"))
                + pl.int_range(pl.len(), dtype=pl.Int64).over("stream_id")
            )
            % TASK_ID_MODULUS
        )
        .alias("task_id"),
    )
    ids = timeline.select("src", "idx", "conn_id", "task_id")
    k = k.join(
        ids.filter(pl.col("src") == "k").drop("src"), left_on="_k", right_on="idx", how="left"
    )
    t = t.join(
        ids.filter(pl.col("src") == "t").drop("src"), left_on="_t", right_on="idx", how="left"
    )
    k = k.sort(["start_ns", "_k"]).with_columns(
        pl.max_horizontal(
            pl.lit(0, pl.Int64),
            pl.col("start_ns") - pl.col("start_ns").shift(1) - pl.col("dur_ns").shift(1),
        )
        .fill_null(0)
        .alias("wait_ns")
    )
    return Frames(kernels=k.drop("_k"), tasks=t.sort(["start_ns", "_t"]).drop("_t"))


def frames(scenario: Scenario) -> Frames:
    kernels, tasks = raw_frames(scenario)
    return finish(kernels, tasks)


STEP_LEAD_NS = 1_500_000  # ProfilerStep#N starts this long before its first device task
STEP_TAIL_NS = 200_000


def step_ranges(kernels: pl.DataFrame) -> tuple[tuple[int, int, int], ...]:
    """(step, start_ns, end_ns) of each ``ProfilerStep#N``, spanning its kernels."""
    stepped = kernels.filter(pl.col("step").is_not_null())
    if stepped.height == 0:
        return ()
    spans = (
        stepped.group_by("step")
        .agg(
            pl.col("start_ns").min().alias("s"),
            (pl.col("start_ns") + pl.col("dur_ns")).max().alias("e"),
        )
        .sort("step")
    )
    return tuple(
        (int(step), int(s) - STEP_LEAD_NS, int(e) + STEP_TAIL_NS)
        for step, s, e in spans.select("step", "s", "e").iter_rows()
    )
