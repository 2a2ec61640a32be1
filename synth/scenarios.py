"""Built-in scenarios whose answers are known by construction.

Each function returns :class:`Built` (runs + :class:`Expected`). Plan used by all:
``moe-shared-expert``: side ``SharedExpert`` on stream 3, dominator ``GroupedMatmul``
on stream 2. A run is a few MoE layers (:mod:`layers`), one plan occurrence per
layer, with PROFILING_ENABLE/DISABLE on stream 0 and, for multi-rank jobs, an
allreduce with its notify/SDMA tasks on stream 4.

Window figures per layer: ``overlap / min(side_len, dom_len)`` with side_len =
164 µs (80 + 2 + 20 + 2 + 60) and dom_len = 300 µs, so e.g. partial 0.25 puts the
last 41 µs of the side window under the dominator.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace

from synth.construction import (
    BASE_NS,
    LAYER_GAP_NS,
    RUN_SPACING_NS,
    LayerSpec,
    Run,
    assemble,
    build_run,
    same,
)
from synth.expected import (
    Built,
    Expected,
    ExpectedContention,
    ExpectedViolation,
    verdict_of,
    warm_median,
)
from synth.layers import (
    DOMINATOR,
    SIDE,
    SIDE_OPS,
    Layer,
    Op,
    build_layer,
    side_length,
)
from synth.model import Kernel, Scenario, Variant

# ------------------------------------------------------------------ public scenarios


def real_dual_stream(runs: int = 5, layers: int = 4, seed: int = 1) -> Built:
    """Side ops fully inside the dominator on another stream: overlap_pct 1.0, real."""
    made = [
        build_run("real-dual-stream", same("real", layers), run=r, seed=seed) for r in range(runs)
    ]
    return assemble(
        {0: made}, notes="window overlap = side window (164 us) inside the 300 us dominator"
    )


def fake_dual_stream(runs: int = 5, layers: int = 4, seed: int = 2) -> Built:
    """Side ops run while the main stream idles on an EVENT_WAIT; a Cast barrier starts right
    after the side window, then the dominator: overlap_pct 0.0, fake, barrier Cast."""
    made = [
        build_run("fake-dual-stream", same("fake", layers), run=r, seed=seed) for r in range(runs)
    ]
    return assemble(
        {0: made},
        barrier={0: True},
        notes="Cast starts 1.5 us after the side window ends; dominator 1.8 us after Cast",
    )


def partial_dual_stream(
    fraction: float = 0.25, runs: int = 5, layers: int = 4, seed: int = 3
) -> Built:
    """The side window's last ``fraction`` x 164 us lie under the dominator."""
    side_len = side_length(SIDE_OPS)
    overlap = round(fraction * side_len)
    if overlap / side_len != fraction:
        raise ValueError(f"fraction {fraction} x {side_len} ns is not a whole number of ns")
    made = [
        build_run("partial-dual-stream", same("overlap", layers, overlap), run=r, seed=seed)
        for r in range(runs)
    ]
    return assemble({0: made}, notes=f"overlap {overlap} ns of a {side_len} ns side window")


def layered_model(layers: int = 60, fake: bool = False, runs: int = 5, seed: int = 4) -> Built:
    """``layers`` repeated MoE layers, one plan occurrence per layer."""
    mode = "fake" if fake else "real"
    made = [
        build_run(f"layered-model-{mode}", same(mode, layers), run=r, seed=seed)
        for r in range(runs)
    ]
    return assemble({0: made}, barrier={0: fake})


def warm_cold_runs(runs: int = 5, cold: int = 2, layers: int = 4, seed: int = 5) -> Built:
    """Cold runs are fake (0.0); warm runs ~0.9 (real). With the cold runs kept the median
    drops into another band: the first warm run is still settling at 0.45 (as many such
    runs as it takes to flip the all-runs median; one for 5 runs / 2 cold)."""
    side_len = side_length(SIDE_OPS)
    warm = runs - cold
    settling = 0
    for k in range(warm):
        figures = [0.0] * cold + [0.45] * k + [0.9] * (warm - k)
        if verdict_of(statistics.median(figures)) != verdict_of(warm_median(figures, cold)):
            settling = k
            break
    specs: list[list[LayerSpec]] = []
    for r in range(runs):
        if r < cold:
            specs.append(same("fake", layers))
        elif r < cold + settling:
            specs.append(same("overlap", layers, round(0.45 * side_len)))
        else:
            specs.append(same("overlap", layers, round(0.9 * side_len)))
    made = [build_run("warm-cold-runs", spec, run=r, seed=seed) for r, spec in enumerate(specs)]
    return assemble(
        {0: made},
        warmup=cold,
        notes=f"per-run figures: {cold} cold runs 0.0, {settling} settling 0.45, rest 0.9; "
        f"expected figure discards {cold} runs",
    )


def two_rank_job(runs: int = 5, layers: int = 4, seed: int = 6) -> Built:
    """Rank 0 real, rank 1 fake (barrier Cast); 5 runs each; an allreduce per run."""
    by_rank = {
        rank: [
            build_run("two-rank-job", same(mode, layers), run=r, rank=rank, seed=seed, comm=True)
            for r in range(runs)
        ]
        for rank, mode in ((0, "real"), (1, "fake"))
    }
    return assemble(
        by_rank, barrier={1: True}, notes="rank 0 real (1.0), rank 1 fake (0.0); device = rank"
    )


def level0_event_wait(runs: int = 5, layers: int = 4, seed: int = 7) -> Built:
    """Level0 capture (streams only in trace_view.json): a fake layout where an EVENT_WAIT on
    the side stream spans the dominator. Counting that task as work would fake overlap."""
    made = [
        build_run("level0-event-wait", same("fake", layers), run=r, seed=seed, side_wait=True)
        for r in range(runs)
    ]
    return assemble(
        {0: made},
        barrier={0: True},
        variant=Variant(level="Level0"),
        notes="true answer fake: stream 3's EVENT_WAIT_SQE over the dominator is not compute",
    )


TOUCH_SIDE_OPS = (*SIDE_OPS[:-1], replace(SIDE_OPS[-1], duration_ns=60_130))


def float_would_overlap(
    side_last_start_ns: int, side_last_duration_ns: int, dom_start_ns: int
) -> bool:
    """Whether float64 parsing of the µs text would put the side end after the dominator start."""
    from synth.fmt import us3, us_repr

    end = float(us3(side_last_start_ns)) + float(us_repr(side_last_duration_ns))
    return end > float(us3(dom_start_ns))


def touching_windows(runs: int = 5, layers: int = 4, seed: int = 8) -> Built:
    """The side window ends exactly where the dominator starts (overlap 0, fake), at epochs
    where float64 parsing of the text invents an overlap; exact ns parsing gives 0."""
    made = []
    for r in range(runs):
        t = BASE_NS + r * RUN_SPACING_NS
        run_layers: list[Layer] = []
        for _ in range(layers):
            for shift in range(0, 1000):
                layer = build_layer(t + shift, "touch", side_ops=TOUCH_SIDE_OPS, rng=None)
                last = max(
                    (k for k in layer.kernels if k.stream_id == SIDE), key=lambda k: k.start_ns
                )
                if float_would_overlap(last.start_ns, last.duration_ns, layer.dom_window[0]):
                    break
            else:
                raise AssertionError("no epoch found where float parsing overlaps")
            run_layers.append(layer)
            t = layer.end_ns + LAYER_GAP_NS
        # rebuild the run from these exact layer starts
        kernels = tuple(k for layer in run_layers for k in layer.kernels)
        tasks = tuple(task for layer in run_layers for task in layer.tasks)
        scenario = Scenario("touching-windows", kernels, tasks=tasks)
        made.append(Run(scenario, run_layers))
    return assemble(
        {0: made}, notes="side_end == dom_start in exact ns; float64 puts side_end later"
    )


CORE_SIDE_OPS = (
    Op("aclnnMatmul_SharedExpertGateUp_MatMulV3", "AI_CORE", 80_000, 20),
    Op("aclnnSwiGlu_SharedExpertSwiGlu_SwiGlu", "AI_VECTOR_CORE", 20_000, 48),
    Op("aclnnQuantMatmulV4_SharedExpertQuantMatmul_QuantBatchMatmulV3", "MIX_AIC", 30_000, 20, 40),
    Op(
        "aclnnDequantSwigluQuant_SharedExpertDequantSwiglu_DequantSwigluQuant",
        "MIX_AIV",
        10_000,
        8,
        16,
    ),
    Op("aclnnSharedExpertIndexPut_SharedExpertIndexPut_IndexPut", "AI_CPU", 8_000, 0),
    Op("aclnnDropoutGenMaskV2_SharedExpertGenMask_DSAGenBitMask", "DSA_SQE", 3_400, 0),
    Op("aclnnMatmul_SharedExpertDown_MatMulV3", "AI_CORE", 60_000, 12, gap_ns=0),
)
CORE_LIMIT = (12, 24)  # limit_core_num(aicore, vectorcore) applied to the side ops


def _over(
    run: int, k: Kernel, kind: str, blocks: int, limit: int, fld: str
) -> list[ExpectedViolation]:
    if blocks <= limit:
        return []
    return [
        ExpectedViolation(
            run,
            0,
            SIDE,
            k.name,
            k.accelerator_core,
            k.block_num,
            k.mix_block_num,
            limit,
            kind,
            fld,
            k.start_ns,
        )
    ]


def _core_expectations(
    runs: Sequence[Run],
    aicore: int,
    vectorcore: int,
    expected: Expected,
    ascend_c: str | None = None,
) -> Expected:
    """Violations of CORE_LIMIT by side ops (docs/method.md rules) and their contention with the
    dominator, which alone fills the device (MIX_AIC 24/48). ``ascend_c``: the limit is
    npugraph_ex's, which governs only Ascend C operators: a kernel whose name lacks this
    text is reported, not failed."""
    aic_limit, aiv_limit = CORE_LIMIT
    violations: list[ExpectedViolation] = []
    warnings: list[ExpectedViolation] = []
    contention: list[ExpectedContention] = []
    exempt: set[str] = set()
    for index, run in enumerate(runs, start=1):
        for k in (k for k in run.scenario.kernels if k.stream_id == SIDE):
            core, block, mix = k.accelerator_core, k.block_num, k.mix_block_num
            if core in ("AI_CPU", "DSA_SQE"):
                exempt.add(k.name)
                continue
            if core in ("AI_CORE", "MIX_AIC"):
                violations += _over(index, k, "aicore", block, aic_limit, "block_num")
            if core == "AI_VECTOR_CORE":
                violations += _over(index, k, "vectorcore", block, aiv_limit, "block_num")
            if core == "MIX_AIC":
                violations += _over(index, k, "vectorcore", mix, aiv_limit, "mix_block_num")
            if core == "MIX_AIV":
                # semantics of Mix Block Num undocumented: report, do not fail
                warnings.append(
                    ExpectedViolation(
                        index,
                        0,
                        SIDE,
                        k.name,
                        core,
                        block,
                        mix,
                        aiv_limit,
                        "vectorcore",
                        "mix_block_num",
                        k.start_ns,
                    )
                )
                # Block Num is MIX_AIV's primary accelerator (AIV); what Mix Block Num adds to
                # the cube cores is undocumented, so no aicore contention is claimed for it
            extra_aic = block if core in ("AI_CORE", "MIX_AIC") else 0
            extra_aiv = {"AI_VECTOR_CORE": block, "MIX_AIV": block, "MIX_AIC": mix}.get(core, 0)
            if extra_aic:
                contention.append(
                    ExpectedContention(
                        index,
                        0,
                        k.start_ns,
                        k.duration_ns,
                        "aicore",
                        DOMINATOR.block + extra_aic,
                        aicore,
                    )
                )
            if extra_aiv:
                contention.append(
                    ExpectedContention(
                        index,
                        0,
                        k.start_ns,
                        k.duration_ns,
                        "vectorcore",
                        DOMINATOR.mix + extra_aiv,
                        vectorcore,
                    )
                )
    if ascend_c is not None:
        warnings += [v for v in violations if ascend_c not in v.name]
        warnings.sort(key=lambda v: (v.run, v.start_ns, v.kind))
        violations = [v for v in violations if ascend_c in v.name]
    return replace(
        expected,
        violations=tuple(violations),
        warnings=tuple(warnings),
        contention=tuple(contention),
        exempt=tuple(sorted(exempt)),
        limit_core=CORE_LIMIT,
        device_cores=(aicore, vectorcore),
    )


def core_limits(runs: int = 5, layers: int = 2, seed: int = 9) -> Built:
    """Real overlap (1.0) whose side ops break ``limit_core_num(12, 24)``: AI_CORE 20 > 12,
    AI_VECTOR_CORE 48 > 24, MIX_AIC 20/40 (both); MIX_AIV 8/16 reported; AI_CPU / DSA_SQE
    exempt; AI_CORE 12 compliant. Each side op also contends with the dominator (24/48)."""
    made = [
        build_run("core-limits", same("real", layers), run=r, seed=seed, side_ops=CORE_SIDE_OPS)
        for r in range(runs)
    ]
    plain = assemble({0: made}, notes="limit_core_num(12, 24) on a 24/48 device")
    return replace(plain, expected=_core_expectations(made, 24, 48, plain.expected))


# npugraph_ex's limit_core_num governs Ascend C operators only: a GroupedMatmul (Ascend C)
# and a MatMulV3 (not on the list of cores.rules.ASCEND_C_OPERATORS) both above (12, 24).
NGX_SIDE_OPS = (
    Op("aclnnGroupedMatmulV5_SharedExpertGroupedMatmul_GroupedMatmul", "MIX_AIC", 30_000, 20, 40),
    Op("aclnnMatmul_SharedExpertDown_MatMulV3", "AI_CORE", 60_000, 20, gap_ns=0),
)


def npugraph_ex_limits(runs: int = 5, layers: int = 2, seed: int = 12) -> Built:
    """Real overlap (1.0) under npugraph_ex's ``limit_core_num(12, 24)``: the side
    GroupedMatmul (MIX_AIC 20/40, Ascend C) breaks both limits and fails; the MatMulV3
    (AI_CORE 20) breaks the AI-core limit but may not be Ascend C: reported only."""
    made = [
        build_run(
            "npugraph-ex-limits", same("real", layers), run=r, seed=seed, side_ops=NGX_SIDE_OPS
        )
        for r in range(runs)
    ]
    plain = assemble({0: made}, notes="npugraph_ex limit_core_num(12, 24) on a 24/48 device")
    expected = _core_expectations(made, 24, 48, plain.expected, ascend_c="GroupedMatmul")
    return replace(plain, expected=expected)


def not_split(runs: int = 5, layers: int = 4, seed: int = 10) -> Built:
    """The shared expert stayed on the main stream (logical split failed): verdict not-split."""
    made = [build_run("not-split", same("serial", layers), run=r, seed=seed) for r in range(runs)]
    return assemble({0: made}, not_split=True, notes="all SharedExpert ops on stream 2")


ALL = {
    "real-dual-stream": real_dual_stream,
    "fake-dual-stream": fake_dual_stream,
    "partial-dual-stream": partial_dual_stream,
    "layered-model": layered_model,
    "warm-cold-runs": warm_cold_runs,
    "two-rank-job": two_rank_job,
    "level0-event-wait": level0_event_wait,
    "touching-windows": touching_windows,
    "core-limits": core_limits,
    "npugraph-ex-limits": npugraph_ex_limits,
    "not-split": not_split,
}
