"""End to end through the readers: generator scenarios give their known answers.

Each scenario is written as real torch_npu result directories (synth),
read back by the readers and judged by ``pipeline.check``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from overlap_check.judge.pipeline import analyze_captures, check
from overlap_check.model import Capture, Options, Plan, Report
from overlap_check.model.table import conform
from overlap_check.readers.discover import Source
from overlap_check.report import json as json_report
from overlap_check.report import text as text_report
from synth import Kernel, Scenario, Variant, scenarios, write_result_dir, write_runs
from synth.expected import Built

PLAN = Plan(
    "moe-shared-expert",
    side="SharedExpert",
    dominator="GroupedMatmul",
    side_stream=3,
    main_stream=2,
)
INFERRED = Plan("moe-shared-expert", side="SharedExpert", dominator="GroupedMatmul")


def written(built: Built, root: Path) -> list[Path]:
    return write_runs(built.scenarios, root, built.variant)


def judge(built: Built, root: Path, plan: Plan = PLAN, **options: object) -> Report:
    return check(written(built, root), Options(plans=(plan,), **options))  # type: ignore[arg-type]


def test_real_dual_stream(tmp_path: Path) -> None:
    built = scenarios.real_dual_stream()
    report = judge(built, tmp_path)
    (plan,) = report.plans
    assert plan.overlap_pct == built.expected.plan().overlap_pct == 1.0
    assert plan.verdict == "real"
    assert report.exit_code == 0 and report.verdict == "pass"
    assert plan.runs_used == 5 - 2
    assert plan.diagnosis.startswith("3c real overlap")


def test_fake_dual_stream_names_cast_first(tmp_path: Path) -> None:
    built = scenarios.fake_dual_stream()
    report = judge(built, tmp_path, INFERRED)
    (plan,) = report.plans
    assert (plan.side_stream, plan.main_stream) == (3, 2)  # inferred from the kernels
    assert plan.overlap_pct == 0.0 and plan.verdict == "fake"
    assert report.exit_code == 1
    expected = built.expected.plan()
    assert plan.barrier_candidates[0].name == expected.barrier_name
    assert "Cast" in plan.barrier_candidates[0].name
    # 4 layers x 3 warm runs, the Cast is the first main op after every side window.
    assert plan.barrier_candidates[0].occurrences == 4 * 3 == plan.fake_occurrences
    assert (
        "put that pre-computation in the stream-switch block, the wait after the dominator"
        in plan.diagnosis
    )


def test_partial_exact_fraction(tmp_path: Path) -> None:
    built = scenarios.partial_dual_stream(fraction=0.25)
    (plan,) = judge(built, tmp_path).plans
    # The last 41 µs of the 164 µs side window lie under the 300 µs dominator.
    assert plan.overlap_pct == 41_000 / min(164_000, 300_000)
    assert plan.overlap_pct == built.expected.plan().overlap_pct
    assert plan.verdict == "partial"


@pytest.mark.parametrize("fake", [False, True])
def test_60_layers_pair_one_to_one(tmp_path: Path, fake: bool) -> None:
    built = scenarios.layered_model(layers=60, fake=fake)
    (plan,) = judge(built, tmp_path).plans
    assert [r.occurrences for r in plan.per_run] == [60] * 5
    assert [r.judged for r in plan.per_run] == [60] * 5
    assert plan.verdict == ("fake" if fake else "real")
    assert plan.overlap_pct == built.expected.plan().overlap_pct


def test_cold_runs_are_discarded(tmp_path: Path) -> None:
    built = scenarios.warm_cold_runs(runs=5, cold=2)
    expected = built.expected.plan()
    report = judge(built, tmp_path)
    (plan,) = report.plans
    assert [r.warm for r in plan.per_run] == [False, False, True, True, True]
    assert [r.overlap_pct for r in plan.per_run] == pytest.approx(list(expected.per_run))
    assert plan.overlap_pct == pytest.approx(expected.overlap_pct)
    assert plan.verdict == expected.verdict == "real"
    # Keeping the cold runs would flip the verdict:
    kept = judge(built, tmp_path / "kept", warmup=0).plans[0]
    assert kept.overlap_pct == pytest.approx(expected.all_runs_overlap_pct)
    assert kept.verdict != "real"


def test_run_order_is_capture_order_not_directory_names(tmp_path: Path) -> None:
    built = scenarios.warm_cold_runs(runs=5, cold=2)
    paths = written(built, tmp_path / "runs")
    # Rename so that alphabetical order is the reverse of capture order.
    for i, path in enumerate(paths):
        path.rename(path.with_name(f"{'zyxwv'[i]}_{path.name}"))
    assert sorted(p.name for p in (tmp_path / "runs").iterdir())[0].startswith("v_")
    report = check([tmp_path / "runs"], Options(plans=(PLAN,)))
    assert [Path(r.path).name[0] for r in report.runs] == list("zyxwv")
    (plan,) = report.plans
    assert plan.per_run[0].overlap_pct == 0.0  # the first capture is the cold, fake one
    assert plan.verdict == "real"


def test_two_rank_job(tmp_path: Path) -> None:
    built = scenarios.two_rank_job()
    report = judge(built, tmp_path)
    by_rank = {p.rank: p for p in report.plans}
    assert by_rank[0].verdict == "real" and by_rank[0].overlap_pct == 1.0
    assert by_rank[1].verdict == "fake" and by_rank[1].overlap_pct == 0.0
    assert [len(p.per_run) for p in report.plans] == [5, 5]
    assert sorted(r.rank for r in report.runs) == [0] * 5 + [1] * 5
    assert report.exit_code == 1
    assert report.worst_rank == 1
    # rank 1's side work runs while the main stream waits on an EVENT_WAIT (a task, not
    # compute): none of it is hidden
    assert by_rank[1].hidden_pct == 0.0
    assert report.gate_reasons == (
        "plan moe-shared-expert, rank 1: verdict fake (hidden_pct 0.000) fails the gate "
        "(--fail-on partial)",
    )
    assert "Worst rank: 1" in text_report.render(report)
    # Communication rows never make a stream.
    assert all(s.stream_id in (2, 3) for r in report.runs for s in r.streams)
    assert all(r.communication > 0 for r in report.runs)


def test_level0_event_wait_is_not_work(tmp_path: Path) -> None:
    built = scenarios.level0_event_wait()
    report = judge(built, tmp_path)
    assert report.runs[0].level == "Level0"
    (plan,) = report.plans
    assert plan.verdict == built.expected.plan().verdict == "fake"
    assert plan.overlap_pct == 0.0
    # The EVENT_WAIT spanning the dominator is not busy time of stream 3.
    assert report.stream_pairs[0].overlap_pct == 0.0


def test_touching_windows_do_not_overlap(tmp_path: Path) -> None:
    built = scenarios.touching_windows()
    (plan,) = judge(built, tmp_path).plans
    assert plan.overlap_pct == 0.0
    assert plan.verdict == "fake"


def test_not_split(tmp_path: Path) -> None:
    built = scenarios.not_split()
    (plan,) = judge(built, tmp_path).plans
    assert plan.verdict == "not-split"
    assert plan.overlap_pct is None
    # 5 runs x 4 layers of the three shared-expert ops (gate-up and down MatMulV3, one
    # SwiGlu), all left on the main stream 2: counted by op type
    assert (
        plan.placement
        == plan.stayed
        == (
            f"MatMulV3 x{5 * 4 * 2} on stream 2",
            f"SwiGlu x{5 * 4} on stream 2",
        )
    )
    assert plan.diagnosis.startswith("3a logical split failed")


def test_provisional_and_strict(tmp_path: Path) -> None:
    built = scenarios.real_dual_stream(runs=3)
    paths = written(built, tmp_path)
    report = check(paths, Options(plans=(PLAN,)))
    (plan,) = report.plans
    assert plan.provisional and plan.runs_used == 1  # warm-up min(2, 3 - 1) = 2
    assert report.exit_code == 0
    assert any("provisional" in note for note in report.notes)
    strict = check(paths, Options(plans=(PLAN,), strict=True))
    assert strict.exit_code == 1
    assert strict.gate_reasons == ("rank 0: provisional result (fewer than 5 runs) and --strict",)
    single = check(paths[:1], Options(plans=(PLAN,)))
    assert single.plans[0].runs_used == 1 and single.plans[0].per_run[0].warm


def test_stream_level_without_plan(tmp_path: Path) -> None:
    built = scenarios.fake_dual_stream()
    report = check(written(built, tmp_path), Options())
    assert report.plans == ()
    assert [(p.main, p.side, p.verdict) for p in report.stream_pairs] == [(2, 3, "fake")]
    assert report.exit_code == 1
    (summary,) = report.ranks
    assert summary.main_stream == 2
    assert summary.concurrent_ns == 0.0
    assert summary.parallelism <= 1.0


# ----------------------------------------------------------------------------- per step

T0 = 1_736_408_883_704_643_212


def stepped_capture() -> Capture:
    """Five steps; in steps 1-2 (cold) the side op runs under the dominator, in 3-5 before it."""
    rows = []
    for step in range(1, 6):
        b = step * 1000
        side = (b + 400, b + 500) if step <= 2 else (b + 100, b + 200)
        rows += [
            ("GroupedMatmul", 2, b + 300, b + 700, step),
            ("SharedExpert", 3, side[0], side[1], step),
        ]
    frame = pl.DataFrame(
        {
            "name": [r[0] for r in rows],
            "stream_id": [r[1] for r in rows],
            "start_ns": [T0 + r[2] for r in rows],
            "end_ns": [T0 + r[3] for r in rows],
            "step": [r[4] for r in rows],
            "is_communication": [False] * len(rows),
        }
    )
    return Capture("one", "kernel_details.csv", 0, 0, "Level1", None, conform(frame))


def test_per_step_samples() -> None:
    report = analyze_captures([stepped_capture()], Options(plans=(PLAN,), per="step"))
    (plan,) = report.plans
    assert [r.sample for r in plan.per_run] == [f"run 1 step {s}" for s in range(1, 6)]
    assert [r.overlap_pct for r in plan.per_run] == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert plan.verdict == "fake" and not plan.provisional
    assert report.runs[0].warm  # the run holds warm steps
    per_run = analyze_captures([stepped_capture()], Options(plans=(PLAN,)))
    # As one run (one sample): occurrence figures 1, 1, 0, 0, 0 -> median 0.0, provisional.
    (whole,) = per_run.plans[0].per_run
    assert (whole.occurrences, whole.judged, whole.overlap_pct) == (5, 5, 0.0)
    assert per_run.plans[0].provisional


# ----------------------------------------------------------------------------- reports


def test_json_report_schema(tmp_path: Path) -> None:
    built = scenarios.fake_dual_stream()
    report = judge(built, tmp_path)
    data = json.loads(json_report.render(report))
    assert data["schema_version"] == 1
    assert (data["verdict"], data["exit_code"]) == ("fail", 1)
    assert data["thresholds"] == {"real": 0.5, "fake": 0.05, "fake_share": 0.25}
    run = data["runs"][0]
    assert {"index", "path", "rank", "warm", "source", "streams", "skipped_rows"} <= set(run)
    assert (run["index"], run["warm"], run["source"]) == (1, False, "kernel_details.csv")
    stream = next(s for s in run["streams"] if s["stream_id"] == 3)
    busy = report.runs[0].streams[1].busy_ns
    assert stream["busy_us"] == round(busy / 1000, 3)
    pair = data["stream_pairs"][0]
    assert {"rank", "main", "side", "overlap_us", "overlap_pct", "verdict"} <= set(pair)
    plan = data["plans"][0]
    assert plan["method"] == "window" and plan["verdict"] == "fake"
    assert {"run", "warm", "overlap_pct", "occurrences", "busy_overlap_pct"} <= set(
        plan["per_run"][0]
    )
    worst = plan["per_run"][2]["worst"][0]
    occ = report.plans[0].per_run[2].worst[0]
    assert worst["overlap_pct"] == 0.0 and worst["status"] == "ok"
    assert occ.side_end_ns is not None and occ.side_start_ns is not None
    assert worst["side_end_us"] - worst["side_start_us"] == pytest.approx(
        (occ.side_end_ns - occ.side_start_ns) / 1000
    )
    barrier = plan["barrier_candidates"][0]
    assert barrier["name"] == built.expected.plan().barrier_name
    candidate = report.plans[0].barrier_candidates[0]
    origin = next(r.origin_ns for r in report.runs if r.index == candidate.run)
    assert origin is not None
    assert barrier["start_us"] == round((candidate.start_ns - origin) / 1000, 3)
    assert barrier["start_ns"] == candidate.start_ns
    assert barrier["gap_us"] == round(candidate.gap_ns / 1000, 3)
    assert data["cores"]["device"] == {
        "aicore": 24,
        "vectorcore": 48,
        "source": "info.json",
        "guessed": False,
        "detail": data["cores"]["device"]["detail"],
    }


def test_text_report(tmp_path: Path) -> None:
    built = scenarios.warm_cold_runs()
    report = judge(built, tmp_path)
    text = text_report.render(report)
    assert text.startswith("overlap-check ")
    assert "PASS (exit 0)" in text.splitlines()[0]
    assert "moe-shared-expert" in text and "real" in text
    # hidden_pct per run first (it decides), each run's window figure beside it
    assert "run 1 (cold) 0.000 (overlap_pct 0.000), run 2 (cold) 0.000" in text
    assert "3/5 runs" in text  # 5 runs, the first 2 cold: 5 - 2 judged
    assert "Stream pairs" in text and "Runs" in text


@pytest.mark.parametrize(
    "args",
    [
        [],  # stream level: the main stream is decided over all runs of each rank
        ["--side", "SharedExpert", "--dominator", "GroupedMatmul"],  # plan streams too
        ["--side", "SharedExpert", "--per", "step"],  # no dominator regex, per step
    ],
)
def test_each_capture_is_read_once_per_analyze(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    from click.testing import CliRunner

    from overlap_check.cli import cli
    from overlap_check.readers import capture as capture_reader

    scenarios.two_rank_job(runs=3, layers=2).write(tmp_path)
    read = capture_reader.read_capture
    paths: list[str] = []

    def counted(source: object, **keywords: Any) -> Capture:
        result = read(source, **keywords)  # type: ignore[arg-type]
        paths.append(result.path)
        return result

    monkeypatch.setattr(capture_reader, "read_capture", counted)
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path), "--format", "json", *args])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    # 2 ranks x 3 runs, each read exactly once
    assert len(report["runs"]) == 2 * 3
    assert sorted(paths) == sorted(run["path"] for run in report["runs"])


# ---------------------------------------------------- device cores decided over all runs

T0_NS = 1_736_408_883_704_643_212  # run origins are 1 s apart
US_NS = 1_000


def matmul_and_add(
    run: int,
    main_blocks: int,
    side: list[tuple[str, int, int, int]],
    cores: tuple[int, int] = (24, 48),
) -> Scenario:
    """Run ``run``: stream 2 runs Matmul [0, 100) us asking ``main_blocks`` AI-core blocks,
    stream 3 the ``side`` kernels (name, start us, end us, blocks); ``cores``: its info.json
    (when the variant writes one)."""
    origin = T0_NS + run * 1_000_000_000

    def at(name: str, stream: int, start: int, end: int, blocks: int) -> Kernel:
        return Kernel(name, stream, origin + start * US_NS, (end - start) * US_NS,
                      block_num=blocks)  # fmt: skip

    kernels = (at("Matmul", 2, 0, 100, main_blocks), *(at(n, 3, *k) for n, *k in side))
    return Scenario(name=f"cores-{run}", kernels=kernels, aicore=cores[0], vectorcore=cores[1])


def analyzed_reading_once(
    scenarios_: list[Scenario], variant: Variant, root: Path, monkeypatch: pytest.MonkeyPatch
) -> Report:
    """``check`` on the runs written out, asserting that each capture is read exactly once."""
    from overlap_check.readers import capture as capture_reader

    paths = [write_result_dir(s, root / s.name, variant) for s in scenarios_]
    read = capture_reader.read_capture
    reads: list[str] = []

    def counted(source: Source, **keywords: Any) -> Capture:
        reads.append(str(source.path))
        return read(source, **keywords)

    monkeypatch.setattr(capture_reader, "read_capture", counted)
    report = check(paths, Options(warmup=1), workers=1)
    assert sorted(reads) == sorted(str(p) for p in paths)  # each once, none again
    return report


def test_contention_with_cores_observed_over_all_runs_reads_each_capture_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No info.json: the device cores are the largest Block Num of all runs, 24 (run 3),
    # above run 2's own largest, 16.
    runs = [
        matmul_and_add(1, 20, [("Add", 20, 60, 20)]),  # cold (warm-up 1): not swept
        matmul_and_add(2, 16, [("Add", 20, 60, 10), ("Mul", 60, 90, 4)]),
        matmul_and_add(3, 24, [("Add", 20, 60, 1)]),
    ]
    report = analyzed_reading_once(runs, Variant(prof_dir=False), tmp_path, monkeypatch)
    cores = report.cores
    assert cores is not None and cores.device is not None
    assert (cores.device.aicore, cores.device.source) == (max(20, 16, 24), "observed")
    # With 24 cores: run 2 [20, 60) 16 + 10 = 26 > 24 (excess 2 x 40 us), [60, 90)
    # 16 + 4 = 20 <= 24; run 3 [20, 60) 24 + 1 = 25 > 24 (excess 1 x 40 us). (With its
    # own 16 cores run 2 would be over on [20, 90), 70 us: it is not judged with those.)
    origins = {r.index: r.origin_ns for r in report.runs}
    assert [
        (c.run, c.start_ns - (origins[c.run] or 0), c.duration_ns, c.demand, c.maximum,
         c.excess_block_ns, c.kernels, c.streams)
        for c in cores.contention
    ] == [
        (2, 20 * US_NS, 40 * US_NS, 16 + 10, 24, (26 - 24) * 40 * US_NS, ("Matmul", "Add"), (2, 3)),
        (3, 20 * US_NS, 40 * US_NS, 24 + 1, 24, (25 - 24) * 40 * US_NS, ("Matmul", "Add"), (2, 3)),
    ]  # fmt: skip
    assert (cores.contention_count, cores.contention_runs) == (2, 2)
    assert cores.aicore_over_limit_ns == cores.over_limit_ns == (40 + 40) * US_NS
    # the same from worker processes (what they send back holds no kernel table)
    paths = [tmp_path / s.name for s in runs]
    assert check(paths, Options(warmup=1), workers=2) == report


def test_contention_with_the_smallest_info_json_reads_each_capture_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run 2's info.json says 24 cores, run 3's 20: the smallest, 20, is used for all runs.
    runs = [
        matmul_and_add(1, 12, [("Add", 20, 60, 12)], (24, 48)),  # cold
        matmul_and_add(2, 12, [("Add", 20, 60, 10), ("Mul", 60, 90, 8)], (24, 48)),
        matmul_and_add(3, 4, [("Add", 20, 60, 4)], (20, 40)),
    ]
    report = analyzed_reading_once(runs, Variant(), tmp_path, monkeypatch)
    cores = report.cores
    assert cores is not None and cores.device is not None
    assert (cores.device.aicore, cores.device.vectorcore) == (min(24, 20), min(48, 40))
    # With 20 cores: run 2 [20, 60) 12 + 10 = 22 > 20 (excess 2 x 40 us), [60, 90)
    # 12 + 8 = 20 <= 20; run 3 4 + 4 = 8. (With its own 24 cores run 2 has no contention.)
    ((run, start, duration, demand, excess),) = [
        (c.run, c.start_ns, c.duration_ns, c.demand, c.excess_block_ns) for c in cores.contention
    ]
    origin = {r.index: r.origin_ns for r in report.runs}[2] or 0
    assert (run, start - origin, duration) == (2, 20 * US_NS, 40 * US_NS)
    assert (demand, excess) == (12 + 10, (22 - 20) * 40 * US_NS)
    assert cores.aicore_over_limit_ns == 40 * US_NS
