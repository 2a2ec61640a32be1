"""Core-limit rules, limit precedence, contention sweep and the text section, by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from overlap_check.judge.pipeline import analyze_captures
from overlap_check.measure.cores import contention_at, contention_evidence
from overlap_check.model import (
    Capture,
    CoreLimit,
    CoresResult,
    DeviceConfig,
    DeviceCores,
    Options,
    Plan,
)
from overlap_check.model.table import conform
from overlap_check.report.text_cores import render_cores

T0 = 1_736_408_883_704_643_212  # a real local-epoch ns start (2025-01)
US = 1_000  # ns per microsecond


def k(
    name: str,
    stream: int | None,
    start_us: int,
    end_us: int,
    core: str | None = "AI_CORE",
    block: int | None = 0,
    mix: int | None = 0,
) -> dict[str, Any]:
    """One kernel row; times in µs after T0 (kept exact as int ns)."""
    comm = core in ("HCCL", "COMMUNICATION")
    return {
        "rank": 0,
        "device": 0,
        "name": name,
        "stream_id": None if comm else stream,
        "start_ns": T0 + start_us * US,
        "end_ns": T0 + end_us * US,
        "accelerator_core": core,
        "is_communication": comm,
        "block_num": block,
        "mix_block_num": mix,
    }


def capture(rows: list[dict[str, Any]], cores: DeviceCores | None = None) -> Capture:
    return Capture(
        path="synthetic",
        source="kernel_details.csv",
        rank=0,
        device=0,
        level="Level1",
        capture_time_ns=None,
        kernels=conform(pl.DataFrame(rows)),
        device_cores=cores if cores is not None else DeviceCores(24, 48, "info.json"),
    )


MOE = Plan(name="moe", side="SharedExpert", limit_core=CoreLimit(aicore=12, vectorcore=24))


def cores_of(captures: list[Capture], options: Options) -> CoresResult:
    """The core findings of analysing these runs (the public path)."""
    found = analyze_captures(captures, options).cores
    assert found is not None
    return found


def check(rows: list[dict[str, Any]], options: Options) -> CoresResult:
    """One run (so warm: the warm-up shrinks to leave one judged run)."""
    return cores_of([capture(rows)], options)


def flagged(items: tuple[Any, ...]) -> set[tuple[str, str, str]]:
    return {(v.name, v.kind, v.blocks_field) for v in items}


# --------------------------------------------------------------------------- rules


def test_each_rule_kind_is_a_violation_and_limits_themselves_pass() -> None:
    rows = [
        k("SharedExpertMatmul", 3, 0, 10, "AI_CORE", 16),  # 16 > aic 12
        k("SharedExpertSwiGlu", 3, 10, 20, "AI_VECTOR_CORE", 40),  # 40 > aiv 24
        k("SharedExpertMixBlock", 3, 20, 30, "MIX_AIC", 16, 24),  # 16 > aic 12; mix 24 = 24
        k("SharedExpertMixVec", 3, 30, 40, "MIX_AIC", 12, 32),  # 12 = 12; mix 32 > aiv 24
        k("SharedExpertAtLimit", 3, 40, 50, "AI_CORE", 12),  # exactly the limit: fine
        k("SharedExpertVecAtLimit", 3, 50, 60, "AI_VECTOR_CORE", 24),
        k("GroupedMatmul", 2, 0, 60, "AI_CORE", 24),  # not a side op: no plan limit
    ]
    result = check(rows, Options(plans=(MOE,)))
    assert flagged(result.violations) == {
        ("SharedExpertMatmul", "aicore", "block_num"),
        ("SharedExpertSwiGlu", "vectorcore", "block_num"),
        ("SharedExpertMixBlock", "aicore", "block_num"),
        ("SharedExpertMixVec", "vectorcore", "mix_block_num"),
    }
    assert result.violation_count == 4
    assert result.warnings == ()
    assert result.checked_kernels == 6  # the six side ops
    by_name = {v.name: v for v in result.violations}
    matmul = by_name["SharedExpertMatmul"]
    assert (matmul.run, matmul.rank, matmul.stream_id, matmul.limit) == (1, 0, 3, 12)
    assert (matmul.block_num, matmul.accelerator_core, matmul.plan) == (16, "AI_CORE", "moe")
    assert matmul.start_ns == T0
    assert matmul.limit_source == "plan:moe"
    assert "Block Num 16 > aicore limit 12" in matmul.message
    assert "stream 3" in matmul.message and "run 1" in matmul.message
    mix = by_name["SharedExpertMixVec"]
    assert (mix.mix_block_num, mix.limit) == (32, 24)
    assert "Mix Block Num 32 > vectorcore limit 24" in mix.message


def test_exempt_kinds_are_counted_not_flagged() -> None:
    rows = [
        k("SharedExpertCpu", 3, 0, 10, "AI_CPU", 99),
        k("SharedExpertDsa", 3, 10, 20, "DSA_SQE", 99),
        k("hcom_allReduce__868_0_1", None, 0, 20, "COMMUNICATION", 99),
        k("hcom_broadcast_1", None, 20, 30, "HCCL", 99),
        k("Matmul", 2, 0, 10, "AI_CORE", 8),
    ]
    # The GE global limit governs every kernel, communication included.
    result = check(rows, Options(device=DeviceConfig(ge_aicore_num="24|48")))
    assert result.violations == () and result.warnings == ()
    assert result.exempt_kernels == 4
    assert result.checked_kernels == 1


def test_mix_aiv_is_a_warning_not_a_violation() -> None:
    rows = [k("SharedExpertAiv", 3, 0, 10, "MIX_AIV", 40, 80)]
    result = check(rows, Options(plans=(MOE,)))
    assert result.violations == ()
    assert flagged(result.warnings) == {
        ("SharedExpertAiv", "vectorcore", "block_num"),  # 40 > aiv 24
        ("SharedExpertAiv", "aicore", "mix_block_num"),  # 80 > aic 12
    }
    assert all("reported, not failed" in w.message for w in result.warnings)


def test_npugraph_ex_over_limit_is_a_warning() -> None:
    plan = Plan(name="ex", side="SharedExpert", limit_core=CoreLimit(12, 24, mode="npugraph_ex"))
    rows = [
        k("SharedExpertMatmul", 3, 0, 10, "AI_CORE", 20),
        k("SharedExpertSwiGlu", 3, 10, 20, "AI_VECTOR_CORE", 48),
        k("SharedExpertSmall", 3, 20, 30, "AI_CORE", 8),
    ]
    result = check(rows, Options(plans=(plan,)))
    assert result.violations == ()
    assert result.violation_count == 0
    assert flagged(result.warnings) == {
        ("SharedExpertMatmul", "aicore", "block_num"),
        ("SharedExpertSwiGlu", "vectorcore", "block_num"),
    }
    assert all("not limited: may not be an Ascend C operator" in w.message for w in result.warnings)
    assert result.limits[0].mode == "npugraph_ex"


def test_npugraph_ex_limit_governs_every_ascend_c_op_on_its_stream() -> None:
    """Issue 23 point 5: torch.npu.npugraph_ex.scope.limit_core_num limits the stream, so
    MoeGatingTopK on the side stream (outside the side regex) with 40 vector blocks over the
    stream's 24 fails; a non-Ascend-C op there over it warns; the main stream's
    GroupedMatmul (24 blocks > 12, stream 2, the busiest: 100 µs) is not governed."""
    plan = Plan(name="ex", side="SharedExpert", limit_core=CoreLimit(12, 24, mode="npugraph_ex"))
    rows = [
        k("GroupedMatmul", 2, 0, 100, "AI_CORE", 24),
        k("SharedExpertMatmul", 3, 0, 10, "AI_CORE", 8),  # within the limit
        k("MoeGatingTopK", 3, 10, 20, "AI_VECTOR_CORE", 40),  # 40 > aiv 24, Ascend C
        k("Cast", 3, 20, 25, "AI_VECTOR_CORE", 30),  # 30 > 24, not known to be Ascend C
    ]
    result = check(rows, Options(plans=(plan,)))
    assert flagged(result.violations) == {("MoeGatingTopK", "vectorcore", "block_num")}
    assert [(v.stream_id, v.limit) for v in result.violations] == [(3, 24)]
    assert flagged(result.warnings) == {("Cast", "vectorcore", "block_num")}
    (governed,) = [a for a in result.limits if a.plan == "ex"]
    assert governed.kernels == 3  # every kernel on stream 3


def test_plan_beats_global_and_first_plan_wins() -> None:
    first = Plan(name="first", side="Shared", limit_core=CoreLimit(aicore=8))
    second = Plan(name="second", side="SharedExpert", limit_core=CoreLimit(aicore=16))
    rows = [
        k("SharedExpertMatmul", 3, 0, 10, "AI_CORE", 12),  # 12 > 8 (first plan), <= 16, <= 24
        k("Other", 2, 0, 10, "AI_CORE", 30),  # only the global "24|48": 30 > 24
        k("OtherVec", 2, 10, 20, "AI_VECTOR_CORE", 40),  # global aiv 48: fine
    ]
    options = Options(plans=(first, second), device=DeviceConfig(ge_aicore_num="24|48"))
    result = check(rows, options)
    sources = {(v.name, v.limit, v.limit_source) for v in result.violations}
    assert sources == {("SharedExpertMatmul", 8, "plan:first"), ("Other", 24, "ge-global")}
    governed = {(a.source, a.plan): a.kernels for a in result.limits}
    assert governed == {("plan", "first"): 1, ("plan", "second"): 0, ("ge-global", None): 3}
    # The vectorcore limit of the matmul still comes from the global string.
    assert any("second: limit_core governs no kernel" in n for n in result.notes)


def test_level0_kernels_without_core_type_are_unchecked() -> None:
    rows = [k("SharedExpertMatmul", 3, 0, 10, None, 0, None)]
    result = check(rows, Options(plans=(MOE,)))
    assert result.violations == ()
    assert (result.checked_kernels, result.unchecked_kernels) == (0, 1)
    assert any("not checked" in n for n in result.notes)


def test_no_limit_configured_checks_nothing() -> None:
    result = check([k("SharedExpertMatmul", 3, 0, 10, "AI_CORE", 99)], Options())
    assert (result.violation_count, result.checked_kernels, result.limits) == (0, 0, ())


def test_violations_come_from_every_run_with_its_index() -> None:
    rows = [k("SharedExpertMatmul", 3, 0, 10, "AI_CORE", 16)]
    caps = [capture(rows), capture(rows)]
    result = cores_of(caps, Options(plans=(MOE,), warmup=1))  # run 1 cold, run 2 warm
    assert [v.run for v in result.violations] == [1, 2]


# --------------------------------------------------------------------------- contention


CONTENTION_ROWS = [
    # stream 2, the main stream
    k("GroupedMatmul", 2, 0, 100, "AI_CORE", 20),
    k("MainAdd", 2, 100, 130, "AI_VECTOR_CORE", 30),
    # stream 3, the side stream
    k("SideMatmulA", 3, 10, 30, "AI_CORE", 16),  # 20 + 16 = 36 > 24 on [10, 30)
    k("SideMatmulB", 3, 30, 50, "AI_CORE", 8),  # 20 + 8 = 28 > 24 on [30, 50): same interval
    k("SideSwiGlu", 3, 50, 80, "AI_VECTOR_CORE", 40),  # vector 40 <= 48; aicore 20
    k("SideMix", 3, 80, 90, "MIX_AIC", 12, 24),  # aicore 20 + 12 = 32 > 24; vector 24
    k("SideVec", 3, 110, 120, "AI_VECTOR_CORE", 30),  # vector 30 + 30 = 60 > 48
    k("hcom_allReduce", None, 0, 130, "COMMUNICATION", 48),  # never a compute stream
]


def test_contention_peaks_are_exact() -> None:
    result = check(CONTENTION_ROWS, Options())
    assert result.contention_count == 3
    got = [
        (c.kind, c.start_ns - T0, c.duration_ns, c.demand, c.maximum, c.excess_block_ns)
        for c in result.contention
    ]
    assert got == [
        # [10, 50) us: 36 for 20 us then 28 for 20 us, one merged interval
        ("aicore", 10 * US, 40 * US, 36, 24, (36 - 24) * 20 * US + (28 - 24) * 20 * US),
        # [110, 120) us: vector 30 + 30
        ("vectorcore", 110 * US, 10 * US, 60, 48, (60 - 48) * 10 * US),
        # [80, 90) us: 20 + 12
        ("aicore", 80 * US, 10 * US, 32, 24, (32 - 24) * 10 * US),
    ]
    worst = result.contention[0]
    assert worst.kernels == ("GroupedMatmul", "SideMatmulA", "SideMatmulB")
    assert worst.streams == (2, 3)
    assert result.contention[1].kernels == ("MainAdd", "SideVec")
    assert result.aicore_over_limit_ns == (40 + 10) * US
    assert result.vectorcore_over_limit_ns == 10 * US
    assert result.over_limit_ns == (40 + 10 + 10) * US
    assert result.contention_runs == 1
    assert result.over_limit_by_rank == ((0, (40 + 10 + 10) * US),)
    assert result.violations == ()  # contention is a diagnosis, not a violation


def test_single_kernel_demand_is_capped_at_the_device() -> None:
    # 256 logical vector blocks on a 48-core device run in waves: alone they never
    # exceed it, even while another stream runs an AI_CPU op.
    rows = [
        k("BigVec", 2, 0, 10, "AI_VECTOR_CORE", 256),
        k("CpuOp", 3, 0, 10, "AI_CPU", 1),
    ]
    assert check(rows, Options()).contention_count == 0
    rows[1] = k("SmallVec", 3, 0, 10, "AI_VECTOR_CORE", 8)
    (interval,) = check(rows, Options()).contention
    assert (interval.demand, interval.maximum) == (48 + 8, 48)


def test_one_stream_alone_is_never_contention() -> None:
    # Two overlapping kernels of ONE stream (a timing artefact): not main vs side.
    rows = [k("A", 2, 0, 10, "AI_CORE", 20), k("B", 2, 5, 15, "AI_CORE", 20)]
    assert check(rows, Options()).contention_count == 0


def test_contention_counts_only_warm_runs() -> None:
    # run 1 (the warm-up, cold) contends; run 2 (warm) runs one stream only
    quiet = [k("GroupedMatmul", 2, 0, 100, "AI_CORE", 20)]
    result = cores_of([capture(CONTENTION_ROWS), capture(quiet)], Options(warmup=1))
    assert (result.contention, result.over_limit_ns, result.contention_runs) == ((), 0, 1)


def _brute_force_over(rows: list[tuple[int, int, int, int]], maximum: int) -> int:
    """ns with >= 2 streams busy and capped demand above the maximum, one ns at a time."""
    horizon = max(e for _, _, e, _ in rows) + 1
    demand = np.zeros(horizon, dtype=np.int64)
    busy = np.zeros((3, horizon), dtype=bool)
    for stream, start, end, blocks in rows:
        demand[start:end] += min(blocks, maximum)
        busy[stream, start:end] = True
    return int(((busy.sum(axis=0) >= 2) & (demand > maximum)).sum())


# (stream, start ns, duration ns, AI_CORE blocks): a drawn kernel
DRAWN = st.tuples(st.integers(0, 2), st.integers(0, 40), st.integers(0, 10), st.integers(0, 40))


def drawn_rows(items: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """(stream, start, end, blocks) of the drawn kernels."""
    return [(s, a, a + d, b) for s, a, d, b in items]


def drawn_kernels(rows: list[tuple[int, int, int, int]]) -> list[dict[str, Any]]:
    return [
        {**k(f"op{i}", s, 0, 0, "AI_CORE", b), "start_ns": a, "end_ns": e}
        for i, (s, a, e, b) in enumerate(rows)
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 40), st.integers(1, 10), st.integers(0, 40)),
        min_size=1,
        max_size=10,
    )
)
def test_over_limit_time_matches_brute_force(items: list[tuple[int, int, int, int]]) -> None:
    rows = drawn_rows(items)
    kernels = drawn_kernels(rows)
    result = cores_of([capture(kernels, DeviceCores(24, 48, "config"))], Options())
    assert result.aicore_over_limit_ns == _brute_force_over(rows, 24)


@settings(max_examples=60, deadline=None)
@given(st.lists(DRAWN, min_size=1, max_size=10), st.integers(1, 30), st.integers(0, 20))
def test_evidence_kept_for_fewer_cores_gives_the_over_limit_time_of_more(
    items: list[tuple[int, int, int, int]], floor: int, more: int
) -> None:
    # a run swept with `floor` cores, keeping what more need, judges any cores >= floor
    rows = drawn_rows(items)
    kernels = conform(pl.DataFrame(drawn_kernels(rows)))
    evidence = contention_evidence(kernels, (floor, 1), above=True)
    found = contention_at(evidence, (floor + more, 0))
    assert found.over_ns["aicore"] == _brute_force_over(rows, floor + more)
    assert found.over_ns["vectorcore"] == 0  # 0 cores: not judged


def test_evidence_refuses_cores_it_was_not_swept_for() -> None:
    kernels = conform(pl.DataFrame([k("MainMatmul", 2, 0, 10, block=30)]))
    with pytest.raises(ValueError, match="aicore contention swept with 24 cores, not 20"):
        contention_at(contention_evidence(kernels, (24, 48), above=True), (20, 48))
    with pytest.raises(ValueError, match=r"swept with \(24, 48\) cores only, not \(30, 48\)"):
        contention_at(contention_evidence(kernels, (24, 48)), (30, 48))


# --------------------------------------------------------------------------- text section


def test_render_cores_names_source_limits_violations_and_contention() -> None:
    rows = [*CONTENTION_ROWS, k("SharedExpertMatmul", 3, 200, 210, "AI_CORE", 16)]
    text = render_cores(check(rows, Options(plans=(MOE,))))
    assert text.startswith("Cores\n")
    assert "24 AI Core (aic) / 48 AI Vector (aiv), from the capture's info.json" in text
    assert "plan moe (ge): aic 12, aiv 24 -- governs 1 kernel(s)" in text
    assert "violations: 1 (these fail the gate)" in text
    assert "SharedExpertMatmul" in text and "Block Num 16" in text and "aicore 12" in text
    # total over the limit: (40 + 10 + 10) us, exact
    assert "60.000 µs over the device's cores in all (aicore" in text
    assert "36/24" in text and "60/48" in text
    assert text.index("36/24") < text.index("60/48") < text.index("32/24")  # worst first
    assert f"{(T0 + 10 * US) // 1000}.{(T0 + 10 * US) % 1000:03d}" in text  # absolute epoch us
    relative = render_cores(check(rows, Options(plans=(MOE,))), origins={(0, 1): T0})
    (worst_line,) = [line for line in relative.splitlines() if "36/24" in line]
    assert worst_line.split()[:5] == ["1", "0", "10.000", "40.000", "aicore"]  # 10 us after origin


def test_render_cores_without_limits_or_warm_runs() -> None:
    # analyze always leaves a judged (warm) run; a result swept over none renders so
    text = render_cores(CoresResult(device=DeviceCores(24, 48, "info.json")))
    assert "limits: none configured" in text
    assert "contention: not swept (no warm run)" in text


# --------------------------------------------------------------------------- end to end


def test_synthetic_result_dir_end_to_end(tmp_path: Path) -> None:
    synth = pytest.importorskip("synth")
    from overlap_check.readers import load

    t0 = 1_736_408_883_704_643_212
    kernel = synth.Kernel
    kernels = (
        kernel("aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul", 2, t0, 100 * US, block_num=16),
        kernel("aclnnSharedExpertMatmul_MatMul_MatMul", 3, t0 + 20 * US, 40 * US, block_num=12),
        kernel(
            "aclnnSharedExpertMix_Mix_Mix",
            3,
            t0 + 60 * US,
            10 * US,
            accelerator_core="MIX_AIC",
            block_num=4,
            mix_block_num=8,
        ),
    )
    scenario = synth.Scenario("e2e", kernels, aicore=20, vectorcore=40)
    (captured,) = load(synth.write_result_dir(scenario, tmp_path))
    plan = Plan("moe", side="SharedExpert", limit_core=CoreLimit(aicore=8, vectorcore=16))
    result = cores_of([captured], Options(plans=(plan,)))
    assert result.device is not None
    assert (result.device.aicore, result.device.vectorcore, result.device.source) == (
        20,
        40,
        "info.json",
    )
    assert [(v.name, v.block_num, v.limit) for v in result.violations] == [
        ("aclnnSharedExpertMatmul_MatMul_MatMul", 12, 8)
    ]
    # [t0 + 20, t0 + 60) us: 16 + 12 = 28 > 20; the MIX_AIC after it: 16 + 4 = 20, not above
    (interval,) = result.contention
    assert (interval.start_ns, interval.duration_ns, interval.demand) == (t0 + 20 * US, 40 * US, 28)
    assert interval.excess_block_ns == (28 - 20) * 40 * US
