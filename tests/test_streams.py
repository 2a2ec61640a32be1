"""Stream level: busy sets, the main stream, pair overlap, parallelism, concurrency."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from overlap_check.judge.pipeline import analyze_captures
from overlap_check.measure.runs import make_samples
from overlap_check.measure.streams import (
    choose_main_stream,
    pair_figure,
    pair_results,
    rank_summary,
    stream_sets,
    stream_stats,
)
from overlap_check.model import Capture, Options, Thresholds
from overlap_check.model.table import compute_kernels, conform

T0 = 1_736_408_883_704_643_212


def capture(rows: list[tuple[str, int | None, int, int]], path: str = "run") -> Capture:
    """rows: name, stream (None: a communication row), start, end in ns after T0."""
    frame = pl.DataFrame(
        {
            "name": [r[0] for r in rows],
            "stream_id": [r[1] for r in rows],
            "start_ns": [T0 + r[2] for r in rows],
            "end_ns": [T0 + r[3] for r in rows],
            "is_communication": [r[1] is None for r in rows],
            "rank": [0] * len(rows),
        },
        schema_overrides={"stream_id": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64},
    )
    return Capture(path, "kernel_details.csv", 0, 0, "Level1", None, conform(frame))


ROWS = [
    ("MatMul", 2, 0, 100),
    ("Add", 2, 150, 250),
    ("SideA", 3, 50, 175),
    ("Tiny", 5, 300, 310),
    ("hcom_allReduce", None, 0, 10_000),  # communication: never a stream, never busy time
]


def test_stream_sets_and_stats() -> None:
    sets = stream_sets(compute_kernels(capture(ROWS).kernels))
    stats = {s.stream_id: (s.kernels, s.busy_ns) for s in stream_stats(sets)}
    assert stats == {2: (2, 100 + 100), 3: (1, 125), 5: (1, 10)}
    assert sets.kernel_ns == 100 + 100 + 125 + 10
    assert sets.wall_ns == 310 - 0  # the communication row's 10 µs do not stretch the span
    assert sets.concurrent_ns == (100 - 50) + (175 - 150)


def test_pair_overlap_by_hand() -> None:
    sets = stream_sets(compute_kernels(capture(ROWS).kernels))
    assert choose_main_stream([sets], None) == 2  # 200 ns busy beats 125 and 10
    # busy(2) ∩ busy(3) = [50, 100] + [150, 175] = 50 + 25.
    assert pair_figure(sets, 2, 3) == (75, 75 / min(200, 125), 200, 125)
    assert pair_figure(sets, 2, 5) == (0, 0.0, 200, 10)
    assert pair_figure(sets, 2, 9) is None


def test_merged_kernels_of_one_stream_count_once() -> None:
    rows = [("A", 2, 0, 100), ("B", 2, 50, 120), ("S", 3, 90, 200)]
    sets = stream_sets(compute_kernels(capture(rows).kernels))
    # Stream 2 busy = [0, 120] = 120 (not 100 + 70); overlap with [90, 200] = 30.
    assert pair_figure(sets, 2, 3) == (30, 30 / min(120, 110), 120, 110)


def test_main_stream_ties_go_to_the_lowest_id_and_can_be_forced() -> None:
    rows = [("A", 7, 0, 100), ("B", 4, 0, 100)]
    sets = stream_sets(compute_kernels(capture(rows).kernels))
    assert choose_main_stream([sets], None) == 4
    assert choose_main_stream([sets], 7) == 7
    assert choose_main_stream([], None) is None


def test_stream_pairs_and_rank_summary_use_warm_runs() -> None:
    cold = capture([("A", 2, 0, 100), ("S", 3, 0, 100)])  # fully overlapped
    warm = capture([("A", 2, 0, 100), ("S", 3, 100, 200)])  # serial
    samples, plan = make_samples([cold, cold, warm, warm, warm], "run", 2, 5)
    sets = [stream_sets(s.kernels) for s in samples]
    figures = [{3: pair_figure(s, 2, 3)} for s in sets]
    pairs = pair_results(0, 2, samples, figures, Thresholds(), plan.provisional)
    assert len(pairs) == 1
    pair = pairs[0]
    assert (pair.main, pair.side, pair.overlap_pct, pair.verdict) == (2, 3, 0.0, "fake")
    assert [r.overlap_pct for r in pair.per_run] == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert [r.warm for r in pair.per_run] == [False, False, True, True, True]
    summary = rank_summary(0, samples, sets, 2)
    assert summary.parallelism == (100 + 100) / 200
    assert summary.concurrent_ns == 0.0
    assert summary.wall_ns == 200.0


def test_a_stream_with_no_figure_in_a_warm_sample_is_no_pair() -> None:
    cold = capture([("A", 2, 0, 100), ("S", 3, 0, 100), ("C", 4, 50, 150)])
    warm = capture([("A", 2, 0, 100), ("S", 3, 80, 180)])
    samples, plan = make_samples([cold, cold, warm], "run", 2, 5)
    sets = [stream_sets(s.kernels) for s in samples]
    figures = [{side: pair_figure(s, 2, side) for side in s.busy if side != 2} for s in sets]
    # Stream 4 ran in the cold runs only; stream 3 is judged on the warm run alone.
    (pair,) = pair_results(0, 2, samples, figures, Thresholds(), plan.provisional)
    assert pair.side == 3
    assert pair.overlap_ns == 100 - 80
    assert pair.overlap_pct == (100 - 80) / min(100, 100)
    assert [(r.run, r.warm, r.overlap_pct) for r in pair.per_run] == [
        (1, False, 100 / 100),
        (2, False, 100 / 100),
        (3, True, 20 / 100),
    ]
    assert pair.verdict == "partial"
    assert pair.provisional


def test_single_stream_capture_has_no_pair_and_passes_unless_strict() -> None:
    runs = [capture([("A", 2, 0, 100), ("B", 2, 100, 200)], path=f"r{i}") for i in range(5)]
    report = analyze_captures(runs, Options())
    assert report.stream_pairs == ()
    assert report.exit_code == 0
    assert (
        "rank 0: a single compute stream, 2, and no plan: no stream pair to judge"
        in (report.notes[0])
    )
    strict = analyze_captures(runs, Options(strict=True))
    assert strict.exit_code == 1
    assert strict.gate_reasons[0].startswith("rank 0: only stream 2 ran compute kernels")


def test_stream_level_gate_by_pair_verdicts() -> None:
    real = [capture([("A", 2, 0, 100), ("S", 3, 20, 80)], path=f"r{i}") for i in range(5)]
    report = analyze_captures(real, Options())
    assert report.stream_pairs[0].overlap_pct == 60 / 60
    assert report.exit_code == 0 and report.gate_reasons == ()
    fake = [capture([("A", 2, 0, 100), ("S", 3, 100, 180)], path=f"r{i}") for i in range(5)]
    report = analyze_captures(fake, Options())
    assert report.exit_code == 1
    assert report.gate_reasons == (
        "rank 0: stream 3 vs main stream 2: verdict fake (busy-time overlap_pct 0.000) fails "
        "the gate (--fail-on partial)",
    )
    assert analyze_captures(fake, Options(fail_on="never")).exit_code == 0


def test_real_capture_streams_2_and_3(real_profiles: Path) -> None:
    from overlap_check.readers import load

    (cap,) = load(real_profiles / "torch_npu-level1-text" / "rank0_ascend_pt")
    sets = stream_sets(compute_kernels(cap.kernels))
    assert sorted(sets.busy) == [2, 3]
    # Stream 3 holds two DSA_SQE kernels (aclnnDropoutGenMaskV2):
    #   1736408883714269.685 µs + 3.400 µs  and  1736408883717530.550 µs + 2.120 µs.
    # Stream 2 around them (kernel_details.csv):
    #   TransposeAiCore ends   1736408883713164.263 + 24.421 = ...713188.684
    #   DropoutDoMask   starts 1736408883714942.058     (idle gap holds the first DSA kernel)
    #   InplaceRelu     ends   1736408883716635.712 + 8.260  = ...716643.972
    #   DropoutDoMask   starts 1736408883718180.483     (idle gap holds the second)
    # Both DSA kernels lie inside idle gaps of stream 2: intersection = 0 ns.
    assert sets.busy_ns(3) == 3_400 + 2_120
    overlap, pct, _, side_busy = pair_figure(sets, 2, 3)  # type: ignore[misc]
    assert overlap == 0
    assert pct == 0 / min(sets.busy_ns(2), 3_400 + 2_120)
    assert side_busy == 5_520
    assert sets.busy_ns(2) == 8_868_217  # the JSON example's busy_us 8868.217
