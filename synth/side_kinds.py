"""Plans whose side work is communication or copies (issue 15): a hidden and an exposed
capture of each of three inference patterns, with answers from the construction.

- AFD (attention-FFN disaggregation): each layer sends its activations
  (``hcom_send``) while attention still runs, or only after it (exposed).
- Prefill micro-batches: the dispatch / combine all-to-all (``hcom_alltoAllV``) of one
  micro-batch runs under the other micro-batch's ``GroupedMatmul``, or between them.
- KV-cache offload: MEMCPY_ASYNC / SDMA copies on copy stream 5 run under attention
  and the MLP, or while the main stream waits for them.

One capture each (step 50), main stream 2; layer starts are relative to BASE_NS and
every figure below is a sum of durations placed here. ``hidden_pct`` = side time under
compute on another stream / side time (docs/hidden-fraction.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from overlap_check.model import SideKind
from synth.construction import BASE_NS
from synth.expected import Built, Expected
from synth.layers import DOMINATOR, MAIN
from synth.model import CommOp, Kernel, Scenario, Task, Variant

LAYERS = 3
STEP = 50
COPY_STREAM = 5
ATTENTION = "aclnnFusedInferAttentionScore_FusedInferAttentionScore_FusedInferAttentionScore"
NORM = "aclnnRmsNorm_RmsNorm_RmsNorm"
MLP = "aclnnMatmul_MatMulV3Common_MatMulV3"
ADD = "aclnnAdd_AddAiCore_Add"
SEND = "hcom_send__{layer}_0_1"
ALL_TO_ALL = "hcom_alltoAllV__{layer}_{part}_1"


@dataclass(frozen=True)
class SideKindAnswer:
    """A plan and its known per-layer answer (every layer alike)."""

    plan: str
    side_kind: SideKind
    side: str | None
    side_stream: int | None
    dominator: str | None
    # per judged occurrence of a layer: (side busy ns, of which under compute elsewhere)
    per_layer: tuple[tuple[int, int], ...]
    judged: int  # judged occurrences per capture
    verdict: str

    @property
    def hidden_pct(self) -> float:
        """The warm median: the capture's one run, the median over its occurrences."""
        return statistics.median(hidden / busy for busy, hidden in self.per_layer)

    def cli(self) -> list[str]:
        """The plan as command-line options."""
        args = ["--name", self.plan, "--side-kind", self.side_kind]
        if self.side is not None:
            args += ["--side", self.side]
        if self.side_stream is not None:
            args += ["--side-stream", str(self.side_stream)]
        if self.dominator is not None:
            args += ["--dominator", self.dominator]
        return args


@dataclass(frozen=True)
class SideKindCase:
    folder: str
    what: str
    answer: SideKindAnswer
    make: Callable[[], Built] = field(repr=False)

    def build(self) -> Built:
        """The capture, its notes stating the plan and its answer (fixtures/README.md)."""
        built = self.make()
        a = self.answer
        plan = " ".join(self.answer.cli())
        notes = (
            f"{built.expected.notes}; `{plan}`: hidden_pct **{a.hidden_pct:.4g}**, "
            f"**{a.verdict}**, {a.judged} judged occurrences"
        )
        return replace(built, expected=replace(built.expected, notes=notes))


def _k(name: str, t: int, start: int, end: int, core: str = "AI_CORE") -> Kernel:
    return Kernel(name, MAIN, BASE_NS + t + start, end - start, core, step=STEP)


def _comm(name: str, t: int, start: int, end: int) -> CommOp:
    return CommOp(name, BASE_NS + t + start, end - start, step=STEP)


def _copy(kind: str, t: int, start: int, end: int) -> Task:
    return Task(kind, COPY_STREAM, BASE_NS + t + start, end - start)


def _built(
    name: str,
    kernels: list[Kernel],
    notes: str,
    comm: list[CommOp] | None = None,
    tasks: list[Task] | None = None,
    variant: Variant | None = None,
) -> Built:
    scenario = Scenario(name, tuple(kernels), tuple(comm or ()), tuple(tasks or ()))
    return Built((scenario,), Expected(plans=(), notes=notes), variant or Variant(crlf=False))


def afd(hidden: bool) -> Built:
    """Per 600 µs layer: attention [0, 300], the send, then the norm that waits for it.

    Hidden: send [100, 320], 200 of its 220 µs under attention. Exposed: send
    [295, 495], 5 of 200 µs under attention; the norm waits until 500.
    """
    kernels: list[Kernel] = []
    comm: list[CommOp] = []
    for layer in range(LAYERS):
        t = layer * 600_000
        send = (100_000, 320_000) if hidden else (295_000, 495_000)
        norm = (330_000, 400_000) if hidden else (500_000, 570_000)
        kernels += [_k(ATTENTION, t, 0, 300_000, "MIX_AIC"), _k(NORM, t, *norm, "AI_VECTOR_CORE")]
        comm.append(_comm(SEND.format(layer=layer), t, *send))
    which = "hidden 200 of 220 us" if hidden else "hidden 5 of 200 us"
    return _built(f"afd-{'hidden' if hidden else 'exposed'}", kernels, which, comm=comm)


def micro_batch(hidden: bool) -> Built:
    """Two micro-batches per layer, each a GroupedMatmul on the main stream.

    Hidden (700 µs layer): GroupedMatmul [0, 300] and [320, 620]; micro-batch 1's
    dispatch [100, 340] (200 µs under the first, 20 under the second of its 240) and
    micro-batch 0's combine [330, 530] (200 of 200 under the second). Exposed (1100 µs
    layer): GroupedMatmul [0, 300] and [520, 820]; dispatch [300, 520] and combine
    [820, 1040] run while the main stream idles.
    """
    kernels: list[Kernel] = []
    comm: list[CommOp] = []
    period = 700_000 if hidden else 1_100_000
    for layer in range(LAYERS):
        t = layer * period
        if hidden:
            gmm, a2a = ((0, 300_000), (320_000, 620_000)), ((100_000, 340_000), (330_000, 530_000))
        else:
            gmm, a2a = (
                ((0, 300_000), (520_000, 820_000)),
                ((300_000, 520_000), (820_000, 1_040_000)),
            )
        kernels += [_k(DOMINATOR.name, t, *window, "MIX_AIC") for window in gmm]
        comm += [
            _comm(ALL_TO_ALL.format(layer=layer, part=part), t, *window)
            for part, window in enumerate(a2a)
        ]
    which = "hidden 420 of 440 us a layer" if hidden else "hidden 0 of 440 us a layer"
    return _built(f"micro-batch-{'hidden' if hidden else 'exposed'}", kernels, which, comm=comm)


def kv_offload(hidden: bool) -> Built:
    """KV-cache copies on stream 5 (MEMCPY_ASYNC, SDMA_SQE); read from trace_view.json.

    Hidden (700 µs layer): attention [0, 300], MLP [310, 560], Add [600, 640]; copies
    [50, 250] (all 200 µs under attention) and [500, 600] (60 µs under the MLP).
    Exposed (900 µs layer): attention [0, 300], the copy [300, 500] while the main
    stream waits, MLP [500, 750], Add [760, 800].
    """
    kernels: list[Kernel] = []
    tasks: list[Task] = []
    period = 700_000 if hidden else 900_000
    for layer in range(LAYERS):
        t = layer * period
        if hidden:
            windows = ((0, 300_000), (310_000, 560_000), (600_000, 640_000))
            tasks += [
                _copy("MEMCPY_ASYNC", t, 50_000, 250_000),
                _copy("SDMA_SQE", t, 500_000, 600_000),
            ]
        else:
            windows = ((0, 300_000), (500_000, 750_000), (760_000, 800_000))
            tasks.append(_copy("MEMCPY_ASYNC", t, 300_000, 500_000))
        cores = ("MIX_AIC", "AI_CORE", "AI_VECTOR_CORE")
        kernels += [
            _k(name, t, *window, core)
            for name, window, core in zip((ATTENTION, MLP, ADD), windows, cores, strict=True)
        ]
    which = "hidden 260 of 300 us a layer" if hidden else "hidden 0 of 200 us a layer"
    # level1 kernel_details.csv lists no copy task: the trace is the capture's only file
    variant = Variant(crlf=False, kernel_details=False)
    return _built(
        f"kv-offload-{'hidden' if hidden else 'exposed'}",
        kernels,
        which,
        tasks=tasks,
        variant=variant,
    )


def _answer(
    plan: str,
    kind: SideKind,
    per_layer: tuple[tuple[int, int], ...],
    verdict: str,
    *,
    side: str | None = None,
    side_stream: int | None = None,
    dominator: str | None = None,
    judged: int = LAYERS,
) -> SideKindAnswer:
    return SideKindAnswer(plan, kind, side, side_stream, dominator, per_layer, judged, verdict)


AFD = "afd-send"
MICRO_BATCH = "micro-batch-all-to-all"
KV_OFFLOAD = "kv-offload"
CASES: tuple[SideKindCase, ...] = (
    SideKindCase(
        "afd-hidden",
        "AFD: each layer's hcom_send under attention (200 of 220 us hidden)",
        _answer(AFD, "communication", ((220_000, 200_000),), "real", side="hcom_send"),
        lambda: afd(True),
    ),
    SideKindCase(
        "afd-exposed",
        "AFD: each layer's hcom_send after attention (5 of 200 us hidden)",
        _answer(AFD, "communication", ((200_000, 5_000),), "fake", side="hcom_send"),
        lambda: afd(False),
    ),
    SideKindCase(
        "micro-batch-hidden",
        "prefill micro-batches: dispatch/combine all-to-all under the other micro-batch's "
        "GroupedMatmul",
        # per layer: the dispatch, 220 of 240 us hidden; the combine, 200 of 200
        _answer(
            MICRO_BATCH,
            "communication",
            ((240_000, 220_000), (200_000, 200_000)),
            "real",
            side="hcom_alltoAllV",
            dominator="GroupedMatmul",
            judged=2 * LAYERS,
        ),
        lambda: micro_batch(True),
    ),
    SideKindCase(
        "micro-batch-exposed",
        "prefill micro-batches: dispatch/combine all-to-all between the GroupedMatmuls",
        _answer(
            MICRO_BATCH,
            "communication",
            ((220_000, 0), (220_000, 0)),
            "fake",
            side="hcom_alltoAllV",
            dominator="GroupedMatmul",
            # both all-to-alls of a layer belong to its second GroupedMatmul (the dispatch
            # touches both, a tie goes to the later; the combine starts at its end): one
            # occurrence a layer
            judged=LAYERS,
        ),
        lambda: micro_batch(False),
    ),
    SideKindCase(
        "kv-offload-hidden",
        "KV-cache offload: copies on stream 5 under attention and the MLP (trace only)",
        _answer(KV_OFFLOAD, "copy", ((300_000, 260_000),), "real", side_stream=COPY_STREAM),
        lambda: kv_offload(True),
    ),
    SideKindCase(
        "kv-offload-exposed",
        "KV-cache offload: the copy on stream 5 while the main stream waits (trace only)",
        _answer(KV_OFFLOAD, "copy", ((200_000, 0),), "fake", side_stream=COPY_STREAM),
        lambda: kv_offload(False),
    ),
)


def case(folder: str) -> SideKindCase:
    """The case written to ``fixtures/<folder>``."""
    for item in CASES:
        if item.folder == folder:
            return item
    raise KeyError(folder)
