"""Scenarios of issue 16 (docs/gain.md): did the multi-stream change make the step faster?

- ``slower_multi_stream``: the side ops run inside the dominator on stream 3 (real
  overlap), but contention stretched the GroupedMatmul from 300 to 480 µs. Its layer
  wall is the dominator, 480 µs.
- ``slower_single_stream``: the same workload on one stream, its reference: the side ops
  (164 µs window) then, 2 µs later, the 300 µs dominator: a 466 µs layer wall. Both use
  the same seed, so the jittered ops around the plan are the same and each layer of the
  multi-stream run ends 480 - 466 = 14 µs later: the step is slower, the gain negative.
- ``join_wait``: the side ops (364.54 µs window) start 2 µs after the dominator (300 µs)
  and end 66.54 µs after it; the main stream resumes 0.42 + 2.04 µs after the side end
  (synth.layers: the join, then the next op), so it waits 66.54 + 2.46 = 69 µs per layer.
- ``tail_ops``: real overlap, then on the main stream 2.04 µs after the join a TransData
  (12.4 µs), 2 µs later a MemSet (3.2 µs), then the layer's last ops: per layer one of
  each, 12.4 + 3.2 = 15.6 µs of tail operators.
- ``shapes_multi_stream`` / ``shapes_single_stream``: the real split against its
  single-stream reference, but the multi-stream capture's GroupedMatmul ran on 4096
  tokens (Input Shapes ``4096,7168;8,7168,4096;;;;;;8``) and the reference's on 2048 (the
  default ``2048,7168;8,7168,4096;;;;;;8``): not like-for-like.
"""

from __future__ import annotations

from dataclasses import replace

from synth.construction import assemble, build_run, same
from synth.expected import Built
from synth.layers import DOMINATOR, SIDE_OPS, Op

STRETCHED = replace(DOMINATOR, duration_ns=480_000)
# the shared expert on longer tokens: 180 + 2 + 40 + 2 + 140.54 = 364.54 µs of side window
LONG_SIDE_OPS: tuple[Op, ...] = (
    replace(SIDE_OPS[0], duration_ns=180_000),
    replace(SIDE_OPS[1], duration_ns=40_000),
    replace(SIDE_OPS[2], duration_ns=140_540),
)
GAIN_SEED = 16
TAIL_OPS: tuple[Op, ...] = (
    Op("trans_TransData_41", "AI_VECTOR_CORE", 12_400, 48),
    Op("aclnnInplaceZero_MemSet_MemSet", "AI_VECTOR_CORE", 3_200, 8),
)
# the profiler writes Input Shapes quoted, as the default ones in synth.kernel_csv
WIDER = replace(DOMINATOR, input_shapes='"4096,7168;8,7168,4096;;;;;;8"')


def slower_multi_stream(runs: int = 5, layers: int = 4, seed: int = GAIN_SEED) -> Built:
    made = [
        build_run(
            "slower-multi-stream", same("real", layers), run=r, seed=seed, dominator=STRETCHED
        )
        for r in range(runs)
    ]
    return assemble(
        {0: made},
        notes="real overlap, dominator 480 us (300 us in slower-single-stream): layer wall "
        "480 us vs 466 us, each layer 14 us slower",
    )


def slower_single_stream(runs: int = 5, layers: int = 4, seed: int = GAIN_SEED) -> Built:
    made = [
        build_run("slower-single-stream", same("serial", layers), run=r, seed=seed)
        for r in range(runs)
    ]
    return assemble(
        {0: made},
        not_split=True,
        notes="the single-stream reference of slower-multi-stream: layer wall "
        "164 + 2 + 300 = 466 us",
    )


def join_wait(runs: int = 5, layers: int = 4, seed: int = GAIN_SEED + 1) -> Built:
    made = [
        build_run("join-wait", same("tail", layers), run=r, seed=seed, side_ops=LONG_SIDE_OPS)
        for r in range(runs)
    ]
    return assemble(
        {0: made},
        notes="side work ends 66.54 us after the dominator; the main stream waits 69 us per layer",
    )


def tail_ops(runs: int = 5, layers: int = 4, seed: int = GAIN_SEED + 2) -> Built:
    made = [
        build_run("tail-ops", same("real", layers), run=r, seed=seed, tail_ops=TAIL_OPS)
        for r in range(runs)
    ]
    return assemble(
        {0: made},
        notes="real overlap; after the join a TransData (12.4 us) and a MemSet (3.2 us) on "
        "the main stream each layer",
    )


def shapes_multi_stream(runs: int = 5, layers: int = 4, seed: int = GAIN_SEED + 3) -> Built:
    made = [
        build_run("shapes-multi-stream", same("real", layers), run=r, seed=seed, dominator=WIDER)
        for r in range(runs)
    ]
    return assemble(
        {0: made},
        notes="real overlap; the GroupedMatmul's Input Shapes are 4096,7168;... (2048,7168;... "
        "in shapes-single-stream)",
    )


def shapes_single_stream(runs: int = 5, layers: int = 4, seed: int = GAIN_SEED + 3) -> Built:
    made = [
        build_run("shapes-single-stream", same("serial", layers), run=r, seed=seed)
        for r in range(runs)
    ]
    return assemble(
        {0: made},
        not_split=True,
        notes="the single-stream reference of shapes-multi-stream, on 2048 tokens",
    )
