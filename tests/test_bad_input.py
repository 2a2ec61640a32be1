"""Bad input → InputError / SchemaError (exit code 2), one line naming the file (and line)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from overlap_check.errors import InputError, OverlapCheckError, SchemaError
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
