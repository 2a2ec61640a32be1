"""The nine layouts of issue 14 where the window formula and the intent part ways.

Each layout is one capture of a few layers, laid out by hand on a 600 µs layer
period (main stream 2, side stream 3), with its true answer written from the
construction: per layer the side ops' busy time, the part under compute on
other streams and under the dominator (every number below is a sum of the
durations placed), the recipes' window ``overlap_pct``, the verdict band of
``hidden_pct``; per capture the barriers, the lag flag, the placement and the
helper streams. Layer starts are relative (``t``); absolute times add a real
epoch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from synth.construction import BASE_NS
from synth.expected import Built, Expected, verdict_of
from synth.layers import CAST, DOMINATOR, MAIN, SIDE, SIDE_OPS
from synth.model import Kernel, Scenario, Variant
from synth.older_trace import older_910a_trace

PERIOD_NS = 600_000
RMSNORM = "aclnnRmsNorm_RmsNorm_RmsNorm"
ATTENTION = "aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore"
SWISH = "aclnnSilu_SwishAiCore_Swish"
ADD = "aclnnAdd_AddAiCore_Add"
MATMUL = "aclnnMatmul_MatMulV3Common_MatMulV3"  # eager name: no module scope, both streams
SWIGLU = "aclnnSwiGlu_SwiGlu_SwiGlu"
GEN_MASK = "aclnnDropoutGenMaskV2_DropoutGenMaskV2_DSAGenBitMask"
GATE_UP, SHARED_SWIGLU, DOWN = (op.name for op in SIDE_OPS)


@dataclass(frozen=True)
class LayerAnswer:
    side_ops: int
    side_window: tuple[int, int] | None  # relative to the capture's BASE_NS
    dom_window: tuple[int, int]
    side_busy_ns: int
    hidden_ns: int
    under_dominator_ns: int
    overlap_pct: float | None  # the recipes' window figure
    join_not_waited: bool = False

    @property
    def hidden_pct(self) -> float | None:
        return None if self.side_busy_ns == 0 else self.hidden_ns / self.side_busy_ns

    @property
    def verdict(self) -> str:
        return verdict_of(self.hidden_pct)


@dataclass(frozen=True)
class Answer:
    side: str  # side regex (with side_stream 3)
    layers: tuple[LayerAnswer, ...]
    verdict: str  # the plan's verdict on hidden_pct (median, fake-share cap)
    main_waited: tuple[tuple[int, str], ...] = ()  # (layer, chain) of barrier (a)
    side_waited: tuple[tuple[int, str], ...] = ()  # (layer, producer) of barrier (b)
    lag: bool = False
    stayed: tuple[str, ...] = ()  # placement phrases
    helper_streams: tuple[int, ...] = ()
    window_verdict: str = ""  # what the window formula says (the tool's verdict today)


@dataclass(frozen=True)
class Layout:
    folder: str
    what: str
    answer: Answer | None  # None: the layout's answer is only its streams (the 910A trace)
    build: Callable[[], Built] = field(repr=False)


def _k(name: str, stream: int, t: int, start: int, end: int, core: str = "AI_CORE") -> Kernel:
    return Kernel(name, stream, BASE_NS + t + start, end - start, core, step=50)


def _capture(name: str, kernels: list[Kernel], notes: str) -> Built:
    return Built(
        (Scenario(name, tuple(kernels)),),
        Expected(plans=(), notes=notes),
        Variant(crlf=False),
    )


def _dominated(t: int, dom: tuple[int, int], join: tuple[int, int]) -> list[Kernel]:
    """RmsNorm [0, 40], the dominator, the join Add (µs x 1000 relative to t)."""
    return [
        _k(RMSNORM, MAIN, t, 0, 40_000, "AI_VECTOR_CORE"),
        _k(DOMINATOR.name, MAIN, t, *dom, "MIX_AIC"),
        _k(ADD, MAIN, t, *join, "AI_VECTOR_CORE"),
    ]


def split_side_work() -> Built:
    """Layout 1: 2 µs of side work under the dominator's start, 200 µs after its end."""
    kernels = _dominated(0, (60_000, 360_000), (562_000, 570_000))
    kernels += [
        _k(SHARED_SWIGLU, SIDE, 0, 60_000, 62_000, "AI_VECTOR_CORE"),
        _k(DOWN, SIDE, 0, 360_000, 560_000),
    ]
    return _capture("split-side-work", kernels, "hidden 2 of 202 us: fake; window 1.0")


def under_another_op() -> Built:
    """Layout 2: side work entirely under the attention kernel; the dominator follows."""
    kernels = [
        _k(RMSNORM, MAIN, 0, 0, 40_000, "AI_VECTOR_CORE"),
        _k(ATTENTION, MAIN, 0, 40_000, 240_000, "MIX_AIC"),
        _k(DOMINATOR.name, MAIN, 0, 240_000, 540_000, "MIX_AIC"),
        _k(ADD, MAIN, 0, 540_000, 548_000, "AI_VECTOR_CORE"),
        _k(GATE_UP, SIDE, 0, 55_000, 130_000),
        _k(DOWN, SIDE, 0, 132_000, 230_000),
    ]
    return _capture("under-another-op", kernels, "hidden 173 of 173 us under attention: real")


def prolog_chain() -> Built:
    """Layout 3: five 20 µs main ops, each with a 16 µs side op under it, then the dominator."""
    kernels: list[Kernel] = []
    for i in range(5):
        at = i * 21_000
        kernels.append(_k(f"aclnnPrologStep{i}_Prolog_Prolog", MAIN, 0, at, at + 20_000))
        kernels.append(_k(GATE_UP, SIDE, 0, at + 2_000, at + 18_000))
    kernels += [
        _k(DOMINATOR.name, MAIN, 0, 110_000, 410_000, "MIX_AIC"),
        _k(ADD, MAIN, 0, 410_000, 418_000, "AI_VECTOR_CORE"),
    ]
    return _capture("prolog-chain", kernels, "every side op under a prolog op: real")


def lagging_side_stream() -> Built:
    """Layout 4: each layer's side work runs under the NEXT dominator; the last after it."""
    kernels: list[Kernel] = []
    for layer in range(3):
        t = layer * 400_000
        kernels += _dominated(t, (60_000, 360_000), (362_000, 370_000))
        if layer:  # the work of layer - 1, late
            kernels += [
                _k(GATE_UP, SIDE, t, 100_000, 180_000),
                _k(DOWN, SIDE, t, 182_000, 264_000),
            ]
    kernels += [
        _k(GATE_UP, SIDE, 800_000, 380_000, 460_000),
        _k(DOWN, SIDE, 800_000, 462_000, 544_000),
    ]
    return _capture("lagging-side-stream", kernels, "side stream one layer behind: lag")


def _real_layer(t: int) -> list[Kernel]:
    return [
        *_dominated(t, (60_000, 360_000), (362_000, 370_000)),
        _k(GATE_UP, SIDE, t, 100_000, 180_000),
        _k(SHARED_SWIGLU, SIDE, t, 182_000, 202_000, "AI_VECTOR_CORE"),
        _k(DOWN, SIDE, t, 204_000, 264_000),
    ]


def _fake_layer(t: int) -> list[Kernel]:
    """Side work while the main stream idles, then Cast -> Swish, then the dominator."""
    return [
        _k(RMSNORM, MAIN, t, 0, 40_000, "AI_VECTOR_CORE"),
        _k(GATE_UP, SIDE, t, 60_000, 140_000),
        _k(SHARED_SWIGLU, SIDE, t, 142_000, 162_000, "AI_VECTOR_CORE"),
        _k(DOWN, SIDE, t, 164_000, 224_000),
        _k(CAST.name, MAIN, t, 225_500, 229_700, "AI_VECTOR_CORE"),
        _k(SWISH, MAIN, t, 229_800, 236_220, "AI_VECTOR_CORE"),
        _k(DOMINATOR.name, MAIN, t, 238_000, 538_000, "MIX_AIC"),
        _k(ADD, MAIN, t, 540_000, 548_000, "AI_VECTOR_CORE"),
    ]


def median_hides_fake() -> Built:
    """Layout 5: six layers, real and fake in turn: the median is 0.5 (real)."""
    kernels: list[Kernel] = []
    for layer in range(6):
        kernels += (_real_layer if layer % 2 == 0 else _fake_layer)(layer * PERIOD_NS)
    return _capture("median-hides-fake", kernels, "3 of 6 layers fake: at best partial")


def late_producer() -> Built:
    """Layout 6: the side work waits for a Cast GE placed after the dominator; Add joins."""
    kernels = [
        _k(RMSNORM, MAIN, 0, 0, 40_000, "AI_VECTOR_CORE"),
        _k(DOMINATOR.name, MAIN, 0, 60_000, 360_000, "MIX_AIC"),
        _k(CAST.name, MAIN, 0, 360_000, 364_200, "AI_VECTOR_CORE"),
        _k(GATE_UP, SIDE, 0, 366_000, 446_000),
        _k(SHARED_SWIGLU, SIDE, 0, 448_000, 468_000, "AI_VECTOR_CORE"),
        _k(DOWN, SIDE, 0, 470_000, 530_000),
        _k(ADD, MAIN, 0, 532_000, 540_110, "AI_VECTOR_CORE"),
    ]
    return _capture("late-producer", kernels, "side waited for Cast, not for the join Add")


def real_kernel_names() -> Built:
    """Layout 7: eager names (no module scope): MatMulV3 on both streams, SwiGlu left on main."""
    kernels: list[Kernel] = []
    for layer in range(2):
        t = layer * PERIOD_NS
        kernels += [
            _k(MATMUL, MAIN, t, 0, 40_000),
            _k(SWIGLU, MAIN, t, 41_000, 61_000, "AI_VECTOR_CORE"),
            _k(DOMINATOR.name, MAIN, t, 80_000, 380_000, "MIX_AIC"),
            _k(ADD, MAIN, t, 382_000, 390_000, "AI_VECTOR_CORE"),
            _k(MATMUL, SIDE, t, 100_000, 180_000),
            _k(MATMUL, SIDE, t, 182_000, 242_000),
        ]
    return _capture("real-kernel-names", kernels, "SwiGlu x2 stayed on stream 2")


def helper_stream() -> Built:
    """Layout 8: one compute stream; torch_npu's two 3 µs DSA_SQE masks on stream 3."""
    kernels = _dominated(0, (60_000, 360_000), (362_000, 370_000))
    kernels += [
        _k(GEN_MASK, SIDE, 0, 45_000, 48_000, "DSA_SQE"),
        _k(GEN_MASK, SIDE, 0, 50_000, 53_000, "DSA_SQE"),
    ]
    return _capture("helper-stream", kernels, "stream 3 ran only DSA_SQE: a helper stream")


SHARED = "SharedExpert"
REAL_LAYER_ANSWER = (160_000, 160_000, 160_000)  # busy 80 + 20 + 60 µs, all under D


def _real(t: int) -> LayerAnswer:
    busy, hidden, under = REAL_LAYER_ANSWER
    # window [100, 264] (164 µs) inside D [60, 360]: overlap 164 / min(164, 300)
    return LayerAnswer(
        3, (t + 100_000, t + 264_000), (t + 60_000, t + 360_000), busy, hidden, under, 1.0
    )


def _fake(t: int) -> LayerAnswer:
    # busy 80 + 20 + 60 µs, nothing else ran meanwhile; window [60, 224] ends before D [238, 538]
    return LayerAnswer(3, (t + 60_000, t + 224_000), (t + 238_000, t + 538_000), 160_000, 0, 0, 0.0)


LAYOUTS: tuple[Layout, ...] = (
    Layout(
        "split-side-work",
        "2 us of side work under the dominator start, 200 us after it (window 1.0, hidden 0.0099)",
        Answer(
            SHARED,
            # busy 2 + 200 µs; hidden = the 2 µs under D [60, 360]; window [60, 560] holds D:
            # 300 / min(500, 300)
            (LayerAnswer(2, (60_000, 560_000), (60_000, 360_000), 202_000, 2_000, 2_000, 1.0),),
            "fake",
            window_verdict="real",
        ),
        split_side_work,
    ),
    Layout(
        "under-another-op",
        "side work under the attention kernel, GroupedMatmul after it (window 0.0, hidden 1.0)",
        Answer(
            SHARED,
            # busy 75 + 98 µs, all under attention [40, 240], none under D [240, 540]
            (LayerAnswer(2, (55_000, 230_000), (240_000, 540_000), 173_000, 173_000, 0, 0.0),),
            "real",
            window_verdict="fake",
        ),
        under_another_op,
    ),
    Layout(
        "prolog-chain",
        "five small prolog ops, a side op under each (window 0.0, hidden 1.0)",
        Answer(
            SHARED,
            # 5 x 16 µs, each inside its 20 µs prolog op; window [2, 102] ends before D [110, 410]
            (LayerAnswer(5, (2_000, 102_000), (110_000, 410_000), 80_000, 80_000, 0, 0.0),),
            "real",
            window_verdict="fake",
        ),
        prolog_chain,
    ),
    Layout(
        "lagging-side-stream",
        "the side stream one layer behind (a missing wait): lag, a join that did not wait",
        Answer(
            SHARED,
            (
                # D1 [60, 360]: no side work
                LayerAnswer(0, None, (60_000, 360_000), 0, 0, 0, None),
                # under D2 [460, 760]: [500, 580] + [582, 664] = 162 µs; window 164 inside D
                LayerAnswer(
                    2, (500_000, 664_000), (460_000, 760_000), 162_000, 162_000, 162_000, 1.0
                ),
                # under D3 [860, 1160]: [900, 980] + [982, 1064]; after it [1180, 1260] +
                # [1262, 1344], after the join Add [1162, 1170] started: busy 324, hidden 162;
                # window [900, 1344] (444) vs D3 (300): overlap 260 / 300
                LayerAnswer(
                    4,
                    (900_000, 1_344_000),
                    (860_000, 1_160_000),
                    324_000,
                    162_000,
                    162_000,
                    260_000 / 300_000,
                    join_not_waited=True,
                ),
            ),
            "real",
            lag=True,
            window_verdict="real",
        ),
        lagging_side_stream,
    ),
    Layout(
        "median-hides-fake",
        "six layers, every second one fake (Cast -> Swish barrier): median 0.5, at best partial",
        Answer(
            SHARED,
            tuple((_real if k % 2 == 0 else _fake)(k * PERIOD_NS) for k in range(6)),
            "partial",
            main_waited=((2, "Cast -> Swish"), (4, "Cast -> Swish"), (6, "Cast -> Swish")),
            window_verdict="real",
        ),
        median_hides_fake,
    ),
    Layout(
        "late-producer",
        "the side work waits for a Cast GE placed after the dominator; the join is Add",
        Answer(
            SHARED,
            # busy 80 + 20 + 60 µs after D [60, 360], nothing under them; window [366, 530]
            (LayerAnswer(3, (366_000, 530_000), (60_000, 360_000), 160_000, 0, 0, 0.0),),
            "fake",
            side_waited=((1, "Cast"),),  # the side window starts 1.8 µs after Cast ends
            window_verdict="fake",
        ),
        late_producer,
    ),
    Layout(
        "real-kernel-names",
        "eager names: MatMulV3 on both streams, SwiGlu left on the main stream",
        Answer(
            "MatMulV3|SwiGlu",
            # per layer: side [100, 180] + [182, 242] = 140 µs inside D [80, 380]
            tuple(
                LayerAnswer(
                    2,
                    (t + 100_000, t + 242_000),
                    (t + 80_000, t + 380_000),
                    140_000,
                    140_000,
                    140_000,
                    1.0,
                )
                for t in (0, PERIOD_NS)
            ),
            "not-split",  # all SwiGlu stayed (none moved); the MatMulV3 that moved is real
            stayed=("MatMulV3 x2 on stream 2", "SwiGlu x2 on stream 2"),
            window_verdict="real",
        ),
        real_kernel_names,
    ),
    Layout(
        "helper-stream",
        "a single compute stream; two 3 us DSA_SQE masks on stream 3 (a helper, not judged)",
        Answer(
            SHARED,
            (LayerAnswer(0, None, (60_000, 360_000), 0, 0, 0, None),),
            "no-evidence",
            helper_streams=(3,),
        ),
        helper_stream,
    ),
    Layout(
        "older-910a-trace",
        "a bare 910A trace: Task Type Other for kernels and tasks alike",
        None,
        older_910a_trace,
    ),
)


def layout(folder: str) -> Layout:
    for item in LAYOUTS:
        if item.folder == folder:
            return item
    raise KeyError(folder)
