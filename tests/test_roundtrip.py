"""Generator -> files -> overlap_check.load gives back exactly the generated kernels.

For every format variant (2023 / 2025 / 2026 x Level0 / Level1 x kernel_details,
trace_view.json, db, task_time, msprof op_summary) random scenarios are written
and read back; the compute rows must equal the generated (stream, start_ns,
end_ns, name) multiset, to the nanosecond. Also: interval busy time against a
brute-force reference.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overlap_check import load
from overlap_check.model.errors import NoStreamDataError
from overlap_check.model.intervals import intersection_length, union_length
from overlap_check.model.table import compute_kernels
from synth import (
    CommOp,
    Kernel,
    Scenario,
    Task,
    Variant,
    scenarios,
    write_msprof_dir,
    write_result_dir,
)
from synth.malformed import write_malformed

NAMES = (
    "aclnnMatmul_MatMulV3Common_MatMulV3",
    "aclnnGroupedMatmulV5_GroupedMatmul_GroupedMatmul",
    "aclnnAdd_AddAiCore_Add",
    "trans_TransData_3",
    "aclnnMatmul_SharedExpertGateUp_MatMulV3",
    "Conv2D1",
    "layer0/attn,qkv_MatMulV3",  # a comma forces CSV quoting
)
CORES = ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "DSA_SQE")
TASK_KINDS = (
    "EVENT_WAIT_SQE",
    "EVENT_RECORD_SQE",
    "MEMCPY_ASYNC",
    "Notify Wait",
    "SDMA",
    "PROFILING_ENABLE",
)
STREAMS = (2, 3, 5, 16, 17)

Row = tuple[int, int, int, str]


# ----------------------------------------------------------------- variants


def _torch_npu(version: str, level: str, sources: str, **extra: bool) -> Variant:
    return Variant(
        version=version,
        level=level,
        kernel_details="kd" in sources,
        trace="trace" in sources,
        db="db" in sources,
        task_time="task_time" in sources,
        crlf=version != "2023",
        **extra,
    )


VARIANTS: dict[str, Variant | str] = {}
for _version in ("2023", "2025", "2026"):
    for _level in ("Level0", "Level1"):
        for _sources in ("kd+trace", "kd+db", "kd+task_time", "trace", "db"):
            VARIANTS[f"{_version}-{_level}-{_sources}"] = _torch_npu(_version, _level, _sources)
    VARIANTS[f"{_version}-Level1-kd"] = _torch_npu(_version, "Level1", "kd")
VARIANTS["2026-Level2-kd"] = _torch_npu("2026", "Level2", "kd")
VARIANTS["2025-Level1-kd-quoted"] = _torch_npu("2025", "Level1", "kd", quoted_start=True)
VARIANTS["msprof-2025"] = "2025"
VARIANTS["msprof-2026"] = "2026"


def _write(scenario: Scenario, root: Path, variant: Variant | str) -> Path:
    if isinstance(variant, str):
        return write_msprof_dir(scenario, root, version=variant)
    return write_result_dir(scenario, root, variant)


def _kernel_file_is_source(variant: Variant | str) -> bool:
    """kernel_details (Level1+) or op_summary: every kernel column comes from the CSV."""
    return isinstance(variant, str) or (variant.kernel_details and not variant.level0)


# ----------------------------------------------------------------- scenarios


@st.composite
def random_scenarios(draw: st.DrawFn) -> Scenario:
    base = draw(st.integers(1_600_000_000_000_000_000, 1_800_000_000_000_000_000))
    # unique starts: a Level0 reader pairs kernel_details rows with their stream by start time
    offsets = draw(st.lists(st.integers(0, 2_000_000_000), min_size=1, max_size=10, unique=True))
    kernels = []
    for offset in offsets[: max(1, len(offsets) - 2)]:
        core = draw(st.sampled_from(CORES))
        block = 0 if core in ("AI_CPU", "DSA_SQE") else draw(st.integers(1, 256))
        kernels.append(
            Kernel(
                name=draw(st.sampled_from(NAMES)),
                stream_id=draw(st.sampled_from(STREAMS)),
                start_ns=base + offset,
                duration_ns=draw(st.integers(0, 5_000_000)),
                accelerator_core=core,
                block_num=block,
                mix_block_num=2 * block if core.startswith("MIX_") else 0,
                step=draw(st.sampled_from((50, 50, None))),
            )
        )
    communication = [
        CommOp(
            f"hcom_allReduce__868_{i}_1", base + offset, draw(st.integers(1, 3_000_000)), step=50
        )
        for i, offset in enumerate(offsets[len(kernels) :])
    ]
    tasks = [
        Task(
            draw(st.sampled_from(TASK_KINDS)),
            draw(st.sampled_from((0, *STREAMS))),
            base + draw(st.integers(0, 2_000_000_000)),
            draw(st.integers(0, 200_000)),
        )
        for _ in range(draw(st.integers(0, 4)))
    ]
    return Scenario(
        "roundtrip",
        tuple(kernels),
        tuple(communication),
        tuple(tasks),
        rank=draw(st.integers(0, 3)),
        device=draw(st.integers(0, 7)),
    )


def _expected(scenario: Scenario) -> list[Row]:
    return sorted((k.stream_id, k.start_ns, k.end_ns, k.name) for k in scenario.kernels)


def _compute(frame: pl.DataFrame) -> pl.DataFrame:
    return compute_kernels(frame)  # copy tasks are read too, never as compute


def _check_round_trip(scenario: Scenario, variant: Variant | str, root: Path) -> None:
    captures = load(_write(scenario, root, variant))
    assert len(captures) == 1
    capture = captures[0]
    kernels = capture.kernels
    got = _compute(kernels)
    assert sorted(got.select("stream_id", "start_ns", "end_ns", "name").rows()) == _expected(
        scenario
    )
    comm = kernels.filter(pl.col("is_communication"))
    assert sorted(comm.select("start_ns", "end_ns", "name").rows()) == sorted(
        (c.start_ns, c.end_ns, c.name) for c in scenario.communication
    )
    assert comm["stream_id"].null_count() == comm.height
    assert capture.skipped_rows == 0
    assert capture.device == scenario.device
    assert capture.device_cores is not None
    assert (capture.device_cores.aicore, capture.device_cores.vectorcore) == (
        scenario.aicore,
        scenario.vectorcore,
    )
    if not isinstance(variant, str):  # torch_npu result dir: profiler_info_{rank}.json
        assert (capture.rank, capture.level) == (scenario.rank, variant.level)
        assert capture.capture_time_ns == scenario.end_ns()
    if _kernel_file_is_source(variant):
        columns = (
            "stream_id",
            "start_ns",
            "name",
            "accelerator_core",
            "block_num",
            "mix_block_num",
        )
        wanted = sorted(
            (k.stream_id, k.start_ns, k.name, k.accelerator_core, k.block_num, k.mix_block_num)
            for k in scenario.kernels
        )
        assert sorted(got.select(columns).rows()) == wanted
    if not isinstance(variant, str) and variant.kernel_details:
        assert sorted(got.select("start_ns", "step").rows()) == sorted(
            (k.start_ns, k.step) for k in scenario.kernels
        )


# ----------------------------------------------------------------- tests


@pytest.mark.parametrize("variant_name", sorted(VARIANTS))
def test_built_in_scenario_round_trips(variant_name: str, tmp_path: Path) -> None:
    """Every variant, one realistic run: tasks on streams 0/2/3/4, an allreduce, steps."""
    scenario = scenarios.two_rank_job(runs=1, layers=2).runs(rank=1)[0]
    _check_round_trip(scenario, VARIANTS[variant_name], tmp_path)


@pytest.mark.parametrize("variant_name", sorted(VARIANTS))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=random_scenarios())
def test_random_scenarios_round_trip(variant_name: str, scenario: Scenario) -> None:
    with TemporaryDirectory() as tmp:
        _check_round_trip(scenario, VARIANTS[variant_name], Path(tmp))


@pytest.mark.parametrize("version", ["2023", "2025", "2026"])
def test_level0_kernel_details_alone_has_no_streams(version: str, tmp_path: Path) -> None:
    scenario = scenarios.real_dual_stream(runs=1, layers=1).scenarios[0]
    result = write_result_dir(scenario, tmp_path, _torch_npu(version, "Level0", "kd"))
    with pytest.raises(NoStreamDataError) as caught:
        load(result)
    assert "kernel_details.csv" in str(caught.value)


def test_touching_windows_read_back_without_overlap(tmp_path: Path) -> None:
    built = scenarios.touching_windows(runs=1, layers=3)
    (capture,) = load(write_result_dir(built.scenarios[0], tmp_path))
    k = capture.kernels
    side_end = k.filter(pl.col("name").str.contains("SharedExpertDown"))["end_ns"].to_list()
    dom_start = k.filter(pl.col("name").str.contains("GroupedMatmul"))["start_ns"].to_list()
    assert side_end == dom_start and len(side_end) == 3


def test_malformed_row_is_skipped_and_counted(tmp_path: Path) -> None:
    run = scenarios.real_dual_stream(runs=1, layers=2).scenarios[0]
    damaged = write_malformed(tmp_path, run)
    (capture,) = load(damaged.result_dir)
    assert (capture.skipped_rows, capture.skipped_lines) == (1, (damaged.skipped_line,))
    left = [k for k in run.kernels if k != damaged.dropped]
    assert len(left) == damaged.kernels_left == len(run.kernels) - 1
    got = _compute(capture.kernels).select("stream_id", "start_ns", "end_ns", "name").rows()
    assert sorted(got) == sorted((k.stream_id, k.start_ns, k.end_ns, k.name) for k in left)
    starts = capture.kernels["start_ns"].to_list()
    assert starts == sorted(starts)  # two unsorted slices come back in start order


# ----------------------------------------------------------------- interval maths vs brute force


def _covered_points(starts: list[int], ends: list[int]) -> set[int]:
    """Every integer ns t with start <= t < end for some interval: the busy time, by counting."""
    return {t for s, e in zip(starts, ends, strict=True) for t in range(s, e)}


def _sorted_loop_union(starts: list[int], ends: list[int]) -> int:
    """Reference union length with exact Python ints, one interval at a time."""
    total, current_start, current_end = 0, None, None
    for s, e in sorted(zip(starts, ends, strict=True)):
        if current_end is None or s > current_end:
            if current_end is not None and current_start is not None:
                total += current_end - current_start
            current_start, current_end = s, e
        else:
            current_end = max(current_end, e)
    if current_end is not None and current_start is not None:
        total += current_end - current_start
    return total


small_intervals = st.lists(
    st.tuples(st.integers(0, 300), st.integers(0, 60)).map(lambda p: (p[0], p[0] + p[1])),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(a=small_intervals, b=small_intervals)
def test_union_and_intersection_match_counting(
    a: list[tuple[int, int]], b: list[tuple[int, int]]
) -> None:
    a_starts, a_ends = [s for s, _ in a], [e for _, e in a]
    b_starts, b_ends = [s for s, _ in b], [e for _, e in b]
    covered_a, covered_b = _covered_points(a_starts, a_ends), _covered_points(b_starts, b_ends)
    assert union_length(a_starts, a_ends) == len(covered_a)
    assert intersection_length(a_starts, a_ends, b_starts, b_ends) == len(covered_a & covered_b)


epoch_intervals = st.lists(
    st.tuples(
        st.integers(1_700_000_000_000_000_000, 1_700_000_000_010_000_000), st.integers(0, 3_000_000)
    ).map(lambda p: (p[0], p[0] + p[1])),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(intervals=epoch_intervals)
def test_union_length_is_exact_at_epoch_scale(intervals: list[tuple[int, int]]) -> None:
    starts, ends = [s for s, _ in intervals], [e for _, e in intervals]
    assert union_length(
        np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
    ) == _sorted_loop_union(starts, ends)


def _loaded_busy(tmp_path: Path, scenario: Scenario, variant: Variant) -> Callable[[int], int]:
    (capture,) = load(write_result_dir(scenario, tmp_path, variant))
    k = _compute(capture.kernels)

    def busy(stream: int) -> int:
        mine = k.filter(pl.col("stream_id") == stream)
        return union_length(mine["start_ns"].to_numpy(), mine["end_ns"].to_numpy())

    return busy


def test_loaded_busy_time_equals_the_expected_figures(tmp_path: Path) -> None:
    built = scenarios.partial_dual_stream(runs=1, layers=3)
    for index, variant in enumerate(
        (
            Variant(),
            Variant(level="Level0"),
            Variant(version="2026", level="Level0", trace=False, db=True),
        )
    ):
        busy = _loaded_busy(tmp_path / str(index), built.scenarios[0], variant)
        for stream in built.expected.streams:
            assert busy(stream.stream_id) == stream.busy_ns
