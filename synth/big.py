"""Benchmark-sized captures (a million kernels) built with numpy, not Python objects.

The frames have the same columns as :func:`synth.rows.frames`, so
every writer renders them unchanged; only the scenario metadata object is small.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from synth import layout, rows
from synth.model import Scenario, Variant

_OPS = (  # (name, op type, core, block, mix, mean duration ns)
    ("aclnnRmsNorm_RmsNorm_RmsNorm", "RmsNorm", "AI_VECTOR_CORE", 48, 0, 18_000),
    ("aclnnMatmul_MatMulV3Common_MatMulV3", "MatMulV3", "AI_CORE", 24, 0, 60_000),
    (
        "aclnnGroupedMatmulV5_GroupedMatmul_GroupedMatmul",
        "GroupedMatmul",
        "MIX_AIC",
        24,
        48,
        250_000,
    ),
    ("aclnnSwiGlu_SwiGlu_SwiGlu", "SwiGlu", "AI_VECTOR_CORE", 48, 0, 20_000),
    ("aclnnCast_CastAiCore_Cast", "Cast", "AI_VECTOR_CORE", 8, 0, 4_000),
    ("aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", 48, 0, 8_000),
)
BASE_NS = 1_736_408_883_704_643_212


def big_frames(
    kernels: int = 1_000_000,
    *,
    streams: tuple[int, ...] = (2, 3),
    seed: int = 0,
    steps: int = 10,
    task_every: int = 50,
) -> rows.Frames:
    """``kernels`` kernels spread over ``streams`` (the first gets half), each stream serial
    with random gaps, plus one EVENT_WAIT per ``task_every`` kernels; ``steps`` Step Ids."""
    rng = np.random.default_rng(seed)
    n = kernels
    share = np.full(len(streams), 0.5 / max(len(streams) - 1, 1))
    share[0] = 0.5 if len(streams) > 1 else 1.0
    stream_of = rng.choice(np.asarray(streams, dtype=np.int64), size=n, p=share)
    op = rng.integers(0, len(_OPS), size=n)
    mean = np.array([o[5] for o in _OPS], dtype=np.int64)[op]
    duration = (mean * rng.uniform(0.5, 1.5, size=n)).astype(np.int64) // 10 * 10 + 10
    gap = rng.integers(1_000, 20_000, size=n, dtype=np.int64)
    start = np.empty(n, dtype=np.int64)
    for sid in streams:
        mine = np.flatnonzero(stream_of == sid)
        # each stream is serial: start = base + cumulative (gap + duration) of earlier kernels
        spans = gap[mine] + duration[mine]
        start[mine] = BASE_NS + np.concatenate([[0], np.cumsum(spans)[:-1]]) + gap[mine]
    span = int(start.max() - BASE_NS) + 1 if n else 1
    step = 1 + (start - BASE_NS) * steps // span

    # strings by gathering from the six op names: numpy string arrays convert slowly
    def pick(column: int) -> pl.Series:
        return pl.Series([o[column] for o in _OPS], dtype=pl.String).gather(op)

    table = pl.DataFrame(
        {
            "start_ns": start,
            "dur_ns": duration,
            "name": pick(0),
            "op_type": pick(1),
            "core": pick(2),
            "stream_id": stream_of,
            "block": np.array([o[3] for o in _OPS], dtype=np.int64)[op],
            "mix": np.array([o[4] for o in _OPS], dtype=np.int64)[op],
            "step": step,
            "is_comm": np.zeros(n, dtype=bool),
            "input_shapes": pl.repeat(None, n, dtype=pl.String, eager=True),
        },
        schema=rows.KERNEL_RAW_SCHEMA,
    )
    waits = np.arange(0, n, max(task_every, 1))
    tasks = pl.DataFrame(
        {
            "start_ns": start[waits] - 500,
            "dur_ns": np.full(waits.size, 300, dtype=np.int64),
            "kind": pl.Series(["EVENT_WAIT_SQE"]).gather(np.zeros(waits.size, dtype=np.int64)),
            "stream_id": stream_of[waits],
        },
        schema=rows.TASK_RAW_SCHEMA,
    )
    return rows.finish(table, tasks)


def big_capture(
    root: Path,
    kernels: int = 1_000_000,
    *,
    variant: Variant | None = None,
    streams: tuple[int, ...] = (2, 3),
    seed: int = 0,
) -> Path:
    """Write a result dir with ``kernels`` kernels (kernel_details.csv at Level1 by default;
    pass a variant with ``trace=True`` / ``db=True`` for those readers' benchmarks)."""
    frames = big_frames(kernels, streams=streams, seed=seed)
    ends = (frames.kernels["start_ns"] + frames.kernels["dur_ns"]).to_numpy()
    end = int(ends.max()) + 1_000_000 if ends.size else BASE_NS
    meta = Scenario(name=f"big-{kernels}", kernels=(), capture_end_ns=end, pid=3_096_504)
    chosen = variant or Variant(trace=False)
    return layout.write_frames_result_dir(meta, frames, Path(root), chosen)
