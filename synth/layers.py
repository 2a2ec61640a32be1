"""One MoE layer with a shared-expert side stream, laid out on the timeline.

Main stream: RmsNorm, router MatMul, gating, routing, [Swish / Cast], the
GroupedMatmul dominator, finalize, Add. Side stream: the shared expert (gate-up
MatMul, SwiGlu, down MatMul). ``mode`` decides where the side window falls:

- ``real``: inside the dominator (window overlap = side window length).
- ``fake``: before it; the main stream waits on an EVENT_WAIT spanning the side
  window, then a small Cast barrier starts right after the side window ends,
  then the dominator (window overlap 0).
- ``overlap``: the side window's last ``overlap_ns`` overlap the dominator.
- ``touch``: the dominator starts exactly when the side window ends.
- ``serial``: the side ops stayed on the main stream, before the dominator (not split).
- ``tail``: as ``real``, but the side ops may end after the dominator: the main stream
  waits for the side tail before it goes on (a hole after the join).

``tail_ops``: main-stream ops laid 2.04 µs after the join, before the layer's last ops
(format / fill work such as TransData or MemSet after the join).

Kernels on one stream never overlap; the layer records its windows so the
expected figures follow from the construction.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from synth.model import Kernel, Task

MAIN = 2
SIDE = 3
COMM_STREAM = 4


@dataclass(frozen=True)
class Op:
    name: str
    core: str
    duration_ns: int
    block: int
    mix: int = 0
    gap_ns: int = 2_000  # idle time after it on its stream
    input_shapes: str | None = None  # the Input Shapes text (None: the op type's default)


PRE_OPS = (
    Op("aclnnRmsNorm_RmsNorm_RmsNorm", "AI_VECTOR_CORE", 18_240, 48, gap_ns=3_120),
    Op("aclnnMatmul_MatMulV3Common_MatMulV3", "AI_CORE", 25_480, 24, gap_ns=2_260),
    Op(
        "aclnnMoeGatingTopKSoftmax_MoeGatingTopKSoftmax_MoeGatingTopKSoftmax",
        "AI_VECTOR_CORE",
        12_060,
        48,
    ),
    Op("aclnnSilu_SwishAiCore_Swish", "AI_VECTOR_CORE", 6_420, 48, gap_ns=1_880),
    Op(
        "aclnnMoeInitRouting_MoeInitRouting_MoeInitRouting",
        "AI_VECTOR_CORE",
        15_330,
        40,
        gap_ns=1_000,
    ),
)
POST_OPS = (
    Op(
        "aclnnMoeFinalizeRouting_MoeFinalizeRouting_MoeFinalizeRouting",
        "AI_VECTOR_CORE",
        14_870,
        48,
    ),
    Op("aclnnAdd_AddAiCore_Add", "AI_VECTOR_CORE", 8_110, 48, gap_ns=4_530),
)
SIDE_OPS = (
    Op("aclnnMatmul_SharedExpertGateUp_MatMulV3", "AI_CORE", 80_000, 24),
    Op("aclnnSwiGlu_SharedExpertSwiGlu_SwiGlu", "AI_VECTOR_CORE", 20_000, 48),
    Op("aclnnMatmul_SharedExpertDown_MatMulV3", "AI_CORE", 60_000, 24, gap_ns=0),
)
DOMINATOR = Op("aclnnGroupedMatmulV5_GroupedMatmul_GroupedMatmul", "MIX_AIC", 300_000, 24, 48)
CAST = Op("aclnnCast_CastAiCore_Cast", "AI_VECTOR_CORE", 4_200, 8, gap_ns=1_800)


def side_length(ops: tuple[Op, ...]) -> int:
    """Side window length: every op and the gaps between them (not after the last)."""
    return sum(op.duration_ns for op in ops) + sum(op.gap_ns for op in ops[:-1])


@dataclass
class Layer:
    kernels: list[Kernel] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    side_window: tuple[int, int] = (0, 0)
    dom_window: tuple[int, int] = (0, 0)
    window_overlap_ns: int = 0
    busy_overlap_ns: int = 0  # side kernels' time inside main-stream kernels
    end_ns: int = 0


def _jitter(duration: int, rng: random.Random | None) -> int:
    # +-8% in whole 10 ns steps, so durations stay realistic and exact
    if rng is None:
        return duration
    return duration + 10 * rng.randint(-duration // 125, duration // 125)


def _lay(
    ops: tuple[Op, ...],
    start: int,
    stream: int,
    step: int | None,
    rng: random.Random | None,
    layer: Layer,
) -> int:
    """Put ops one after another on a stream from ``start``; return the last op's end."""
    t = start
    end = start
    for op in ops:
        duration = _jitter(op.duration_ns, rng)
        layer.kernels.append(
            Kernel(
                op.name,
                stream,
                t,
                duration,
                op.core,
                block_num=op.block,
                mix_block_num=op.mix,
                step=step,
                input_shapes=op.input_shapes,
            )
        )
        end = t + duration
        t = end + op.gap_ns
    return end


def build_layer(
    t0: int,
    mode: str,
    *,
    overlap_ns: int = 0,
    step: int | None = 50,
    rng: random.Random | None = None,
    side_ops: tuple[Op, ...] = SIDE_OPS,
    dominator: Op = DOMINATOR,
    side_wait_over_dominator: bool = False,
    tail_ops: tuple[Op, ...] = (),
) -> Layer:
    layer = Layer()
    fork = _lay(PRE_OPS, t0, MAIN, step, rng, layer) + 1_000
    side_stream = MAIN if mode == "serial" else SIDE
    if mode != "serial":
        layer.tasks += [
            Task("EVENT_RECORD_SQE", MAIN, fork, 20),
            Task("EVENT_WAIT_SQE", SIDE, fork + 500, 20),
        ]
    side_len = side_length(side_ops)
    side_start = fork + 1_000
    side_end = side_start + side_len
    if mode == "serial":
        dom_start = side_end + 2_000
    elif mode in ("real", "tail"):
        dom_start = fork + 1_000
        side_start = dom_start + 2_000
        side_end = side_start + side_len
        if mode == "real" and side_end > dom_start + dominator.duration_ns:
            raise ValueError("side ops longer than the dominator cannot be fully hidden")
    elif mode == "overlap":
        if not 0 <= overlap_ns <= side_len:
            raise ValueError("overlap_ns must lie within the side window")
        dom_start = side_end - overlap_ns
    elif mode == "touch":
        layer.tasks.append(Task("EVENT_WAIT_SQE", MAIN, fork + 700, side_end - fork - 700))
        dom_start = side_end
    elif mode == "fake":
        # main waits for the side output, then the barrier, then the dominator
        layer.tasks.append(Task("EVENT_WAIT_SQE", MAIN, fork + 700, side_end + 1_000 - fork - 700))
        cast_start = side_end + 1_500
        cast_end = _lay((CAST,), cast_start, MAIN, step, None, layer)
        dom_start = cast_end + CAST.gap_ns
    else:
        raise ValueError(f"unknown layer mode {mode!r}")
    laid_end = _lay(side_ops, side_start, side_stream, step, None, layer)
    assert laid_end == side_end
    dom_end = _lay((dominator,), dom_start, MAIN, step, None, layer)
    layer.side_window = (side_start, side_end)
    layer.dom_window = (dom_start, dom_end)
    layer.window_overlap_ns = max(0, min(side_end, dom_end) - max(side_start, dom_start))
    # only the dominator runs on the main stream inside the side window (and the Cast
    # barrier, which starts after it), so busy overlap = side kernel time inside it
    side_kernels = [k for k in layer.kernels if k.stream_id == SIDE]
    layer.busy_overlap_ns = sum(
        max(0, min(k.end_ns, dom_end) - max(k.start_ns, dom_start)) for k in side_kernels
    )
    if mode != "serial":
        layer.tasks.append(Task("EVENT_RECORD_SQE", SIDE, side_end + 400, 20))
    if side_wait_over_dominator:
        # the side stream waits for the main stream's result: a long EVENT_WAIT spanning the
        # dominator, which a reader that counted tasks as kernels would take for overlap
        layer.tasks.append(
            Task("EVENT_WAIT_SQE", SIDE, side_end + 1_000, max(dom_end - side_end - 1_000, 0))
        )
    join = max(dom_end, side_end + 420)
    if mode != "serial":
        layer.tasks.append(Task("EVENT_WAIT_SQE", MAIN, dom_end, join - dom_end))
    post = join + 2_040
    if tail_ops:  # format / fill work on the main stream right after the join, unjittered
        post = _lay(tail_ops, post, MAIN, step, None, layer) + tail_ops[-1].gap_ns
    layer.end_ns = _lay(POST_OPS, post, MAIN, step, rng, layer) + POST_OPS[-1].gap_ns
    return layer
