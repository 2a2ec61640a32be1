"""Issue 23's layouts: side work hidden from the main path, or only from a sibling.

One capture each (step 50), main stream 2, a 600 µs layer period unless said; times
are µs x 1000 relative to the layer start, and every answer in the tests is a sum of
the durations placed here (tests/test_main_path.py).

- ``indexer-three-streams`` (the indexer / prolog recipe, three streams): the indexer's
  q path on stream 3 [41, 124] and its weights on stream 4 [42, 122] overlap only each
  other while the main stream idles from RmsNorm's end (40) to the indexer (125).
- ``shared-expert-under-dispatch`` (MoE shared experts with EP): the shared expert on
  stream 3, gate-up [30, 118] under the dispatch all-to-all [20, 120] (HCCL), down
  [122, 202] under the GroupedMatmul [120, 320].
- ``touching-layers`` (MoE shared experts): each layer's shared-expert ops touch the
  dominator: gate-up ends where the GroupedMatmul starts, the down projection starts
  where it ends; the main stream waits 51 µs for the gate-up before the GroupedMatmul.
- ``two-batch-overlap`` (prefill micro-batch dispatch / combine, no dominator named):
  per 700 µs layer two GroupedMatmuls [0, 300] and [320, 620]; micro-batch 1's dispatch
  [100, 340] and micro-batch 0's combine [330, 530] run under them.
- ``shared-matmul-names`` (MoE shared experts, eager names): the main path's o_proj and
  router are ``MatMulV3`` too; every shared-expert op (two MatMulV3 and a SwiGlu) ran
  on stream 3.
"""

from __future__ import annotations

from collections.abc import Callable

from synth.expected import Built
from synth.hiding_layouts import ADD, MATMUL, RMSNORM, SWIGLU, _capture, _k
from synth.layers import DOMINATOR, MAIN, SIDE
from synth.model import CommOp, Kernel
from synth.side_kinds import _built, _comm

LAYERS = 3
PERIOD_NS = 600_000
WEIGHTS = 4  # the indexer's weights stream
INDEXER = "aclnnLightningIndexer_LightningIndexer_LightningIndexer"
Q_PATH = "aclnnIndexerQProj_MatMulV3Common_MatMulV3"
WEIGHTS_OP = "aclnnIndexerWeights_BatchMatMulV2_BatchMatMulV2"
GATE_UP = "aclnnSharedExpertGateUp_MatMulV3Common_MatMulV3"
DOWN = "aclnnSharedExpertDown_MatMulV3Common_MatMulV3"
DISPATCH = "hcom_alltoAllV__{layer}_0_1"
COMBINE = "hcom_alltoAllV__{layer}_1_1"


def indexer_three_streams() -> Built:
    kernels: list[Kernel] = []
    for layer in range(LAYERS):
        t = layer * PERIOD_NS
        kernels += [
            _k(RMSNORM, MAIN, t, 0, 40_000, "AI_VECTOR_CORE"),
            _k(Q_PATH, SIDE, t, 41_000, 124_000),
            _k(WEIGHTS_OP, WEIGHTS, t, 42_000, 122_000),
            _k(INDEXER, MAIN, t, 125_000, 425_000, "MIX_AIC"),
            _k(ADD, MAIN, t, 427_000, 435_000, "AI_VECTOR_CORE"),
        ]
    return _capture(
        "indexer-three-streams",
        kernels,
        "`--side-stream 3 --dominator LightningIndexer --main-stream 2`: hidden_pct **0** (0 of "
        "83 us a layer), **fake**; finding: streams 3 and 4 overlapped each other while the "
        "main stream idled 83 us a layer",
    )


def shared_expert_under_dispatch() -> Built:
    kernels: list[Kernel] = []
    comm: list[CommOp] = []
    for layer in range(LAYERS):
        t = layer * PERIOD_NS
        kernels += [
            _k(RMSNORM, MAIN, t, 0, 18_000, "AI_VECTOR_CORE"),
            _k(GATE_UP, SIDE, t, 30_000, 118_000),
            _k(DOMINATOR.name, MAIN, t, 120_000, 320_000, "MIX_AIC"),
            _k(DOWN, SIDE, t, 122_000, 202_000),
            _k(ADD, MAIN, t, 402_000, 410_000, "AI_VECTOR_CORE"),
        ]
        comm += [
            _comm(DISPATCH.format(layer=layer), t, 20_000, 120_000),
            _comm(COMBINE.format(layer=layer), t, 320_000, 400_000),
        ]
    notes = (
        "`--side SharedExpert --dominator GroupedMatmul`: hidden_pct **1** ((88 + 80) of "
        "168 us a layer), **real**, overlap_pct 82 / 172 = 0.477"
    )
    return _built("shared-expert-under-dispatch", kernels, notes, comm=comm)


def touching_layers() -> Built:
    kernels: list[Kernel] = []
    for layer in range(LAYERS):
        t = layer * PERIOD_NS
        kernels += [
            _k(RMSNORM, MAIN, t, 0, 40_000, "AI_VECTOR_CORE"),
            _k(GATE_UP, SIDE, t, 41_000, 91_000),
            _k(DOMINATOR.name, MAIN, t, 91_000, 391_000, "MIX_AIC"),
            _k(DOWN, SIDE, t, 391_000, 471_000),
            _k(ADD, MAIN, t, 473_000, 481_000, "AI_VECTOR_CORE"),
        ]
    notes = (
        "`--side SharedExpert --dominator GroupedMatmul`: per layer side window [41, 471] us, "
        "overlap_pct 300 / 300 = **1**, hidden_pct **0**, **fake**; barrier: the "
        "GroupedMatmul waited 51 us; join wait 82 us"
    )
    return _capture("touching-layers", kernels, notes)


def two_batch_overlap() -> Built:
    kernels: list[Kernel] = []
    comm: list[CommOp] = []
    for layer in range(LAYERS):
        t = layer * 700_000
        kernels += [
            _k(DOMINATOR.name, MAIN, t, 0, 300_000, "MIX_AIC"),
            _k(DOMINATOR.name, MAIN, t, 320_000, 620_000, "MIX_AIC"),
        ]
        comm += [
            _comm(DISPATCH.format(layer=layer), t, 100_000, 340_000),
            _comm(COMBINE.format(layer=layer), t, 330_000, 530_000),
        ]
    notes = (
        "`--side-kind communication --side hcom_alltoAllV`: 6 occurrences (2 a layer), "
        "hidden_pct **0.9583** ((220 / 240 + 200 / 200) / 2), **real**, no join finding"
    )
    return _built("two-batch-overlap", kernels, notes, comm=comm)


def shared_matmul_names() -> Built:
    kernels: list[Kernel] = []
    for layer in range(LAYERS):
        t = layer * PERIOD_NS
        kernels += [
            _k(MATMUL, MAIN, t, 0, 30_000),  # o_proj
            _k(MATMUL, MAIN, t, 31_000, 41_000),  # router
            _k(DOMINATOR.name, MAIN, t, 60_000, 360_000, "MIX_AIC"),
            _k(ADD, MAIN, t, 362_000, 370_000, "AI_VECTOR_CORE"),
            _k(MATMUL, SIDE, t, 100_000, 180_000),  # shared expert gate-up
            _k(SWIGLU, SIDE, t, 181_000, 201_000, "AI_VECTOR_CORE"),
            _k(MATMUL, SIDE, t, 202_000, 262_000),  # shared expert down
        ]
    notes = (
        "`--side 'MatMulV3|SwiGlu' --side-stream 3 --dominator GroupedMatmul`: **real**, "
        "hidden_pct **1**, nothing named as stayed"
    )
    return _capture("shared-matmul-names", kernels, notes)


def names_multi_stream() -> Built:
    """MoE shared experts, eager names, with --reference: per 600 µs layer o_proj [0, 30]
    and router [31, 41] (MatMulV3), the GroupedMatmul [60, 360], the shared expert on
    stream 3 (gate-up [200, 280], SwiGlu [281, 301], down [302, 419]), and the join Add
    [421, 429], which waits 421 - 360 = 61 µs for the side tail."""
    kernels: list[Kernel] = []
    for layer in range(LAYERS):
        t = layer * PERIOD_NS
        kernels += [
            _k(MATMUL, MAIN, t, 0, 30_000),
            _k(MATMUL, MAIN, t, 31_000, 41_000),
            _k(DOMINATOR.name, MAIN, t, 60_000, 360_000, "MIX_AIC"),
            _k(MATMUL, SIDE, t, 200_000, 280_000),
            _k(SWIGLU, SIDE, t, 281_000, 301_000, "AI_VECTOR_CORE"),
            _k(MATMUL, SIDE, t, 302_000, 419_000),
            _k(ADD, MAIN, t, 421_000, 429_000, "AI_VECTOR_CORE"),
        ]
    notes = (
        "`--reference fixtures/names-single-stream --side-stream 3 --dominator "
        "GroupedMatmul`: layer wall 650 -> 600 us, join wait 61 us a layer"
    )
    return _capture("names-multi-stream", kernels, notes)


def names_single_stream() -> Built:
    """The single-stream reference of :func:`names_multi_stream`, a 650 µs layer: o_proj,
    router and the GroupedMatmul as there, then the shared expert inline (gate-up
    [362, 442], SwiGlu [443, 463], down [464, 581]) and the Add [583, 591]."""
    kernels: list[Kernel] = []
    for layer in range(LAYERS):
        t = layer * 650_000
        kernels += [
            _k(MATMUL, MAIN, t, 0, 30_000),
            _k(MATMUL, MAIN, t, 31_000, 41_000),
            _k(DOMINATOR.name, MAIN, t, 60_000, 360_000, "MIX_AIC"),
            _k(MATMUL, MAIN, t, 362_000, 442_000),
            _k(SWIGLU, MAIN, t, 443_000, 463_000, "AI_VECTOR_CORE"),
            _k(MATMUL, MAIN, t, 464_000, 581_000),
            _k(ADD, MAIN, t, 583_000, 591_000, "AI_VECTOR_CORE"),
        ]
    notes = "layer wall 650 us; with `--side 'MatMulV3|SwiGlu'` its join wait is 6 us"
    return _capture("names-single-stream", kernels, notes)


# fixtures/<folder>: (folder, what, build); the answers are in tests/test_main_path.py
LAYOUTS: tuple[tuple[str, str, Callable[[], Built]], ...] = (
    (
        "indexer-three-streams",
        "indexer q path on stream 3 and weights on stream 4 overlap only each other while "
        "the main stream idles: fake, a finding names the two streams",
        indexer_three_streams,
    ),
    (
        "shared-expert-under-dispatch",
        "the shared expert on stream 3 under the dispatch all-to-all (HCCL) and the "
        "GroupedMatmul: 168 of 168 us hidden, real",
        shared_expert_under_dispatch,
    ),
    (
        "touching-layers",
        "shared-expert ops touch the GroupedMatmul: layers keep their tail, the dominator "
        "waited 51 us",
        touching_layers,
    ),
    (
        "two-batch-overlap",
        "dispatch / combine all-to-all under the other micro-batch's GroupedMatmul, no "
        "dominator named: 6 occurrences, no join",
        two_batch_overlap,
    ),
    (
        "shared-matmul-names",
        "the main path's o_proj and router are MatMulV3 like the shared expert's: nothing stayed",
        shared_matmul_names,
    ),
    (
        "names-multi-stream",
        "eager names, a 61 us hole after the join; its reference is names-single-stream",
        names_multi_stream,
    ),
    (
        "names-single-stream",
        "the single-stream reference of names-multi-stream: the shared expert inline",
        names_single_stream,
    ),
)
