"""Finding captures under a PATH, and their order: by rank, then capture time, never by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from overlap_check.judge.pipeline import check
from overlap_check.model import Options
from overlap_check.readers import load, load_paths
from overlap_check.readers.discover import discover
from overlap_check.readers.metadata import dir_timestamp_ns

T0 = 1736408883704643  # µs
HEADER = "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us)"


def kernel_details(path: Path, start_us: int, names: tuple[str, ...] = ("K",)) -> Path:
    """A Level1 kernel_details.csv: one kernel per name on stream 2, 1 µs apart."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        f"50,4294967295,{i},2,{name},T,AI_CORE,{start_us + i}.000\t,0.500"
        for i, name in enumerate(names)
    ]
    path.write_text("\r\n".join([HEADER, *rows]) + "\r\n")
    return path


def result_dir(
    root: Path,
    name: str,
    *,
    rank: object = 0,
    end_ns: int | None = None,
    info_name: str | None = None,
    start_us: int = T0,
    level: str = "Level1",
) -> Path:
    """A torch_npu result dir with profiler_info and a kernel_details.csv."""
    directory = root / name
    kernel_details(directory / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", start_us)
    info: dict[str, object] = {
        "config": {"experimental_config": {"_profiler_level": level}},
        "rank_id": rank,
    }
    if end_ns is not None:
        info["end_info"] = {"collectionTimeEnd": end_ns, "MonotonicTimeEnd": 1}
    file_name = info_name or (f"profiler_info_{rank}.json" if rank != -1 else "profiler_info.json")
    (directory / file_name).write_text(json.dumps(info))
    return directory


def device_info(prof: Path, device: int, aicore: int, aiv: int) -> None:
    path = prof / f"device_{device}" / f"info.json.{device}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {"DeviceInfo": [{"id": device, "ai_core_num": aicore, "aiv_num": aiv}], "rank_id": -1}
        )
    )


def test_runs_are_ordered_by_collection_time_not_by_name(tmp_path: Path) -> None:
    # Names start with host_pid: listing order (b < c < z) is not capture order.
    result_dir(tmp_path, "host_900_20250101000003000_ascend_pt", end_ns=3_000, start_us=T0 + 3)
    result_dir(tmp_path, "host_100_20250101000001000_ascend_pt", end_ns=5_000, start_us=T0 + 5)
    result_dir(
        tmp_path / "nested" / "deeper", "host_500_x_ascend_pt", end_ns=1_000, start_us=T0 + 1
    )
    captures = load(tmp_path)
    assert [c.capture_time_ns for c in captures] == [1_000, 3_000, 5_000]
    assert [Path(c.path).name for c in captures] == [
        "host_500_x_ascend_pt",
        "host_900_20250101000003000_ascend_pt",
        "host_100_20250101000001000_ascend_pt",
    ]


def test_runs_without_collection_time_use_the_dir_timestamp(tmp_path: Path) -> None:
    result_dir(tmp_path, "zz_1_20250101000002000_ascend_pt", start_us=T0)
    result_dir(tmp_path, "aa_9_20250101000009500_ascend_pt", start_us=T0)
    result_dir(tmp_path, "mm_5_20250101000001000_ascend_pt", start_us=T0)
    captures = load(tmp_path)
    stamps = [Path(c.path).name.split("_")[2] for c in captures]
    assert stamps == ["20250101000001000", "20250101000002000", "20250101000009500"]


def test_dir_timestamp_is_read_as_utc_milliseconds() -> None:
    # 2025-01-01 00:00:01.500 UTC = 1735689601.5 s
    assert dir_timestamp_ns("host_1_20250101000001500_ascend_pt") == 1_735_689_601_500_000_000
    assert dir_timestamp_ns("rank0_ascend_pt") is None
    assert dir_timestamp_ns("PROF_000001_20260823165413436_00626258NIRJNPIC") == (
        dir_timestamp_ns("x_20260823165413436_ascend_pt")
    )


def test_ranks_are_kept_and_order_is_rank_then_time(tmp_path: Path) -> None:
    result_dir(tmp_path, "a_ascend_pt", rank=1, end_ns=10)
    result_dir(tmp_path, "b_ascend_pt", rank="0", end_ns=20)  # rank_id as text (newer files)
    result_dir(tmp_path, "c_ascend_pt", rank=0, end_ns=5)
    result_dir(tmp_path, "d_ascend_pt", rank=1, end_ns=1)
    result_dir(tmp_path, "e_ascend_pt", rank=-1, end_ns=0)  # -1: no rank
    captures = load(tmp_path)
    assert [(c.rank, c.capture_time_ns) for c in captures] == [
        (0, 5),
        (0, 20),
        (1, 1),
        (1, 10),
        (None, 0),
    ]
    assert captures[0].kernels["rank"].to_list() == [0]


def test_rank_from_the_profiler_info_file_name(tmp_path: Path) -> None:
    directory = result_dir(tmp_path, "x_ascend_pt", rank=3, end_ns=1)
    info = json.loads((directory / "profiler_info_3.json").read_text())
    del info["rank_id"]
    (directory / "profiler_info_3.json").write_text(json.dumps(info))
    (capture,) = load(directory)
    assert capture.rank == 3
    assert capture.level == "Level1"


def test_result_dirs_are_recognised_by_content_not_name(tmp_path: Path) -> None:
    # a wrapper-renamed dir with only profiler_info, and one with only ASCEND_PROFILER_OUTPUT
    result_dir(tmp_path, "rank0-run-A", end_ns=1)
    kernel_details(tmp_path / "renamed" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", T0)
    (tmp_path / "not_a_capture").mkdir()
    (tmp_path / "not_a_capture" / "notes.txt").write_text("hello")
    sources = sorted(discover(tmp_path), key=lambda s: s.path.name)
    assert [(s.path.name, s.kind) for s in sources] == [
        ("rank0-run-A", "ascend_pt"),
        ("renamed", "ascend_pt"),
    ]


def test_ascend_profiler_output_given_directly_means_its_result_dir(tmp_path: Path) -> None:
    directory = result_dir(tmp_path, "r_ascend_pt", rank=2, end_ns=7)
    (capture,) = load(directory / "ASCEND_PROFILER_OUTPUT")
    assert capture.path == str(directory)
    assert capture.rank == 2


def test_a_result_dir_with_a_prof_subdir_reads_device_cores(tmp_path: Path) -> None:
    directory = result_dir(tmp_path, "r_ascend_pt", end_ns=7)
    prof = directory / "PROF_000001_20250101000000000_ABCDEFGHIJKLMNOP"
    device_info(prof, 0, 24, 48)
    (prof / "host").mkdir()
    (capture,) = load(directory)
    assert capture.device_cores is not None
    assert (capture.device_cores.aicore, capture.device_cores.vectorcore) == (24, 48)
    assert capture.device_cores.source == "info.json"
    assert capture.device_cores.detail == str(prof / "device_0" / "info.json.0")
    assert capture.device == 0  # from device_0, the file has no Device_id column
    assert capture.kernels["device"].to_list() == [0]


OP_SUMMARY = (
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
    "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Num,Mix Block Num"
)


def test_prof_dir_with_sliced_op_summary(tmp_path: Path) -> None:
    prof = tmp_path / "PROF_000001_20260823165413436_00626258NIRJNPIC"
    out = prof / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    # two slices, the later kernels in the first file: concatenated, then sorted
    (out / "op_summary_slice_0_20260823165421.csv").write_text(
        f"{OP_SUMMARY}\n0,1,5,46,late,T,dynamic,AI_CORE,{T0 + 10}.000\t,1.000,0,20,0\n"
    )
    (out / "op_summary_slice_1_20260823165421.csv").write_text(
        f"{OP_SUMMARY}\n0,1,1,46,early,T,dynamic,AI_CORE,{T0}.000\t,2.000,0,20,0\n"
    )
    device_info(prof, 0, 20, 40)
    (capture,) = load(prof)
    assert capture.source == "op_summary"
    assert capture.kernels["name"].to_list() == ["early", "late"]
    assert capture.device_cores is not None
    assert (capture.device_cores.aicore, capture.device_cores.vectorcore) == (20, 40)
    assert capture.rank is None  # info.json rank_id -1
    assert capture.capture_time_ns == dir_timestamp_ns(prof.name)
    # the mindstudio_profiler_output dir given directly means its PROF dir
    (again,) = load(out)
    assert again.path == str(prof)


def test_prof_dir_with_task_time_only(tmp_path: Path) -> None:
    prof = tmp_path / "PROF_000002_20260823165413436_X"
    out = prof / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    (out / "task_time_20260823165421.csv").write_text(
        "Device_id,kernel_name,kernel_type,stream_id,task_id,"
        "task_time(us),task_start(us),task_stop(us)\n"
        f"0,N/A,PROFILING_ENABLE,49,3,0.020,{T0}.000\t,{T0}.020\t\n"
        "0,OnesLike_1c45_high_performance_2100,AI_VECTOR_CORE,46,0,4.800,"
        f"{T0 + 1}.000\t,{T0 + 5}.800\t\n"
    )
    (capture,) = load(prof)
    assert capture.source == "task_time"
    assert capture.kernels["stream_id"].to_list() == [46]
    assert (capture.kernels["end_ns"] - capture.kernels["start_ns"]).to_list() == [4_800]


def test_load_paths_given_order_and_time_order(tmp_path: Path) -> None:
    late = result_dir(tmp_path / "one", "late_ascend_pt", end_ns=900)
    early = result_dir(tmp_path / "two", "early_ascend_pt", end_ns=100)
    given = load_paths([late, early], order="given")
    assert [c.capture_time_ns for c in given] == [900, 100]
    by_time = load_paths([late, early])  # the default: capture time
    assert [c.capture_time_ns for c in by_time] == [100, 900]


def test_runs_in_capture_time_order_whatever_the_command_line_order(tmp_path: Path) -> None:
    """`analyze out/run-*` lists run-10 before run-2: the runs are still judged as captured
    (run-2 at t=200 is run 2, run-10 at t=1000 is run 3), with a note; --order given keeps
    the shell's order and says that it differs."""
    runs = {n: result_dir(tmp_path, f"run-{n}", end_ns=100 * n) for n in (1, 2, 10)}
    shell = [runs[1], runs[10], runs[2]]  # how a shell glob sorts run-*
    report = check(shell, Options(), workers=1)
    assert [r.capture_time_ns for r in report.runs] == [100, 200, 1000]
    assert [r.index for r in report.runs] == [1, 2, 3]
    (note,) = [n for n in report.notes if "capture-time order" in n]
    assert f"{runs[10]} was given before {runs[2]}" in note
    given = check(shell, Options(order="given"), workers=1)
    assert [r.capture_time_ns for r in given.runs] == [100, 1000, 200]
    assert any("--order given" in n and "not by capture time" in n for n in given.notes)
    in_order = check([runs[1], runs[2], runs[10]], Options(order="given"), workers=1)
    assert not any("capture time" in n for n in in_order.notes)


def test_load_paths_keeps_ranks_and_orders_each_path_by_time(tmp_path: Path) -> None:
    job = tmp_path / "job"
    result_dir(job, "r1_late", rank=1, end_ns=40)
    result_dir(job, "r0_late", rank=0, end_ns=30)
    result_dir(job, "r0_early", rank=0, end_ns=10)
    result_dir(job, "r1_early", rank=1, end_ns=20)
    other = result_dir(tmp_path, "other", rank=0, end_ns=5)
    captures = load_paths([job, other], order="given")
    assert [(c.rank, c.capture_time_ns) for c in captures] == [
        (0, 10),
        (0, 30),
        (1, 20),
        (1, 40),
        (0, 5),
    ]
    by_time = load_paths([job, other], order="time")
    assert [(c.rank, c.capture_time_ns) for c in by_time] == [
        (0, 5),
        (0, 10),
        (1, 20),
        (0, 30),
        (1, 40),
    ]


def test_bare_file_and_its_siblings(tmp_path: Path) -> None:
    path = kernel_details(tmp_path / "kernel_details-renamed.csv", T0, names=("A", "B"))
    sources = discover(path)
    assert [(s.kind, s.primary) for s in sources] == [("file", path)]
    (capture,) = load(path)
    assert capture.source == "kernel_details.csv"
    assert capture.path == str(path)
    # no profiler_info: the capture time is the last kernel end (T0 + 1 µs + 0.5 µs)
    assert capture.capture_time_ns == (T0 + 1) * 1000 + 500


def test_only_exact_names_make_a_loose_directory_a_capture(tmp_path: Path) -> None:
    kernel_details(tmp_path / "loose" / "kernel_details-2025-quoted-tab.csv", T0)
    kernel_details(tmp_path / "out" / "kernel_details.csv", T0)
    sources = discover(tmp_path)
    assert [(s.path.name, s.kind) for s in sources] == [("out", "output_dir")]


@pytest.mark.parametrize("rank_id", [0, "0"])
def test_rank_id_int_or_text(tmp_path: Path, rank_id: object) -> None:
    directory = result_dir(tmp_path, "x", rank=rank_id, end_ns=1, info_name="profiler_info.json")
    (capture,) = load(directory)
    assert capture.rank == 0
