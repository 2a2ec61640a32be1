"""Bad input → InputError / SchemaError (exit code 2), one line naming the file (and line)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import FrameType

import pytest
from click.testing import CliRunner, Result

from overlap_check.cli import cli
from overlap_check.model.errors import InputError, OverlapCheckError, SchemaError
from overlap_check.readers import load, load_paths

T0 = 1736408883704643
GOOD_HEADER = "Stream ID,Name,Start Time(us),Duration(us)"


def expect_error(path: Path, kind: type[InputError], *words: str, line: int | None = None) -> None:
    """load(path) raises ``kind`` with exit code 2, a one-line message naming the file."""
    with pytest.raises(kind) as caught:
        load(path)
    err = caught.value
    assert isinstance(err, OverlapCheckError)
    assert err.exit_code == 2
    message = str(err)
    assert "\n" not in message
    assert err.path is not None
    assert message.startswith(err.path)
    assert Path(err.path) == path or Path(err.path).parent == path or path in Path(err.path).parents
    for word in words:
        assert word in message
    if line is not None:
        assert err.line == line
        assert f"{err.path}:{line}: " in message


def test_missing_path(tmp_path: Path) -> None:
    expect_error(tmp_path / "nope", InputError, "no such file")


def test_directory_without_profiler_output(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "readme.txt").write_text("x")
    expect_error(tmp_path, InputError, "no profiler output")


def test_result_dir_whose_parsing_failed(tmp_path: Path) -> None:
    run = tmp_path / "host_1_20250101000000000_ascend_pt"
    run.mkdir()
    (run / "profiler_info_0.json").write_text("{}")
    expect_error(run, InputError, "no kernel data")


@pytest.mark.parametrize(
    "name", ["kernel_details.csv", "trace_view.json", "ascend_pytorch_profiler_0.db"]
)
def test_empty_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    expect_error(path, InputError, "empty")


@pytest.mark.parametrize("name", ["kernel_details.csv", "trace_view.json", "msprof_1.db"])
def test_binary_garbage(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(bytes(range(256)) * 8)
    expect_error(path, InputError)


def test_csv_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_bytes("Name,Début\n".encode("latin-1"))
    expect_error(path, InputError, "UTF-8", line=1)


def test_unknown_header(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_text("Op,Begin,Length\nA,1,2\n")
    expect_error(path, SchemaError, "'Name'", "'Start Time(us)'", "'Duration(us)'", line=1)


def test_header_without_duration(tmp_path: Path) -> None:
    path = tmp_path / "op_summary_1.csv"
    path.write_text("Op Name,Task Start Time(us)\nA,1.0\n")
    expect_error(path, SchemaError, "'Duration(us)'", line=1)


def test_truncated_json(tmp_path: Path) -> None:
    events = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "x"}}] * 50
    text = json.dumps(events, indent=1)
    path = tmp_path / "trace_view.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(InputError) as caught:
        load(path)
    assert "JSON" in str(caught.value)
    assert caught.value.line is not None and caught.value.line > 1
    assert caught.value.exit_code == 2


def test_json_that_is_not_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    path.write_text('{"name": "x"}')
    expect_error(path, SchemaError, "JSON array")


def test_trace_without_hardware_process(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    path.write_text(
        json.dumps([{"ph": "X", "name": "aten::add", "pid": 1, "tid": 1, "ts": "1", "dur": 1}])
    )
    expect_error(path, SchemaError, "Ascend Hardware")


def test_sqlite_without_profiler_tables(tmp_path: Path) -> None:
    path = tmp_path / "ascend_pytorch_profiler_0.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE other (x INTEGER)")
    con.commit()
    con.close()
    expect_error(path, SchemaError, "TASK")


def test_unknown_file_kind(tmp_path: Path) -> None:
    path = tmp_path / "profile.txt"
    path.write_text("hello")
    expect_error(path, InputError, "not a profiler output file")


def test_bad_path_among_several_paths(tmp_path: Path) -> None:
    good = tmp_path / "kernel_details.csv"
    good.write_text(f"{GOOD_HEADER}\n2,A,{T0}.000\t,1.0\n")
    with pytest.raises(InputError) as caught:
        load_paths([good, tmp_path / "missing"])
    assert str(tmp_path / "missing") in str(caught.value)


def test_only_malformed_rows_is_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_text(f"{GOOD_HEADER}\n2,A\n2,B,yesterday,1.0\n")
    (capture,) = load(path)
    assert capture.kernels.height == 0
    assert capture.skipped_rows == 2
    assert capture.skipped_lines == (2, 3)


def test_header_only_file_gives_an_empty_capture(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_text(GOOD_HEADER + "\n")
    (capture,) = load(path)
    assert capture.kernels.height == 0
    assert capture.capture_time_ns is None


def test_broken_profiler_info_is_a_note_not_an_error(tmp_path: Path) -> None:
    run = tmp_path / "r_ascend_pt"
    (run / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text(
        f"{GOOD_HEADER}\n2,A,{T0}.000\t,1.0\n"
    )
    (run / "profiler_info_1.json").write_text('{"rank_id": ')
    (capture,) = load(run)
    assert capture.rank == 1  # from the file name
    assert any("profiler_info_1.json" in note for note in capture.notes)


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p.write_bytes(b"\x00\x01\x02"),
        lambda p: p.write_text("Name\n"),
    ],
)
def test_level0_fallback_errors_name_the_file(tmp_path: Path, make: Callable[[Path], None]) -> None:
    """A Level0 kernel_details with only a broken trace: the error names the broken file."""
    out = tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (out / "kernel_details.csv").write_text(
        f"Name,Type,Accelerator Core,Start Time(us),Duration(us)\nA,N/A,N/A,{T0}.000\t,1.0\n"
    )
    make(out / "trace_view.json")
    with pytest.raises(InputError) as caught:
        load(tmp_path / "r_ascend_pt")
    assert caught.value.exit_code == 2
    assert "trace_view.json" in str(caught.value)
    assert "Level1" in str(caught.value)


# ---------------------------------------------------------------- issue 17: input side

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DB_RUN = FIXTURES / "db-level0" / "localhost.localdomain_3321370_20250109074803707_ascend_pt"
HARDWARE = [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Ascend Hardware"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Stream 2"}},
]


def task(name: str, ts_us: int, dur_us: float) -> dict[str, object]:
    args = {"Task Type": "AI_CORE"}
    return {
        "ph": "X",
        "name": name,
        "pid": 1,
        "tid": 2,
        "ts": f"{ts_us}.000",
        "dur": dur_us,
        "args": args,
    }


def one_kernel_run(tmp_path: Path) -> Path:
    """A result dir holding one good kernel and no metadata."""
    run = tmp_path / "r_ascend_pt"
    (run / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text(
        f"{GOOD_HEADER}\n2,A,{T0}.000\t,1.0\n"
    )
    return run


def test_deeply_nested_trace_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    path.write_text("[" * 100_000)  # json.loads: RecursionError
    expect_error(path, InputError, "nested too deeply")


def test_deeply_nested_profiler_info_is_a_note(tmp_path: Path) -> None:
    run = one_kernel_run(tmp_path)
    (run / "profiler_info_3.json").write_text('{"a":' * 50_000)
    (capture,) = load(run)
    assert capture.rank == 3  # from the file name
    assert any("nested too deeply" in note for note in capture.notes)


def test_a_thousand_level_tree_is_searched_without_recursion(deep_dir: Path) -> None:
    # os.walk recursed once per level: RecursionError
    expect_error(deep_dir, InputError, "no profiler output")


@pytest.mark.parametrize("kind", ["directory", "FIFO", "broken symbolic link"])
def test_kernel_details_that_is_not_a_file_is_an_error(tmp_path: Path, kind: str) -> None:
    """Before: the reader fell back to trace_view.json without a word."""
    out = tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    (out / "trace_view.json").write_text(json.dumps([*HARDWARE, task("A", T0, 1.0)]))
    kernel = out / "kernel_details.csv"
    if kind == "directory":
        kernel.mkdir()
    elif kind == "FIFO":
        os.mkfifo(kernel)
    else:
        kernel.symlink_to(out / "gone.csv")
    with pytest.raises(InputError) as caught:
        load(tmp_path / "r_ascend_pt")
    assert caught.value.path == str(kernel)
    assert f"is a {kind}" in str(caught.value)


def test_stray_quote_counts_every_line_it_swallows(tmp_path: Path) -> None:
    rows = [f"2,K{i},{T0 + 10 * i}.000\t,1.0" for i in range(10)]
    rows[2] = rows[2].replace(",K2,", ',"K2,')  # line 4 opens a quote that never closes
    path = tmp_path / "kernel_details.csv"
    path.write_text(GOOD_HEADER + "\n" + "\n".join(rows) + "\n")
    (capture,) = load(path)
    # Lines 2-3 are good; the record from line 4 runs to the end (line 11): 8 lines.
    assert capture.kernels["name"].to_list() == ["K0", "K1"]
    assert capture.skipped_rows == 8
    assert capture.skipped_lines == tuple(range(4, 12))


def test_negative_trace_duration_is_a_malformed_row(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps([*HARDWARE, task("A", T0, -50.0), task("B", T0 + 100, 5.0)]))
    (capture,) = load(path)
    assert capture.kernels["name"].to_list() == ["B"]
    assert capture.skipped_rows == 1
    assert any("impossible times" in note for note in capture.notes)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy's cast of it: raw on stderr
@pytest.mark.parametrize("dur", ["1e17", "1e400"])
def test_trace_duration_past_int64_ns_is_a_malformed_row(tmp_path: Path, dur: str) -> None:
    # 1e17 µs = 1e20 ns > 2**63 - 1 ≈ 9.22e18 ns; msgspec reads 1e400 as inf: neither is a
    # duration, and neither may wrap round to a negative int64
    path = tmp_path / "trace_view.json"
    good = json.dumps([*HARDWARE, task("B", T0 + 100, 5.0)])
    bad = json.dumps(task("A", T0, 0.0)).replace('"dur": 0.0', f'"dur": {dur}')
    path.write_text(f"[{bad}, {good[1:]}")
    (capture,) = load(path)
    assert capture.kernels["name"].to_list() == ["B"]
    assert capture.kernels["end_ns"].to_list() == [(T0 + 100) * 1000 + 5000]
    assert capture.skipped_rows == 1


def test_polars_panic_on_a_lone_quote_stays_off_the_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # polars' CSV reader panics on a body that ends in one unmatched quote; Rust's panic
    # hook writes that and a backtrace to fd 2 itself. The record-by-record path reads the
    # file: line 2 kept (1736408883704703.212 µs = 1736408883704703212 ns), line 3 skipped
    run = tmp_path / "r_ascend_pt"
    (run / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text(
        'Step Id,Stream ID,Name,Start Time(us),Duration(us)\n1,2,A,1736408883704703.212,3.0\n"'
    )
    (capture,) = load(run)
    assert capture.kernels["start_ns"].to_list() == [1736408883704703212]
    assert capture.skipped_lines == (3,)
    assert capfd.readouterr().err == ""


def test_db_row_ending_before_it_starts_is_a_malformed_row(tmp_path: Path) -> None:
    run = tmp_path / DB_RUN.name
    shutil.copytree(DB_RUN, run)
    db = run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    (before,) = load(run)
    con = sqlite3.connect(db)
    kernel = "SELECT MIN(globalTaskId) FROM COMPUTE_TASK_INFO"  # a kernel, not a wait
    con.execute(f"UPDATE TASK SET endNs = startNs - 50 WHERE globalTaskId = ({kernel})")
    con.commit()
    con.close()
    (capture,) = load(run)
    assert capture.kernels.height == before.kernels.height - 1
    assert capture.skipped_rows == before.skipped_rows + 1
    assert (capture.kernels["end_ns"] >= capture.kernels["start_ns"]).all()


def test_times_spanning_centuries_are_an_error(tmp_path: Path) -> None:
    # 1e12 µs = 1e15 ns (11.6 days after 1970) beside T0 (2025): a span of 1.7e18 ns,
    # far past 2**53 ns (the limit of exact busy sums).
    path = tmp_path / "kernel_details.csv"
    path.write_text(f"{GOOD_HEADER}\n2,A,1000000000000.000\t,1.0\n2,B,{T0}.000\t,1.0\n")
    expect_error(path, InputError, "span")


def test_kernel_time_past_int64_is_an_error(tmp_path: Path) -> None:
    # 1100 kernels of 9007199253740 µs (2**53 ns less ~1 ms) each: the span fits 2**53,
    # but the sum 1100 * 9.007e15 = 9.9e18 ns passes 2**63 - 1 = 9.22e18 (parallelism < 0).
    rows = "".join(f"2,K{i},{T0}.000\t,9007199253740.000\n" for i in range(1100))
    path = tmp_path / "kernel_details.csv"
    path.write_text(GOOD_HEADER + "\n" + rows)
    expect_error(path, InputError, "sum")


def test_huge_rank_id_is_a_note_not_a_crash(tmp_path: Path) -> None:
    run = one_kernel_run(tmp_path)
    (run / "profiler_info.json").write_text('{"rank_id": 9223372036854775807}')
    (capture,) = load(run)  # was: polars InvalidOperationError (i64 -> i32)
    assert capture.rank is None
    assert any("is not a rank" in note for note in capture.notes)


def test_trace_with_unhashable_thread_id_is_a_schema_error(tmp_path: Path) -> None:
    events = [HARDWARE[0], {**HARDWARE[1], "tid": [2], "args": {"name": 7}}, task("A", T0, 1.0)]
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events))
    expect_error(path, SchemaError, "unexpected value")


def test_trace_with_device_label_past_int32_is_a_schema_error(tmp_path: Path) -> None:
    label = {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0}
    label["args"] = {"labels": "NPU 99999999999"}
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps([*HARDWARE, label, task("A", T0, 1.0)]))
    expect_error(path, SchemaError, "unexpected value")


def test_db_with_non_utf8_schema_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "ascend_pytorch_profiler_0.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.commit()
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_master SET name = CAST(X'FF' AS TEXT)")
    con.commit()
    con.close()
    expect_error(path, InputError, "SQLite")


# ---------------------------------------------------------------- the command line

FAKE_RUN = FIXTURES / "fake-dual-stream"


def invoke(*args: str) -> Result:
    """The CLI in-process, with a 20 s alarm: a FIFO read used to block forever."""

    def hang(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("the command blocked")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(20)
    try:
        return CliRunner().invoke(cli, list(args))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def assert_named_error(result: Result, path: Path, *words: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"overlap-check: error: {path}")
    for word in words:
        assert word in line


def test_compare_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "base.json"
    os.mkfifo(fifo)
    assert_named_error(invoke("compare", str(fifo), str(fifo)), fifo, "is a FIFO")


def test_baseline_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "base.json"
    os.mkfifo(fifo)
    result = invoke("analyze", str(FAKE_RUN), "--baseline", str(fifo), "-q")
    assert_named_error(result, fifo, "is a FIFO")


def test_lint_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "model.py"
    os.mkfifo(fifo)
    assert_named_error(invoke("lint", str(fifo)), fifo, "is a FIFO")


def test_plot_to_a_place_that_cannot_be_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    target = blocker / "timeline.png"  # a directory that is a regular file
    result = invoke("plot", str(FAKE_RUN), "--side", "SharedExpert", "-o", str(target))
    assert_named_error(result, target, "cannot write the picture")


def test_an_unexpected_crash_exits_2_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last-resort net: a bug is not a failed gate (exit 1) and prints no traceback."""
    import overlap_check.judge.pipeline

    def crash(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(overlap_check.judge.pipeline, "check_paths", crash)
    result = invoke("analyze", str(FAKE_RUN))
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("overlap-check: error: internal error on ")
    assert str(FAKE_RUN) in line and "ZeroDivisionError" in line and "please report" in line


def test_an_impossible_figure_is_an_error_naming_the_capture() -> None:
    from overlap_check.judge.pipeline import check
    from overlap_check.judge.sanity import check_report
    from overlap_check.model import Options, Plan

    report = check([FAKE_RUN], workers=1)
    assert check_report(report) is report
    first = report.runs[0]
    broken = replace(report, runs=(replace(first, skipped_rows=-1), *report.runs[1:]))
    with pytest.raises(InputError) as caught:
        check_report(broken)
    assert caught.value.exit_code == 2
    assert caught.value.path == first.path
    assert "report.runs[0].skipped_rows = -1 is negative" in str(caught.value)
    rank = replace(report.ranks[0], parallelism=float("nan"))
    with pytest.raises(InputError, match=r"parallelism = nan is NaN \(captures: "):
        check_report(replace(report, ranks=(rank,)))
    pair = replace(report.stream_pairs[0], overlap_pct=1.5)
    with pytest.raises(InputError, match=r"overlap_pct = 1.5 is outside \[0, 1\]"):
        check_report(replace(report, stream_pairs=(pair,)))
    # an int is judged as a float is: 2 is no fraction, -1 ns no duration
    pair = replace(report.stream_pairs[0], overlap_pct=2)
    with pytest.raises(InputError, match=r"stream_pairs\[0\].overlap_pct = 2 is outside"):
        check_report(replace(report, stream_pairs=(pair,)))
    # the first impossible figure, depth first: per_run[1] of pair 0 before pair 1
    deep = replace(pair, overlap_pct=0.5, per_run=(pair.per_run[0], pair.per_run[0]))
    deep = replace(deep, per_run=(deep.per_run[0], replace(deep.per_run[0], overlap_ns=-1)))
    later = replace(pair, overlap_pct=-0.5)
    with pytest.raises(InputError, match=r"stream_pairs\[0\].per_run\[1\].overlap_ns = -1 is"):
        check_report(replace(report, stream_pairs=(deep, later)))
    # a sign is judged only for durations, counts and fractions; infinity never passes
    rank = replace(report.ranks[0], parallelism=0.5, helper_streams=(-3,))
    assert check_report(replace(report, ranks=(rank,))).ranks == (rank,)
    rank = replace(rank, concurrent_ns=float("inf"))
    with pytest.raises(InputError, match=r"ranks\[0\].concurrent_ns = inf is infinite"):
        check_report(replace(report, ranks=(rank,)))
    # an unplaced row count and an occurrence's dominator_pct (under / side busy) too
    with pytest.raises(InputError, match=r"runs\[0\].unplaced_rows = -5 is negative"):
        check_report(replace(report, runs=(replace(first, unplaced_rows=-5), *report.runs[1:])))
    shared = Plan(name="shared", side="SharedExpert", dominator="GroupedMatmul")
    (plan,) = check([FAKE_RUN], Options(plans=(shared,)), workers=1).plans
    run = replace(plan.per_run[0], layers=(replace(plan.per_run[0].layers[0], dominator_pct=3.0),))
    with pytest.raises(InputError, match=r"layers\[0\].dominator_pct = 3.0 is outside \[0, 1\]"):
        check_report(replace(report, plans=(replace(plan, per_run=(run, *plan.per_run[1:])),)))


def test_device_id_past_int32_is_a_malformed_row(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    rows = [f"0,2,A,{T0}.000\t,1.0", f"9223372036854775807,2,B,{T0 + 5}.000\t,1.0"]
    path.write_text(f"Device_id,{GOOD_HEADER}\n" + "\n".join(rows) + "\n")
    (capture,) = load(path)  # was: InvalidOperationError casting device to Int32 (conform)
    assert capture.kernels["name"].to_list() == ["A"]
    assert capture.kernels["device"].to_list() == [0]
    assert capture.skipped_rows == 1
