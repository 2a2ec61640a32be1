"""Reading a CSV in blocks of whole records (``readers.csvblocks``) and the block-wise fast path.

Block sizes here are a few bytes to a few hundred, so that a file of a dozen
rows is cut into many blocks; the production size (8 MiB) only changes how
many rows a block holds.
"""

from __future__ import annotations

import io
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from overlap_check.readers import csvblocks, csvread, load
from overlap_check.readers.csvblocks import map_in_order, record_blocks, record_end
from overlap_check.readers.kernel_csv import KERNEL_COLUMNS, finish_kernels, read_kernel_csv

T0 = 1736408883704643  # µs, an epoch from the real Level1 capture


def blocks_of(data: bytes, size: int, *, skip_first: bool = True) -> list[bytes]:
    return list(record_blocks(io.BytesIO(data), size, skip_first=skip_first))


# --------------------------------------------------------------------------- record_blocks


def test_blocks_end_at_newlines_and_cover_the_body() -> None:
    body = b"a,1\nb,22\nc,333\n"
    data = b"h1,h2\n" + body
    # size 8: the first read "h1,h2\na," ends the header at 6; "a," waits for more;
    # the next read fills "a,1\nb,22" -> block "a,1\n"; then "b,22\nc,3" -> "b,22\n";
    # then "c,333\n" and the end of the file
    assert blocks_of(data, 8) == [b"a,1\n", b"b,22\n", b"c,333\n"]
    for size in range(1, len(data) + 2):
        blocks = blocks_of(data, size)
        assert b"".join(blocks) == body
        assert all(block.endswith(b"\n") for block in blocks)
    assert blocks_of(data, 1 << 20) == [body]  # one block holds it all


def test_a_quoted_newline_is_never_a_block_end() -> None:
    record = b'a,"x\ny",1\n'  # the newline at index 4 of the record is inside quotes
    data = b"h1,h2,h3\n" + record + b"b,z,2\n"
    for size in range(1, len(data) + 2):
        blocks = blocks_of(data, size)
        assert b"".join(blocks) == record + b"b,z,2\n"
        assert all(block.count(b'"') % 2 == 0 for block in blocks)
        assert record[:5] not in blocks  # never cut after 'a,"x\n'
    # size 14: the first read is 'h1,h2,h3\na,"x\n' (9 + 5 bytes): its last newline
    # has one quote before it, so 'a,"x\n' waits; the next 9 bytes complete the record
    assert blocks_of(data, 14) == [record, b"b,z,2\n"]


def test_escaped_quotes_keep_the_count_even() -> None:
    # """8192,4096""" is a field holding "8192,4096" with its quotes: 6 quote characters
    record = b'1,"""8192,4096""",x\n'
    data = b"a,b,c\n" + record * 3
    assert blocks_of(data, len(record)) == [record] * 3


def test_header_with_a_quoted_newline_is_skipped_whole() -> None:
    data = b'"Step\nId",Name\n1,a\n2,b\n'
    for size in range(1, len(data) + 2):
        assert b"".join(blocks_of(data, size)) == b"1,a\n2,b\n"
    assert blocks_of(data, 100) == [b"1,a\n2,b\n"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", []),
        (b"h1,h2", []),  # a header without newline, nothing else
        (b"h1,h2\n", []),
        (b"h1,h2\r\n", []),
        (b"h1,h2\na,1", [b"a,1"]),  # no final newline: the rest is the last block
        (b"h1,h2\r\na,1\r\nb,2\r\n", [b"a,1\r\nb,2\r\n"]),
    ],
)
def test_edges_of_the_body(data: bytes, expected: list[bytes]) -> None:
    assert blocks_of(data, 1 << 10) == expected


class Trickle:
    """A file that gives at most 3 bytes per read, as a pipe may."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def readinto(self, buffer: memoryview, /) -> int:
        size = min(3, len(buffer), len(self.data))
        buffer[:size] = self.data[:size]
        self.data = self.data[size:]
        return size


def test_short_reads_give_the_same_records() -> None:
    data = b'h1,h2\na,"x\ny"\nb,22\nc,333'
    blocks = list(record_blocks(Trickle(data), 8, skip_first=True))
    assert b"".join(blocks) == b'a,"x\ny"\nb,22\nc,333'
    assert all(block.count(b'"') % 2 == 0 for block in blocks)
    assert blocks[-1] == b"c,333"  # no final newline


def test_without_skipping_the_first_record() -> None:
    assert blocks_of(b"a\nb\n", 2, skip_first=False) == [b"a\n", b"b\n"]


def test_record_end_first_and_last() -> None:
    buffer = bytearray(b'a,"1\n2"\nb\nc')
    # newlines at 4 (quoted), 7 and 9
    assert record_end(buffer, 0, len(buffer), last=False) == 7 + 1
    assert record_end(buffer, 0, len(buffer), last=True) == 9 + 1
    assert record_end(buffer, 0, 7, last=True) == 0  # only the quoted newline
    assert record_end(buffer, 8, len(buffer), last=False) == 9 + 1


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_map_in_order_keeps_the_order(workers: int) -> None:
    blocks = iter([b"a", b"bb", b"ccc", b"dddd", b"e"])
    assert list(map_in_order(len, blocks, workers=workers)) == [1, 2, 3, 4, 1]


def test_map_in_order_stops_early_without_running_the_rest() -> None:
    seen: list[bytes] = []

    def blocks() -> Iterator[bytes]:
        for i in range(100):
            block = str(i).encode()
            seen.append(block)
            yield block

    results = map_in_order(len, blocks(), workers=2)
    assert next(results) == 1
    results.close()  # what the fast path does at the first suspect block
    assert len(seen) <= 2 + 1 + 1  # workers + 1 read ahead, plus the one yielded


def test_map_in_order_raises_what_a_block_raised() -> None:
    def parse(block: bytes) -> int:
        if block == b"bad":
            raise ValueError("bad block")
        return len(block)

    results = map_in_order(parse, iter([b"a", b"bad", b"ccc", b"dddd"]), workers=2)
    assert next(results) == 1
    with pytest.raises(ValueError, match="bad block"):
        next(results)


# ------------------------------------------------------------------ the fast path, block-wise

HEADER = (
    "Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"
    "Start Time(us),Duration(us),Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,"
    "Input Shapes,Context ID,aicore_time(us)"
)


def kernel_line(i: int, *, shape: str = '"""8192,4096"""', name: str | None = None) -> str:
    """Row i: stream 2 or 3, start T0 + i µs + i ns, duration (i + 1) µs + 500 ns."""
    return (
        f"1,0,4294967295,{100 + i},{2 + i % 2},{name or f'K{i}'},Mul,dynamic,AI_VECTOR_CORE,"
        f"{T0 + i}.{i:03d}\t,{i + 1}.500,0,{8 * i},0,NO,{shape},N/A,0.0"
    )


def write(path: Path, lines: list[str], *, crlf: bool = False, bom: bool = False) -> Path:
    end = "\r\n" if crlf else "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + (end.join(lines) + end).encode())
    return path


def fast_and_slow(path: Path, block_bytes: int | None) -> tuple[pl.DataFrame | None, pl.DataFrame]:
    header = csvread.read_header(path)
    found = csvread.match_columns(header, KERNEL_COLUMNS, path=path, what="kernel_details")
    wanted = [c for c in KERNEL_COLUMNS if c.field in found]
    fast = csvread._fast(path, header, wanted, found, finish_kernels, block_bytes=block_bytes)
    slow, _ = csvread._slow(path, header, wanted, found, finish_kernels)
    return fast, slow


def expected_columns(rows: range) -> dict[str, list[int]]:
    return {
        "stream_id": [2 + i % 2 for i in rows],
        "start_ns": [(T0 + i) * 1000 + i for i in rows],
        "end_ns": [(T0 + i) * 1000 + i + (i + 1) * 1000 + 500 for i in rows],
        "block_num": [8 * i for i in rows],
        "task_id": [100 + i for i in rows],
    }


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("block_bytes", [1, 40, 150, 1 << 20, None])  # None: the file whole
def test_block_wise_fast_path_gives_the_slow_paths_table(
    tmp_path: Path, crlf: bool, block_bytes: int | None
) -> None:
    lines = [HEADER] + [kernel_line(i) for i in range(12)]
    path = write(tmp_path / "kernel_details.csv", lines, crlf=crlf)
    fast, slow = fast_and_slow(path, block_bytes)
    assert fast is not None
    assert_frame_equal(fast, slow)
    assert fast.select(expected_columns(range(12)).keys()).to_dict(
        as_series=False
    ) == expected_columns(range(12))
    # one chunk per block: several blocks when a block is smaller than the body
    assert fast.n_chunks() == 1 if block_bytes in (1 << 20, None) else fast.n_chunks() > 1


def test_quoted_newline_across_a_block_boundary(tmp_path: Path) -> None:
    # row 3's shape field holds a newline; with blocks of one row's size, a plain
    # cut at the last newline of a block would fall inside it
    shape = '"8192,\n4096"'
    lines = [HEADER] + [kernel_line(i, shape=shape if i == 3 else "x") for i in range(8)]
    path = write(tmp_path / "kernel_details.csv", lines)
    for block_bytes in range(20, 400, 7):
        fast, slow = fast_and_slow(path, block_bytes)
        assert fast is not None
        assert_frame_equal(fast, slow)
        assert fast["name"].to_list() == [f"K{i}" for i in range(8)]


def test_a_name_with_a_quoted_newline_reads_whole(tmp_path: Path) -> None:
    lines = [HEADER, kernel_line(0, name='"two\nlines"'), kernel_line(1)]
    path = write(tmp_path / "kernel_details.csv", lines, crlf=True)
    fast, _ = fast_and_slow(path, 16)
    assert fast is not None
    assert fast["name"].to_list() == ["two\nlines", "K1"]


def test_malformed_row_in_a_later_block_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [HEADER] + [kernel_line(i) for i in range(40)]
    lines[36] = lines[36].replace(",0,NO,", ",zero,NO,")  # Mix Block Num of row 35 (line 37)
    path = write(tmp_path / "kernel_details.csv", lines)
    fast, _ = fast_and_slow(path, 200)
    assert fast is None  # a suspect block sends the whole file to the slow path
    monkeypatch.setattr(csvread, "WHOLE_FILE_BYTES", -1)  # blocks, not the file whole
    monkeypatch.setattr(csvblocks, "BLOCK_BYTES", 200)
    kernels = read_kernel_csv(path)
    assert kernels.skipped_lines == (37,)  # header = line 1, row i = line i + 2
    assert kernels.kernels["name"].to_list() == [f"K{i}" for i in range(40) if i != 35]


def test_short_row_at_the_end_of_a_block_is_caught(tmp_path: Path) -> None:
    lines = [HEADER] + [kernel_line(i) for i in range(6)]
    lines[4] = lines[4].rsplit(",", 1)[0]  # row 3 loses its last field
    path = write(tmp_path / "kernel_details.csv", lines)
    cut_after_row_3 = sum(len(line) + 1 for line in lines[1:5])
    fast, _ = fast_and_slow(path, cut_after_row_3)
    assert fast is None
    (capture,) = load(path)
    assert capture.skipped_lines == (5,)


def test_file_of_exactly_one_block(tmp_path: Path) -> None:
    lines = [HEADER] + [kernel_line(i) for i in range(5)]
    path = write(tmp_path / "kernel_details.csv", lines)
    body = sum(len(line) + 1 for line in lines[1:])
    one, _ = fast_and_slow(path, len(HEADER) + 1 + body)  # header and body fill one read
    assert one is not None
    assert one.n_chunks() == 1
    # one byte less: the last row's newline is not in the first read, so it moves on
    two, _ = fast_and_slow(path, len(HEADER) + 1 + body - 1)
    assert two is not None
    assert two.n_chunks() == 2
    assert_frame_equal(one, two)
    assert one["name"].to_list() == ["K0", "K1", "K2", "K3", "K4"]


def test_a_file_up_to_whole_file_bytes_is_one_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "采集").mkdir()  # a UTF-8 name polars opens itself
    lines = [HEADER] + [kernel_line(i) for i in range(12)]
    path = write(tmp_path / "采集" / "kernel_details.csv", lines)
    monkeypatch.setattr(csvblocks, "BLOCK_BYTES", 150)
    monkeypatch.setattr(csvread, "WHOLE_FILE_BYTES", path.stat().st_size)
    whole = read_kernel_csv(path).kernels
    monkeypatch.setattr(csvread, "WHOLE_FILE_BYTES", path.stat().st_size - 1)
    blocks = read_kernel_csv(path).kernels
    assert (whole.n_chunks(), blocks.n_chunks() > 1) == (1, True)
    assert_frame_equal(whole, blocks)


@pytest.mark.parametrize("ending", ["", "\n", "\r\n"])
def test_empty_body_gives_a_typed_empty_table(tmp_path: Path, ending: str) -> None:
    path = tmp_path / "kernel_details.csv"
    path.write_bytes((HEADER + ending).encode())
    fast, slow = fast_and_slow(path, 16)
    assert fast is not None
    assert fast.height == 0
    assert fast.schema == slow.schema
    assert fast.schema["start_ns"] == pl.Int64
    assert fast.schema["is_communication"] == pl.Boolean


def test_bom_with_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [HEADER] + [kernel_line(i) for i in range(4)]
    path = write(tmp_path / "kernel_details.csv", lines, crlf=True, bom=True)
    monkeypatch.setattr(csvread, "WHOLE_FILE_BYTES", -1)  # blocks, not the file whole
    monkeypatch.setattr(csvblocks, "BLOCK_BYTES", 64)
    table = read_kernel_csv(path).kernels
    assert table["step"].to_list() == [1, 1, 1, 1]  # the BOM did not hide "Step Id"
    assert table["start_ns"].to_list() == expected_columns(range(4))["start_ns"]


fields = st.sampled_from(["x", "N/A", '"a,b"', '"q""uote"', '"two\nlines"', '"c\r\nd"', ""])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shapes=st.lists(fields, min_size=0, max_size=10),
    block_bytes=st.one_of(st.none(), st.integers(1, 400)),  # None: the file whole
    crlf=st.booleans(),
)
def test_any_blocks_give_the_slow_paths_table(
    shapes: list[str], block_bytes: int | None, crlf: bool
) -> None:
    lines = [HEADER] + [kernel_line(i, shape=s) for i, s in enumerate(shapes)]
    with tempfile.TemporaryDirectory() as directory:
        path = write(Path(directory) / "kernel_details.csv", lines, crlf=crlf)
        fast, slow = fast_and_slow(path, block_bytes)
    assert fast is not None  # every row is well-formed
    assert_frame_equal(fast, slow)
    assert fast["name"].to_list() == [f"K{i}" for i in range(len(shapes))]


def test_real_csv_files_read_alike_in_small_blocks(
    real_profiles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = sorted(
        p
        for pattern in ("kernel_details*.csv", "op_summary_*.csv")
        for p in real_profiles.rglob(pattern)
    )
    assert paths
    whole = {p: read_kernel_csv(p) for p in paths}
    monkeypatch.setattr(csvread, "WHOLE_FILE_BYTES", -1)  # blocks, not the file whole
    monkeypatch.setattr(csvblocks, "BLOCK_BYTES", 4096)
    for path in paths:
        small = read_kernel_csv(path)
        assert_frame_equal(small.kernels, whole[path].kernels)
        assert small.skipped_lines == whole[path].skipped_lines
