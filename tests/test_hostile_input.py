"""Issue 26, input side: every row accounted for, ordinary mistakes as ordinary errors.

Each test damages one thing and states by hand what must be counted or said.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from overlap_check.cli import cli
from overlap_check.readers import load

T0 = 1736408883704643
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PARTIAL = FIXTURES / "partial-dual-stream"
DB_RUN = FIXTURES / "db-level0" / "localhost.localdomain_3321370_20250109074803707_ascend_pt"
PLAN = ("--side", "SharedExpert", "--dominator", "GroupedMatmul")
HARDWARE = [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Ascend Hardware"}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Stream 2"}},
]


def task(name: str, ts: object, dur: object) -> dict[str, object]:
    return {
        "ph": "X",
        "name": name,
        "pid": 1,
        "tid": 2,
        "ts": ts,
        "dur": dur,
        "args": {"Task Type": "AI_CORE"},
    }


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


# ---------------------------------------------------------------- every row accounted for


def test_trace_kernels_without_a_usable_time_are_malformed_rows(tmp_path: Path) -> None:
    """Before: B..G vanished without a count (skipped 0, no note)."""
    events = [
        *HARDWARE,
        task("A", f"{T0}.000", 1.0),
        task("B", None, 1.0),  # ts null
        task("C", f"{T0 + 5}.000", None),  # dur null
        task("D", f"{T0 + 9}.000", "x"),  # dur text
        task("E", "abc", 1.0),  # ts text
        {k: v for k, v in task("F", f"{T0 + 20}.000", 1.0).items() if k != "dur"},
        {k: v for k, v in task("G", f"{T0 + 20}.000", 1.0).items() if k != "ts"},
        task("H", f"{T0 + 30}.000", 2.0),
    ]
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events))
    (capture,) = load(path)
    assert capture.kernels["name"].to_list() == ["A", "H"]
    assert capture.skipped_rows == 6  # B, C, D, E, F, G: 8 in = 2 used + 6 counted
    (note,) = capture.notes
    assert note.startswith(f"{path}: 6 row(s) with impossible times")


def test_db_task_rows_with_null_times_are_malformed_rows(tmp_path: Path) -> None:
    """Before: 18 -> 17 kernels, skipped 0, no note."""
    run = tmp_path / DB_RUN.name
    shutil.copytree(DB_RUN, run)
    db = run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"
    (before,) = load(run)
    con = sqlite3.connect(db)
    kernels = "SELECT globalTaskId FROM COMPUTE_TASK_INFO ORDER BY globalTaskId LIMIT 3"
    con.execute(f"UPDATE TASK SET startNs = NULL WHERE globalTaskId IN ({kernels} OFFSET 0)")
    con.execute(f"UPDATE TASK SET endNs = NULL WHERE globalTaskId = ({kernels} OFFSET 2)")
    con.commit()
    con.close()
    (capture,) = load(run)
    assert before.skipped_rows == 0
    assert capture.kernels.height == before.kernels.height - 3
    assert capture.skipped_rows == 3
    assert any(note.startswith(f"{db}: 3 row(s) with impossible times") for note in capture.notes)


def test_a_malformed_row_is_counted_once(tmp_path: Path) -> None:
    """A Level1 row with no Stream ID and no start was counted as skipped and as streamless
    (records 3, accounted 4); it is one malformed row."""
    path = tmp_path / "kernel_details.csv"
    path.write_text(
        "Stream ID,Name,Start Time(us),Duration(us)\n"
        f"2,A,{T0}.000\t,1.0\n"
        f"N/A,B,{T0 + 5}.000\t,1.0\n"
        "N/A,C,-5.000,1.0\n"  # a negative start: dropped by readers.capture
    )
    (capture,) = load(path)
    assert capture.skipped_rows == 1  # C
    assert capture.kernels.height == 2  # A, and B without a stream
    (streamless,) = [n for n in capture.notes if "no Stream ID" in n]
    assert streamless.startswith("1 of 2 kernel rows have no Stream ID")


def _partial_from_trace(tmp_path: Path) -> tuple[Path, int]:
    """partial-dual-stream read from its traces, the dur of every third side kernel made text."""
    root = tmp_path / "partial"
    shutil.copytree(PARTIAL, root)
    damaged = 0
    for trace in sorted(root.rglob("trace_view.json")):
        (trace.parent / "kernel_details.csv").unlink()
        events = json.loads(trace.read_text())
        side = [e for e in events if e.get("ph") == "X" and "SharedExpert" in str(e.get("name"))]
        for event in side[::3]:
            event["dur"] = "N/A"
            damaged += 1
        trace.write_text(json.dumps(events))
    return root, damaged


def test_malformed_rows_make_the_result_provisional(tmp_path: Path) -> None:
    root, damaged = _partial_from_trace(tmp_path)
    assert damaged > 0
    result = invoke("analyze", str(root), *PLAN, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    assert sum(run["skipped_rows"] for run in report["runs"]) == damaged
    assert all(plan["provisional"] for plan in report["plans"])
    assert any("provisional: malformed rows were skipped or" in n for n in report["notes"])
    strict = invoke("analyze", str(root), *PLAN, "--strict", "-q")
    assert strict.exit_code == 1
    text = invoke("analyze", str(root), *PLAN)
    assert "malformed row(s) skipped in" in text.stdout


# ---------------------------------------------------------------- ending cleanly


def _db_run(tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / DB_RUN.name
    shutil.copytree(DB_RUN, run)
    return run, run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db"


def test_an_endless_view_in_place_of_a_profiler_table_is_not_read(tmp_path: Path) -> None:
    """Before: a recursive view named TASK hung analyze, and Ctrl-C was not heard."""
    run, db = _db_run(tmp_path)
    con = sqlite3.connect(db)
    con.executescript(
        "DROP TABLE TASK; CREATE VIEW TASK AS WITH RECURSIVE c(x) AS "
        "(SELECT 1 UNION ALL SELECT x + 1 FROM c) "
        "SELECT x AS startNs, x AS endNs, 0 AS deviceId, 2 AS streamId, x AS globalTaskId, "
        "x AS taskId FROM c;"
    )
    con.close()
    result = invoke("analyze", str(run))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"overlap-check: error: {db}: TASK is a view, not a table (not read)")


def test_a_db_query_has_a_time_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from overlap_check.readers import db as db_reader

    run, db = _db_run(tmp_path)
    monkeypatch.setattr(db_reader, "QUERY_SECONDS", -1.0)  # past at the first check
    monkeypatch.setattr(db_reader, "PROGRESS_STEPS", 1)
    result = invoke("analyze", str(run))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"overlap-check: error: {db}: reading the profiler database took more than -1 s: "
        "not an export the profiler wrote"
    )


def test_ctrl_c_during_a_db_query_is_an_interruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt raised in the progress handler stops the query: exit 130, not
    'unreadable profiler database'."""
    from overlap_check.readers import db as db_reader

    run, _ = _db_run(tmp_path)

    def ctrl_c(self: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(db_reader.Deadline, "__call__", ctrl_c)
    monkeypatch.setattr(db_reader, "PROGRESS_STEPS", 1)
    result = invoke("analyze", str(run))
    assert result.exit_code == 130, result.output
    assert result.stderr.splitlines() == ["overlap-check: interrupted"]


# ---------------------------------------------------------------- ordinary mistakes


@pytest.mark.parametrize(
    ("pattern", "advice"),
    [
        ("Shared(?=Expert)", "look-ahead and look-behind are not supported"),
        ("(?<!Cast)Matmul", "look-ahead and look-behind are not supported"),
        (r"(Expert)\1", "back-references are not supported; write the repeated text out"),
        ("(?P<e>x)(?P=e)", "back-references are not supported"),
        (r"Expert\Z", r"\Z is not supported; write $ for the end of the name"),
        ("(?>Shared)Expert", "atomic groups are not supported"),
        ("Shared++", "possessive quantifiers"),
    ],
)
def test_a_regex_feature_the_engine_lacks_is_a_config_error(
    tmp_path: Path, pattern: str, advice: str
) -> None:
    """Before: 'internal error ... please report it' (polars' regex parse error)."""
    run = sorted(PARTIAL.iterdir())[0]
    result = invoke("analyze", str(run), "--side", pattern)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"overlap-check: error: regular expression {pattern!r}: {advice}")
    assert line.endswith("(key '--side')")
    config = tmp_path / "overlap-check.toml"
    config.write_text(f"[[plan]]\nname = 'p'\nside = 'SharedExpert'\ndominator = '{pattern}'\n")
    result = invoke("analyze", str(run), "--config", str(config))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"overlap-check: error: {config}:4: regular expression {pattern!r}")
    assert line.endswith("(key 'plan[1].dominator')")  # 1-based, as the config docs count


@pytest.mark.parametrize("pattern", [r"[(?=]x", r"\(?=x", r"a\\Z", "a+?", "(?P<x>Mul)"])
def test_what_only_looks_like_such_a_feature_is_taken(pattern: str) -> None:
    from overlap_check.cli.config.checks import regex_problem

    assert regex_problem(pattern) is None


def test_a_db_kernel_without_a_name_is_a_malformed_row(tmp_path: Path) -> None:
    """Before: 'internal error ... TypeError: sequence item 0: expected str instance'."""
    run, db = _db_run(tmp_path)
    (before,) = load(run)
    con = sqlite3.connect(db)
    con.execute("UPDATE COMPUTE_TASK_INFO SET name = NULL WHERE rowid % 3 = 0")
    nulled = con.execute("SELECT count(*) FROM COMPUTE_TASK_INFO WHERE name IS NULL").fetchone()[0]
    con.commit()
    con.close()
    (capture,) = load(run)
    assert nulled > 0
    assert capture.skipped_rows == nulled
    assert capture.kernels.height == before.kernels.height - nulled
    result = invoke("analyze", str(run), *PLAN, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    assert json.loads(result.stdout)["runs"][0]["skipped_rows"] == nulled


def _run_folder(tmp_path: Path, result_dirs: list[object]) -> Path:
    """A run folder whose run 1 failed (so analyze reads run 2's result dirs)."""
    from overlap_check.runner.manifest import Manifest, RunRecord, to_json

    out = tmp_path / "out"
    (out / "run-2").mkdir(parents=True)
    shutil.copytree(sorted(PARTIAL.iterdir())[0], out / "run-2" / "r_ascend_pt")
    manifest = Manifest(
        tool_version="0",
        command=("python", "x.py"),
        cwd=str(tmp_path),
        profiler="torch_npu",
        profiler_reason="test",
        level="Level1",
        window="all",
        runs_requested=2,
        created="2026-01-01T00:00:00+00:00",
        status="complete",
        runs=(
            RunRecord(index=1, dir="run-1", started="x", status="failed", exit_code=1),
            RunRecord(index=2, dir="run-2", started="x", status="ok"),
        ),
    )
    data = to_json(manifest)
    data["runs"][1]["result_dirs"] = result_dirs
    (out / "manifest.json").write_text(json.dumps(data))
    return out


@pytest.mark.parametrize(
    "where", ["../elsewhere_ascend_pt", "/tmp", "run-2/../../x", "", 5, "."], ids=repr
)
def test_a_manifest_result_dir_outside_its_folder_is_an_error(
    tmp_path: Path, where: object
) -> None:
    """Before: the manifest could send analyze to any folder, judged without a note."""
    good = invoke("analyze", str(_run_folder(tmp_path / "good", ["run-2/r_ascend_pt"])), "-q")
    assert good.exit_code in (0, 1), good.output
    out = _run_folder(tmp_path / "bad", ["run-2/r_ascend_pt", where])
    result = invoke("analyze", str(out))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"overlap-check: error: {out / 'manifest.json'}: result dir {where!r} does not lie inside "
        "the run folder (key 'runs[1].result_dirs'); a run folder's manifest names its runs' "
        "result dirs relative to it"
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[" * 100_000, "nested too deeply"),
        (b"\xff\xfe{}", "not UTF-8"),
        (
            '{"tool": "overlap-check", "manifest_version": 1, "runs": [[1]]}',
            "unexpected manifest content",
        ),
    ],
    ids=["deep", "not-utf8", "run-not-object"],
)
def test_a_broken_manifest_is_an_input_error(tmp_path: Path, text: str | bytes, words: str) -> None:
    out = _run_folder(tmp_path, ["run-2/r_ascend_pt"])
    manifest = out / "manifest.json"
    if isinstance(text, bytes):
        manifest.write_bytes(text)
    else:
        manifest.write_text(text)
    result = invoke("analyze", str(out))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"overlap-check: error: {manifest}: ") and words in line


@pytest.mark.parametrize(
    ("value", "shown"), [("99999999999", "'99999999999'"), ("-3", "'-3'"), ("many", "'many'")]
)
def test_a_graph_dump_core_count_past_32_bits_is_an_input_error(
    tmp_path: Path, value: str, shown: str
) -> None:
    """Before: 'internal error ... ComputeError: could not append value ... i128'."""
    dump = tmp_path / "ge_onnx_graph.txt"
    dump.write_text(
        'graph { op { name: "SharedExpert_MatMul" type: "MatMulV3"\n'
        f'  attr {{ key: "_op_aicore_num" value {{ s: "{value}" }} }} }} }}\n'
    )
    run = sorted(PARTIAL.iterdir())[0]
    result = invoke("analyze", str(run), "--side", "SharedExpert", "--graph-dump", str(dump))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"overlap-check: error: {dump}: operator 'SharedExpert_MatMul': _op_aicore_num is {shown}, "
        "not a core count (a whole number from 1 to 2147483647)"
    )


def test_a_ge_aicore_num_past_32_bits_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "overlap-check.toml"
    config.write_text('[device]\nge_aicore_num = "99999999999|48"\n')
    result = invoke("analyze", str(sorted(PARTIAL.iterdir())[0]), "--config", str(config))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"overlap-check: error: {config}:2: '99999999999|48': core counts")
    assert "between 1 and 2147483647" in line


def test_a_deeply_nested_toml_config_is_a_config_error(tmp_path: Path) -> None:
    """Before: 'internal error ... RecursionError'."""
    config = tmp_path / "overlap-check.toml"
    config.write_text('name = "x"\na = ' + "[" * 5000 + "]" * 5000 + "\n")
    result = invoke("analyze", str(sorted(PARTIAL.iterdir())[0]), "--config", str(config))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"overlap-check: error: {config}:2: TOML nested too deeply to be a config "
        "(arrays or tables inside one another)"
    )


@pytest.mark.parametrize("output", [False, True], ids=["stdout", "output-file"])
def test_a_non_utf8_capture_name_is_written_escaped(tmp_path: Path, output: bool) -> None:
    """Before: 'internal error ... UnicodeEncodeError: surrogates not allowed' (--output, and
    stdout under a strict UTF-8 locale). \\udcff in the JSON is the name's exact escape."""
    root = tmp_path / os.fsdecode(b"caps\xff")
    shutil.copytree(sorted(PARTIAL.iterdir())[0], root / "r_ascend_pt")
    out = tmp_path / "report.json"
    args = ["--output", str(out)] if output else []
    result = invoke("analyze", str(root), "--format", "json", "-q", *args)
    assert result.exit_code in (0, 1), result.output
    for text in [result.stdout, *([out.read_text(encoding="utf-8")] if output else [])]:
        assert '"caps\\udcff/r_ascend_pt"' in text.replace(str(root.parent) + "/", '"')
        (run,) = json.loads(text)["runs"]
        assert os.fsencode(run["path"]) == bytes(root / "r_ascend_pt")
    text_out = tmp_path / "report.txt"
    result = invoke("analyze", str(root), "--output", str(text_out), "-q")
    assert result.exit_code in (0, 1), result.output
    assert "caps\\udcff/r_ascend_pt" in text_out.read_text(encoding="utf-8")


# ---------------------------------------------------------------- sizes


def test_a_kernel_file_over_the_input_size_limit_is_an_error_saying_how_to_lift_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = sorted(PARTIAL.iterdir())[0]
    kernels = run / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    size = kernels.stat().st_size
    assert 1000 < size < 1024**2
    result = invoke("analyze", str(run), "--max-input-size", "1KB")
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"overlap-check: error: {kernels}: {size / 2**30:.1f} GiB, larger than the input size "
        "limit of 0.0 GiB; lift it with --max-input-size 64GiB (or [runs] max_input_size, "
        "OVERLAP_CHECK_MAX_INPUT_SIZE; 0: no limit)"
    )
    for lifted in ("0", "1MiB", str(size)):
        assert invoke("analyze", str(run), "--max-input-size", lifted, "-q").exit_code in (0, 1)
    monkeypatch.setenv("OVERLAP_CHECK_MAX_INPUT_SIZE", "999")
    assert invoke("analyze", str(run), "-q").exit_code == 2
    config = tmp_path / "overlap-check.toml"
    config.write_text('[runs]\nmax_input_size = "lots"\n')
    monkeypatch.delenv("OVERLAP_CHECK_MAX_INPUT_SIZE")
    result = invoke("analyze", str(run), "--config", str(config))
    assert result.exit_code == 2
    assert "expected a size such as" in result.stderr


@pytest.mark.parametrize(
    ("text", "size"),
    [(0, 0), ("0", 0), ("500MB", 500 * 10**6), ("16GiB", 16 * 2**30), ("2k", 2000), ("7 B", 7)],
)
def test_sizes_are_read_as_written(text: object, size: int) -> None:
    from overlap_check.cli.config.checks import size as parse_size

    assert parse_size(text) == size


@pytest.mark.parametrize("length", [(1 << 20) + 1, 60 << 20], ids=["over-1MiB", "over-a-record"])
def test_a_csv_field_over_1_mib_is_an_error_naming_its_line(tmp_path: Path, length: int) -> None:
    """Before: a 1 GB kernel name was read (8.3 GB of memory); 1 MiB + 1 byte is refused on
    either path (a record over csvblocks.MAX_RECORD_BYTES stops the block reader first)."""
    path = tmp_path / "kernel_details.csv"
    rows = [f"2,K{i},{T0 + 10 * i}.000\t,1.0" for i in range(5)]
    rows.insert(3, f"2,{'N' * length},{T0 + 25}.000\t,1.0")  # line 5
    path.write_text("Stream ID,Name,Start Time(us),Duration(us)\n" + "\n".join(rows) + "\n")
    result = invoke("analyze", str(path))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"overlap-check: error: {path}:5: a field over 1 MiB: not a value a profiler writes"
    )
    path.write_text(path.read_text().replace("N" * length, "N" * (1 << 20)))  # at the limit
    (capture,) = load(path)
    assert capture.kernels.height == 6 and capture.skipped_rows == 0


# ---------------------------------------------------------------- cut-short exports


def _three_step_run(tmp_path: Path) -> tuple[Path, Path]:
    """A result dir whose step_trace_time.csv lists steps 1-3, each with 20 µs of Computing,
    and whose kernel_details.csv has two 10 µs kernels in each, apart (10 + 10 = 20 µs: a
    stream 2 kernel at +0 µs, a stream 3 one at +40 µs), to be cut at a line boundary."""
    out = tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    header = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
    steps = "".join(f"{s},20.0,0.0,0.0,0.0,80.0\n" for s in (1, 2, 3))
    (out / "step_trace_time.csv").write_text(header + steps)
    rows = [
        f"{step},{stream},K{step}{stream},{T0 + 100 * step + 40 * (stream - 2)}.000\t,10.0"
        for step in (1, 2, 3)
        for stream in (2, 3)
    ]
    kernels = out / "kernel_details.csv"
    kernels.write_text("Step Id,Stream ID,Name,Start Time(us),Duration(us)\n" + "\n".join(rows))
    return out.parent, kernels


def test_an_export_cut_at_a_line_boundary_is_incomplete(tmp_path: Path) -> None:
    """Before: a kernel_details.csv cut after a whole line read as a complete run."""
    run, kernels = _three_step_run(tmp_path)
    (whole,) = load(run)
    assert whole.incomplete is None
    one_run = ("--min-runs", "1", "--warmup", "0")  # one run is not provisional by itself
    result = invoke("analyze", str(run), "--format", "json", *one_run)
    assert not any(pair["provisional"] for pair in json.loads(result.stdout)["stream_pairs"])
    lines = kernels.read_text().split("\n")
    kernels.write_text("\n".join(lines[:4]) + "\n")  # header + steps 1, 2 (one kernel)
    (cut,) = load(run)
    assert cut.skipped_rows == 0
    assert cut.incomplete == (
        "kernel_details.csv holds no kernel of 1 step(s) that step_trace_time.csv lists (3): "
        "the export looks cut short"
    )
    result = invoke("analyze", str(run), "--format", "json", *one_run)
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    assert report["stream_pairs"] and all(pair["provisional"] for pair in report["stream_pairs"])
    assert f"rank - run 1: incomplete: {cut.incomplete} ({run})" in report["notes"]
    strict = invoke("analyze", str(run), "--strict", "--format", "json", *one_run)
    assert strict.exit_code == 1
    assert (
        "rank -: provisional result (malformed rows skipped or an incomplete export) and "
        "--strict" in json.loads(strict.stdout)["gate_reasons"]
    )


def test_an_export_cut_inside_its_last_step_is_incomplete(tmp_path: Path) -> None:
    """Before: a cut inside the last listed step went unseen (every step still had a kernel)."""
    run, kernels = _three_step_run(tmp_path)
    kernels.write_text(kernels.read_text().rsplit("\n", 1)[0] + "\n")  # step 3's stream 3 kernel
    (cut,) = load(run)
    # step 3: one 10 µs kernel left, where Computing says 20 µs: short by 10 µs (50%)
    assert (cut.skipped_rows, cut.incomplete) == (
        0,
        "kernel_details.csv has compute kernels of step 3 covering 10.000 µs where "
        "step_trace_time.csv counts 20.000 µs of Computing: kernel rows are missing (skipped "
        "as malformed, trimmed, or the export cut short)",
    )
    strict = invoke("analyze", str(run), "--strict", "--min-runs", "1", "--warmup", "0")
    assert strict.exit_code == 1, strict.output


def test_computing_within_the_profilers_float_noise_is_complete(tmp_path: Path) -> None:
    # step 3's kernels cover 20 µs; the slack is 1% and 1 µs (the profiler sums floats)
    run, _ = _three_step_run(tmp_path)
    steps = run / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    listed = steps.read_text()

    def incomplete(computing: str) -> str | None:
        steps.write_text(listed.replace("3,20.0,", f"3,{computing},"))
        (capture,) = load(run)
        return capture.incomplete

    assert incomplete("19.001") is None  # more than ours: nothing is missing
    assert incomplete("20.999") is None  # 0.999 µs short: under 1 µs
    assert "counts 21.001 µs of Computing" in (incomplete("21.001") or "")  # 1.001 µs short


def test_a_trace_kernel_name_over_1_mib_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "trace_view.json"
    events = [*HARDWARE, task("A", f"{T0}.000", 1.0), task("N" * (1 << 20 | 1), f"{T0}.000", 1.0)]
    path.write_text(json.dumps(events))
    result = invoke("analyze", str(path))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line == (
        f"overlap-check: error: {path}: a name of 1048577 bytes, over 1 MiB: not a value a "
        "profiler writes (key 'name')"
    )


def test_a_trace_kernel_on_no_stream_is_counted_not_dropped(tmp_path: Path) -> None:
    """Before: a kernel on a hardware thread not named 'Stream N' (and no stream in its
    args) vanished; now it stays without a stream and the note counts it."""
    path = tmp_path / "trace_view.json"
    stray = {**task("B", f"{T0 + 5}.000", 1.0), "tid": 99}
    path.write_text(json.dumps([*HARDWARE, task("A", f"{T0}.000", 1.0), stray]))
    (capture,) = load(path)
    assert capture.kernels["name"].to_list() == ["A", "B"]
    assert capture.kernels["stream_id"].to_list() == [2, None]
    assert "1 of 2 kernel rows have no Stream ID (N/A): left out of every stream" in capture.notes


def test_a_csv_row_without_a_name_is_listed_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "kernel_details.csv"
    rows = [f"2,K{i},{T0 + 10 * i}.000\t,1.0" for i in range(4)]
    rows[1] = f"2,,{T0 + 10}.000\t,1.0"  # line 3
    path.write_text("Stream ID,Name,Start Time(us),Duration(us)\n" + "\n".join(rows) + "\n")
    (capture,) = load(path)
    assert capture.kernels["name"].to_list() == ["K0", "K2", "K3"]
    assert (capture.skipped_rows, capture.skipped_lines) == (1, (3,))
