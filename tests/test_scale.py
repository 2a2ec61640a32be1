"""The per-capture path (figures in worker processes, judged in the parent) gives one Report
however it runs: in this process, or in one or two workers. The decisions over all runs of
a rank are checked on a small job with hand-computed figures. No timing here (bench/ has it).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.judge import decide, pipeline
from overlap_check.measure import figures, workers
from overlap_check.measure.streams import (
    choose_main_stream,
    stream_sets,
)
from overlap_check.model import (
    Capture,
    CoreLimit,
    DeviceConfig,
    DeviceCores,
    Options,
    Plan,
    Report,
)
from overlap_check.model.errors import InputError, OverlapCheckError
from overlap_check.model.table import compute_kernels, conform
from overlap_check.readers import load_paths
from overlap_check.report import json as json_report
from synth import Scenario, Variant, big_frames
from synth.layout import write_frames_result_dir

MS = 1_000_000
KERNELS = 1_500  # per capture: small, yet 10 steps and every op of synth.big
SIDE_DOM = Plan("swiglu", side="SwiGlu", dominator="GroupedMatmul")
SIDE_ONLY = Plan("casts", side="Cast")  # no dominator regex: clusters, longest main kernel
LIMITED = Plan("limited", side="SwiGlu", dominator="GroupedMatmul", limit_core=CoreLimit(aicore=20))


def exhaustive(captures: Sequence[Capture], options: Options) -> Report:
    """The captures judged in this process (every capture's figures cover every stream)."""
    return pipeline.analyze_captures(captures, options)


T0 = 1_736_408_883_704_643_212
US = 1_000


def kernel(name: str, stream: int, start_us: int, end_us: int) -> dict[str, object]:
    return {"name": name, "stream_id": stream, "start_ns": T0 + start_us * US,
            "end_ns": T0 + end_us * US, "accelerator_core": "AI_CORE", "block_num": 1,
            "is_communication": False}  # fmt: skip


def in_memory(rows: list[dict[str, object]], cores: tuple[int, int]) -> Capture:
    return Capture(path="synthetic", source="kernel_details.csv", rank=0, device=0,
                   level="Level1", capture_time_ns=None, kernels=conform(pl.DataFrame(rows)),
                   device_cores=DeviceCores(*cores, "info.json"))  # fmt: skip


def test_every_cross_run_decision_takes_all_runs() -> None:
    # run 1: stream 2 GroupedMatmul [20, 80) us, stream 3 SwiGlu [10, 50)
    # run 2: stream 2 Add [45, 60), stream 3 GroupedMatmul [0, 40) then SwiGlu [40, 50)
    one = [kernel("GroupedMatmul", 2, 20, 80), kernel("SwiGlu", 3, 10, 50)]
    two = [kernel("Add", 2, 45, 60), kernel("GroupedMatmul", 3, 0, 40), kernel("SwiGlu", 3, 40, 50)]
    captures = [in_memory(one, (24, 48)), in_memory(two, (20, 40))]
    report = pipeline.analyze_captures(captures, Options(plans=(SIDE_DOM,), warmup=0))
    # main stream, most busy time over both runs: stream 2 60 + 15 = 75 us, stream 3
    # 40 + 50 = 90 us -> 3, although run 1 alone says 2
    (rank,) = report.ranks
    assert rank.main_stream == 3
    (pair,) = report.stream_pairs
    assert (pair.main, pair.side) == (3, 2)
    # run 1: overlap [20, 50) = 30 us of min(40, 60); run 2: [45, 50) = 5 us of min(50, 15)
    assert [(r.overlap_ns, r.overlap_pct) for r in pair.per_run] == [
        (30 * US, 30 / 40),
        (5 * US, 5 / 15),
    ]
    # the plan's main stream, most dominator time: stream 2 60 us, stream 3 40 us -> 2 (not
    # the rank's 3); its side, most SwiGlu time off stream 2: stream 3 (40 + 10 us)
    (plan,) = report.plans
    assert (plan.main_stream, plan.side_stream) == (2, 3)
    # device cores: the captures disagree, the smaller one is used
    assert report.cores is not None and report.cores.device is not None
    assert (report.cores.device.aicore, report.cores.device.vectorcore) == (20, 40)


def test_a_run_whose_own_plan_main_missed_its_ranks_is_reduced_again_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # run 1: stream 2 GroupedMatmul [20, 80) us, stream 3 SwiGlu [10, 50)
    # run 2: stream 3 GroupedMatmul [0, 40) then SwiGlu [40, 50), stream 2 GroupedMatmul
    # [45, 60). Alone, run 2 would take stream 3 as the plan's main stream (40 us of
    # GroupedMatmul against 15); over both runs stream 2 has 60 + 15 = 75 us against 40.
    one = [kernel("GroupedMatmul", 2, 20, 80), kernel("SwiGlu", 3, 10, 50)]
    two = [kernel("GroupedMatmul", 3, 0, 40), kernel("SwiGlu", 3, 40, 50),
           kernel("GroupedMatmul", 2, 45, 60)]  # fmt: skip
    reduce = figures.capture_figures
    again: list[object] = []

    def counted(*args: object, **kwargs: object) -> figures.CaptureFigures:
        if args[4] is not None:
            again.append(args[4])
        return reduce(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(figures, "capture_figures", counted)
    captures = [in_memory(one, (24, 48)), in_memory(two, (24, 48))]
    report = pipeline.analyze_captures(captures, Options(plans=(SIDE_DOM,), warmup=0))
    assert again == [(2,)]  # run 2 only, for stream 2
    (plan,) = report.plans
    assert (plan.main_stream, plan.side_stream) == (2, 3)
    # run 1: SwiGlu [10, 50) under GroupedMatmul [20, 80): 30 of 40 us; run 2: SwiGlu
    # [40, 50) under GroupedMatmul [45, 60) on stream 2: 5 of 10 us
    assert [(r.overlap_pct, r.hidden_pct) for r in plan.per_run] == [
        (30 / 40, 30 / 40),
        (5 / 10, 5 / 10),
    ]


def test_a_second_reduction_builds_the_samples_figures_only() -> None:
    # its first reduction's pieces, contention and helpers are kept (workers._second):
    # building them again would cost a second reduction as much as the first
    run = [kernel("GroupedMatmul", 3, 0, 40), kernel("SwiGlu", 3, 40, 50),
           kernel("GroupedMatmul", 2, 45, 60)]  # fmt: skip
    options = Options(plans=(SIDE_DOM,), warmup=0)
    first = figures.capture_figures(in_memory(run, (24, 48)), options, None)
    second = figures.capture_figures(in_memory(run, (24, 48)), options, None, (), (2,))
    assert len(first.plans) == 1 and first.contention is not None and first.helpers
    assert (second.plans, second.contention, second.helpers) == ((), None, {})
    (sample,) = second.samples
    assert list(sample.plans[0]) == [2]  # the decided main stream's figures, none other
    # SwiGlu [40, 50) under GroupedMatmul [45, 60) on stream 2: 5 of 10 us
    assert sample.plans[0][2].run.hidden_pct == 5 / 10


def test_figures_built_again_for_the_decided_main_streams_are_the_first_ones(job: Path) -> None:
    # Every capture guesses wrong (no main stream), so every one is reduced a second time:
    # the report is the one where most keep their first figures.
    for name in ("plans", "per step", "forced main"):
        options = OPTIONS[name]
        expected = pipeline.check([job], options, workers=1)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(figures, "plan_main", lambda *args: None)
            assert_same(pipeline.check([job], options, workers=1), expected)


def test_a_capture_changed_between_its_two_reductions_is_an_input_error(
    runs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the decisions were taken from the first reading: a second one of other kernels
    # (here its last row gone) cannot be merged with them
    copies = [Path(shutil.copytree(r, tmp_path / f"r{i}" / r.name)) for i, r in enumerate(runs)]
    decided = decide.undecided
    changed: list[str] = []

    def undecided(evidence: Sequence[figures.CaptureFigures], options: Options) -> object:
        again = decided(evidence, options)
        for i in again:
            kernel_file = (
                Path(evidence[i].capture.path) / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
            )
            kernel_file.write_text("".join(kernel_file.read_text().splitlines(True)[:-1]))
            changed.append(evidence[i].capture.path)
        return again

    monkeypatch.setattr(pipeline, "undecided", undecided)
    with pytest.raises(InputError, match="changed while it was read") as raised:
        pipeline.check(copies, Options(plans=(SIDE_DOM,)), workers=1)
    assert changed and str(raised.value).startswith(changed[0])


def write_capture(
    root: Path,
    *,
    rank: int,
    run: int,
    streams: tuple[int, ...],
    seed: int,
    cores: tuple[int, int] = (24, 48),
) -> Path:
    """One Level1 result dir of synth.big kernels; later runs end later (capture order)."""
    frames = big_frames(KERNELS, streams=streams, seed=seed)
    ends = (frames.kernels["start_ns"] + frames.kernels["dur_ns"]).to_numpy()
    last_end = int(ends.max())
    meta = Scenario(
        name=f"scale-{rank}-{run}",
        kernels=(),
        rank=rank,
        device=rank,
        aicore=cores[0],
        vectorcore=cores[1],
        capture_end_ns=last_end + (run + 1) * 1000 * MS,
        pid=4_000 + 10 * rank + run,
    )
    return write_frames_result_dir(meta, frames, root, Variant(trace=False))


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two ranks x 4 runs, written out of order. Rank 1 has three streams and a device
    that says 20/40 cores where rank 0 says 24/48 (the job is judged against 20/40)."""
    root = tmp_path_factory.mktemp("job")
    for run in (2, 0, 3, 1):
        write_capture(root, rank=0, run=run, streams=(2, 3), seed=run)
        write_capture(root, rank=1, run=run, streams=(2, 3, 5), seed=10 + run, cores=(20, 40))
    return root


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Five runs of one rank as five PATHs; streams 2 and 3 share the work evenly, so
    which one is the main stream changes from run to run."""
    root = tmp_path_factory.mktemp("runs")
    return [
        write_capture(root / f"r{run}", rank=0, run=run, streams=(2, 3), seed=20 + run)
        for run in range(5)
    ]


def assert_same(a: Report, b: Report) -> None:
    assert json_report.render(a) == json_report.render(b)
    assert a == b


OPTIONS = {
    "stream level": Options(),
    "plans": Options(plans=(SIDE_DOM, SIDE_ONLY)),
    "limits": Options(plans=(LIMITED,), device=DeviceConfig(ge_aicore_num="24|48")),
    "per step": Options(plans=(SIDE_DOM, SIDE_ONLY), per="step"),
    "forced main": Options(plans=(SIDE_ONLY,), main_stream=3, warmup=1),
}


@pytest.mark.parametrize("name", list(OPTIONS))
def test_workers_give_the_figures_of_the_kernel_tables_on_a_two_rank_job(
    job: Path, name: str
) -> None:
    options = OPTIONS[name]
    captures = load_paths([job])
    expected = exhaustive(captures, options)
    assert_same(pipeline.check([job], options, workers=2), expected)
    assert_same(pipeline.check([job], options, workers=1), expected)


def test_workers_give_the_figures_of_the_kernel_tables_on_runs_given_as_paths(
    runs: list[Path],
) -> None:
    options = Options(plans=(SIDE_DOM, SIDE_ONLY), order="time")
    paths = [runs[i] for i in (3, 0, 4, 1, 2)]
    captures = load_paths(paths, "time")
    expected = exhaustive(captures, options)
    assert [r.path for r in expected.runs] == [str(p) for p in runs]  # by capture time
    assert_same(without_order_note(pipeline.check(paths, options, workers=2)), expected)
    given = Options(plans=(SIDE_DOM,), order="given")
    expected = exhaustive(load_paths(paths, "given"), given)
    assert_same(without_order_note(pipeline.check(paths, given, workers=2)), expected)


def without_order_note(report: Report) -> Report:
    """The report less its note that the command line's order is not the capture order
    (which a report of captures in memory does not carry)."""
    kept = tuple(n for n in report.notes if "capture-time order" not in n and "--order" not in n)
    assert len(kept) == len(report.notes) - 1  # the paths above are out of capture order
    return replace(report, notes=kept)


def test_the_main_stream_differs_between_runs(runs: list[Path]) -> None:
    # the premise of the test above: no run alone can tell the rank's main stream
    mains = {
        choose_main_stream([stream_sets(compute_kernels(c.kernels))], None)
        for c in load_paths(runs)
    }
    assert mains == {2, 3}


def test_held_captures_and_paths_mix_in_the_given_order(runs: list[Path]) -> None:
    options = Options(plans=(SIDE_DOM,))
    held = load_paths(runs[3:])
    expected = exhaustive([*held, *load_paths(runs[:3])], options)
    assert_same(pipeline.check([*held, *runs[:3]], options, workers=2), expected)
    assert_same(
        pipeline.analyze_captures(load_paths(runs), options), exhaustive(load_paths(runs), options)
    )


def test_each_capture_is_reduced_once_though_its_cores_are_not_the_jobs(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[bool] = []
    reduce = figures.capture_figures

    def counted(*args: object, **kwargs: object) -> figures.CaptureFigures:
        if args[4] is None:  # not a second reduction for its plans
            calls.append(True)
        return reduce(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(figures, "capture_figures", counted)
    options = Options(plans=(SIDE_DOM, SIDE_ONLY))
    expected = exhaustive(load_paths([job]), options)
    # 8 captures, each once: rank 0's runs say 24/48 cores, the job is judged with 20/40,
    # and their contention evidence was kept for the fewest cores any info.json gives
    assert len(calls) == 8
    assert_same(pipeline.check([job], options, workers=1), expected)
    assert len(calls) == 2 * 8


def test_device_cores_decided_over_all_captures(job: Path) -> None:
    report = pipeline.check([job], Options(), workers=2)
    assert report.cores is not None
    device = report.cores.device
    assert device is not None
    assert (device.aicore, device.vectorcore) == (min(24, 20), min(48, 40))
    assert device.detail == "captures disagree (20/40, 24/48); smallest used"


def test_checked_captures_keep_metadata_without_kernels(job: Path) -> None:
    checked = pipeline.check_paths([job], Options(), workers=2)
    loaded = load_paths([job])
    assert [c.path for c in checked.captures] == [c.path for c in loaded]
    assert [(c.rank, c.capture_time_ns, c.device_cores) for c in checked.captures] == [
        (c.rank, c.capture_time_ns, c.device_cores) for c in loaded
    ]
    assert all(c.kernels.height == 0 for c in checked.captures)


# --------------------------------------------------------------------------- errors


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs, the second with a kernel_details.csv that is not one."""
    root = tmp_path_factory.mktemp("broken")
    dirs = [write_capture(root, rank=0, run=run, streams=(2, 3), seed=run) for run in range(3)]
    bad = dirs[1] / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    bad.write_text("not,a,kernel,table\n1,2,3,4\n", encoding="utf-8")
    return root


def serial_error(paths: Sequence[Path]) -> OverlapCheckError:
    with pytest.raises(OverlapCheckError) as raised:
        load_paths(paths)
    return raised.value


def test_a_worker_error_surfaces_unchanged(broken: Path) -> None:
    expected = serial_error([broken])
    with pytest.raises(OverlapCheckError) as raised:
        pipeline.check([broken], Options(), workers=2)
    assert type(raised.value) is type(expected)
    assert str(raised.value) == str(expected)
    assert raised.value.exit_code == expected.exit_code == 2


def test_a_missing_path_after_good_ones_is_the_error(runs: list[Path], tmp_path: Path) -> None:
    paths = [*runs[:2], tmp_path / "missing"]
    expected = serial_error(paths)
    with pytest.raises(InputError) as raised:
        pipeline.check(paths, Options(), workers=2)
    assert (
        str(raised.value) == str(expected) == f"{tmp_path / 'missing'}: no such file or directory"
    )


def test_a_read_error_comes_before_a_later_missing_path(broken: Path, tmp_path: Path) -> None:
    paths = [broken, tmp_path / "missing"]
    expected = serial_error(paths)
    with pytest.raises(OverlapCheckError) as raised:
        pipeline.check(paths, Options(), workers=2)
    assert str(raised.value) == str(expected)
    assert "kernel_details.csv" in str(expected)


@pytest.mark.parametrize("threshold", [0, 2**62])  # through the pool, and in the process
def test_cli_exit_code_and_message_of_a_worker_error(
    broken: Path, monkeypatch: pytest.MonkeyPatch, threshold: int
) -> None:
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", threshold)
    result = CliRunner().invoke(cli, ["analyze", str(broken), "--format", "json"])
    assert result.exit_code == 2
    assert f"overlap-check: error: {serial_error([broken])}" in result.output


def test_cli_report_through_the_pool_is_the_serial_one(
    job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["analyze", str(job), "--side", "SwiGlu", "--dominator", "GroupedMatmul", "-f", "json"]
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 2**62)
    serial = CliRunner().invoke(cli, args)
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 0)
    pooled = CliRunner().invoke(cli, args)
    assert pooled.exit_code == serial.exit_code
    assert pooled.stdout == serial.stdout


# --------------------------------------------------------------------------- worker count


def test_worker_count(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from overlap_check.readers.discover import discover

    sources = discover(job)
    assert len(sources) == 8
    assert workers.worker_count(sources, None) == 1  # a few MB: not worth a process
    assert workers.worker_count(sources[:1], 4) == 1  # never more workers than captures
    assert workers.worker_count(sources, 3) == 3
    monkeypatch.setattr(workers, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(workers, "cpu_count", lambda: 2)
    assert workers.worker_count(sources, None) == 2  # bounded by the cores
    assert workers.worker_count(sources[:1], None) == 1  # one capture: no pool
    monkeypatch.setattr(workers, "cpu_count", lambda: 16)
    assert workers.worker_count(sources, None) == 8  # bounded by the captures


class _DeadPool:
    """A process pool whose workers died: its submit raises BrokenProcessPool."""

    def __init__(self, workers: int, **kwargs: object) -> None:
        self.workers = workers

    def __enter__(self) -> _DeadPool:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def submit(self, *args: object) -> object:
        raise BrokenProcessPool("a worker died")


def test_jobs_of_dead_workers_are_reduced_here(job: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "ProcessPoolExecutor", _DeadPool)
    options = Options(plans=(SIDE_DOM,))
    assert_same(pipeline.check([job], options, workers=2), exhaustive(load_paths([job]), options))


@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_capture_alone_builds_its_plan_figures_for_its_own_main_streams_only(
    runs: list[Path], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One capture alone decides its rank's main streams itself: its plan figures are built
    # for those only, one main stream per plan, and it is never reduced a second time; the
    # Report is the one the figures built for the decided main streams give.
    options = OPTIONS[name]
    reduce = figures.capture_figures
    built: list[tuple[object, int]] = []

    def counted(*args: object, **kwargs: object) -> figures.CaptureFigures:
        out = reduce(*args, **kwargs)  # type: ignore[arg-type]
        built.append((args[4], max((len(p) for s in out.samples for p in s.plans), default=0)))
        return out

    monkeypatch.setattr(figures, "capture_figures", counted)
    for capture in load_paths(runs[:2]):
        built.clear()
        report = pipeline.analyze_captures([capture], options)
        assert built == [(None, 1 if options.plans else 0)]
        plan_mains = tuple(
            figures.figures_key(p.main_stream, pieces.matters)
            for p, pieces in zip(report.plans, reduce(capture, options, None).plans, strict=True)
        )
        again = reduce(capture, options, None, (), plan_mains)  # as a second reduction builds
        first = reduce(capture, options, None)
        assert plan_runs(again) == plan_runs(first)


def plan_runs(out: figures.CaptureFigures) -> list[dict[int | None, object]]:
    """Each sample's plan runs (occurrences, walls ...) by figures key."""
    return [{key: f.run for key, f in p.items()} for s in out.samples for p in s.plans]
