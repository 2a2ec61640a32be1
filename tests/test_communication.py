"""The Communication section: busy / hidden / exposed communication time per step, and the
cross-check with the profiler's own step_trace_time.csv (docs/method.md, "Communication")."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.judge.pipeline import check
from overlap_check.model import Options, ProfilerStepTime, Report
from overlap_check.model.errors import InputError
from overlap_check.readers.step_trace import read_step_trace_csv, read_step_trace_db
from overlap_check.report import json as json_report
from overlap_check.report import markdown, text
from synth import CommOp, Kernel, Scenario, write_result_dir
from synth.step_trace import header

T0 = 1_736_408_883_704_643_212  # a real-looking epoch start (ns)
US = 1000


def _kernel(stream: int, start_us: int, dur_us: int, step: int) -> Kernel:
    return Kernel(
        "aclnnMatmul_MatMulV3Common_MatMulV3", stream, T0 + start_us * US, dur_us * US, step=step
    )


def _comm(start_us: int, dur_us: int, step: int, n: int) -> CommOp:
    return CommOp(f"hcom_allReduce__868_{n}_1", T0 + start_us * US, dur_us * US, step=step)


# Step 1: compute on stream 2 at [0, 100) and [150, 250) us, one all-reduce at [50, 200):
#   busy 150; hidden [50, 100) + [150, 200) = 50 + 50 = 100; exposed 150 - 100 = 50.
# Step 2 (10 ms later, so the profiler's step ranges stay apart): compute on stream 2 at
#   [10000, 10100) and on stream 3 at [10100, 10200); all-reduces [10080, 10180) and
#   [10150, 10250): busy = union [10080, 10250) = 170; compute union [10000, 10200) = 200;
#   hidden [10080, 10200) = 120; exposed 170 - 120 = 50.
SCENARIO = Scenario(
    name="comm-two-steps",
    kernels=(
        _kernel(2, 0, 100, 1),
        _kernel(2, 150, 100, 1),
        _kernel(2, 10000, 100, 2),
        _kernel(3, 10100, 100, 2),
    ),
    communication=(_comm(50, 150, 1, 0), _comm(10080, 100, 2, 1), _comm(10150, 100, 2, 2)),
)
EXPECTED = {1: (150, 100, 50, 200), 2: (170, 120, 50, 200)}  # busy, hidden, exposed, compute


@pytest.fixture
def capture_dir(tmp_path: Path) -> Path:
    return write_result_dir(SCENARIO, tmp_path / "prof")


def _report(path: Path, per: str = "run", warmup: int = 2) -> Report:
    return check([path], Options(per=per, warmup=warmup))  # type: ignore[arg-type]


def test_generated_capture_hand_computed(capture_dir: Path) -> None:
    report = _report(capture_dir)
    (rank,) = report.communication
    got = {
        s.step: (s.busy_ns // US, s.hidden_ns // US, s.exposed_ns // US, s.compute_ns // US)
        for s in rank.steps
    }
    assert got == EXPECTED
    # one run: the warm median is the whole run, busy 150 + 170 = 320, hidden 100 + 120 = 220
    assert (rank.busy_ns, rank.hidden_ns, rank.exposed_ns) == (320 * US, 220 * US, 100 * US)
    assert rank.hidden_pct == pytest.approx(220 / 320)
    for step in rank.steps:  # the generator's step_trace_time.csv says the same, per step
        assert step.profiler is not None and step.profiler.overlapped_ns is not None
        assert abs(step.hidden_ns - step.profiler.overlapped_ns) <= US
        assert step.profiler_difference is not None and step.profiler_difference < 0.01
    assert not [n for n in report.notes if "differ from the profiler" in n]


def test_per_step_medians(capture_dir: Path) -> None:
    (rank,) = _report(capture_dir, per="step", warmup=0).communication
    # two steps, both warm (no warm-up asked for): medians of two values
    assert rank.busy_ns == (150 + 170) / 2 * US
    assert rank.hidden_ns == (100 + 120) / 2 * US
    assert rank.exposed_ns == 50 * US
    assert rank.hidden_pct == pytest.approx((100 / 150 + 120 / 170) / 2)


def test_warm_median_over_runs(tmp_path: Path) -> None:
    """Five runs, each one step: compute [0, 100) us on stream 2 and one all-reduce of 50 us
    starting at x = 50, 60, 70, 80, 90 us, so hidden = 100 - x = 50, 40, 30, 20, 10 us and
    exposed = 50 - hidden = 0, 10, 20, 30, 40 us. Runs 1-2 are cold; over runs 3-5 the
    medians are hidden 20, exposed 30, busy 50 us and hidden_pct median(0.6, 0.4, 0.2) 0.4."""
    runs = []
    for k, x in enumerate((50, 60, 70, 80, 90)):
        shift = k * 10_000_000  # each run 10 s later: its own result dir
        runs.append(
            Scenario(
                name="comm-runs",
                kernels=(_kernel(2, shift, 100, 1),),
                communication=(_comm(shift + x, 50, 1, 0),),
            )
        )
    for run in runs:
        write_result_dir(run, tmp_path)
    report = check([tmp_path], Options())
    (rank,) = report.communication
    assert [s.hidden_ns // US for s in rank.steps] == [50, 40, 30, 20, 10]
    assert [s.warm for s in rank.steps] == [False, False, True, True, True]
    assert (rank.busy_ns, rank.hidden_ns, rank.exposed_ns) == (50 * US, 20 * US, 30 * US)
    assert rank.hidden_pct == pytest.approx(0.4)
    assert not rank.provisional


def _damage_step_trace(capture_dir: Path) -> Path:
    """Step 2's Overlapped 120 us written as 100 us (and Not Overlapped 70): 20 / 170 = 11.8%."""
    path = capture_dir / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    lines = path.read_text().splitlines()
    cells = lines[2].split(",")
    assert cells[0] == "2"
    cells[2], cells[3], cells[4] = "70.0", "100.0", "170.0"
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_difference_above_one_percent_is_a_note_in_every_renderer(capture_dir: Path) -> None:
    _damage_step_trace(capture_dir)
    report = _report(capture_dir)
    step = next(s for s in report.communication[0].steps if s.step == 2)
    assert step.profiler_difference == pytest.approx(20 / 170)
    (note,) = [n for n in report.notes if "differ from the profiler" in n]
    assert "run 1 step 2" in note and "11.8%" in note
    assert note in text.render(report)
    assert note.replace("|", "\\|") in markdown.render(report)
    assert note in json.loads(json_report.render(report))["notes"]


def test_profiler_communication_we_cannot_see_is_a_note(tmp_path: Path) -> None:
    """A step_trace_time.csv row with communication for a capture without communication
    rows: nothing to compare, and the report says so."""
    quiet = Scenario(name="no-comm", kernels=(_kernel(2, 0, 100, 1),))
    capture_dir = write_result_dir(quiet, tmp_path)
    path = capture_dir / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    path.write_text(header("2025") + "\n1,100.0,30.0,20.0,50.0,0,100,0,30.0,0\n")
    report = _report(capture_dir)
    assert report.communication == ()
    (note,) = [n for n in report.notes if "the profiler counts" in n]
    assert "run 1 step 1" in note and "50.000 µs of communication" in note


def test_json_reads_back_and_renders_alike(capture_dir: Path) -> None:
    rendered = json_report.render(_report(capture_dir))
    assert json_report.render(Report.from_json(json.loads(rendered))) == rendered


def test_cli_text_has_the_section(capture_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", str(capture_dir), "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    assert "Communication (whole device" in result.output


# ----------------------------------------------------------------- reader


@pytest.mark.parametrize("version", ["2023", "2025", "2026"])
def test_header_variants(tmp_path: Path, version: str) -> None:
    head = header(version).split(",")
    values = {
        "Device_id": "3",
        "Step": "7",
        "Computing": "8827.472999999998",
        "Communication(Not Overlapped)": "N/A",
        "Overlapped": "4001.281999999992",
        "Communication": "85516.889",
    }
    path = tmp_path / "step_trace_time.csv"
    path.write_text(",".join(head) + "\r\n" + ",".join(values.get(h, "0") for h in head) + "\r\n")
    (row,) = read_step_trace_csv(path)
    assert row == ProfilerStepTime(
        step=7,
        device=3 if version == "2026" else None,
        computing_ns=8_827_473,  # 8827.472999999998 us rounds to the ns
        not_overlapped_ns=None,  # N/A
        overlapped_ns=4_001_282,
        communication_ns=85_516_889,
        free_ns=0,
    )


def test_blank_step(tmp_path: Path) -> None:
    path = tmp_path / "step_trace_time.csv"
    path.write_text(header("2023") + "\n,1,2,3,5,0,9,0,2\n")
    (row,) = read_step_trace_csv(path)
    assert row.step is None and row.overlapped_ns == 3000


def test_malformed_row_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "step_trace_time.csv"
    path.write_text(header("2023") + "\n1,1,2,3,5,0,9,0,2\n2,1,two,3,5,0,9,0,2\n")
    with pytest.raises(InputError) as err:
        read_step_trace_csv(path)
    assert str(err.value).startswith(f"{path}:3: malformed step_trace_time.csv row")


def test_negative_figure_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "step_trace_time.csv"
    path.write_text(header("2023") + "\n1,1,2,-3,5,0,9,0,2\n")
    with pytest.raises(InputError, match=":2: malformed"):
        read_step_trace_csv(path)


def test_impossible_communication_figure_is_an_error(capture_dir: Path) -> None:
    from dataclasses import replace

    from overlap_check.judge.sanity import check_report

    report = _report(capture_dir)
    rank = replace(report.communication[0], hidden_pct=1.5)
    with pytest.raises(InputError, match="hidden_pct"):
        check_report(replace(report, communication=(rank,)))


def test_not_a_step_trace(tmp_path: Path) -> None:
    path = tmp_path / "step_trace_time.csv"
    path.write_text("Name,Value\nx,1\n")
    with pytest.raises(InputError, match="no column 'Step'"):
        read_step_trace_csv(path)


def _analysis_db(path: Path, rows: list[tuple[object, ...]]) -> Path:
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE StepTraceTime (step TEXT, computing NUMERIC, "
            "communication_not_overlapped NUMERIC, overlapped NUMERIC, communication NUMERIC, "
            "free NUMERIC, stage NUMERIC, bubble NUMERIC, "
            "communication_not_overlapped_and_exclude_receive NUMERIC, preparing NUMERIC)"
        )
        db.executemany("INSERT INTO StepTraceTime VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    return path


def test_analysis_db(tmp_path: Path) -> None:
    path = _analysis_db(
        tmp_path / "analysis.db",
        [("50", 8843.91, 85881.122, 3999.454, 89880.576, 25900.158, 1, 0, 1, 1)],
    )
    assert read_step_trace_db(path) == (
        ProfilerStepTime(50, None, 8_843_910, 85_881_122, 3_999_454, 89_880_576, 25_900_158),
    )


def test_analysis_db_bad_value(tmp_path: Path) -> None:
    path = _analysis_db(tmp_path / "analysis.db", [("50", "x", 1, 1, 1, 1, 1, 0, 1, 1)])
    with pytest.raises(InputError, match="StepTraceTime row 1"):
        read_step_trace_db(path)


def test_analysis_db_without_the_table(tmp_path: Path) -> None:
    path = tmp_path / "analysis.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE other (x)")
    assert read_step_trace_db(path) == ()


# ----------------------------------------------------------------- real captures

AGREE = [
    "torch_npu-level0-text",
    "torch_npu-level1-text",
    "torch_npu-910A-level0",
    "torch_npu-level0-db",
]


@pytest.mark.parametrize("folder", AGREE)
def test_real_capture_matches_profiler_overlapped(real_profiles: Path, folder: str) -> None:
    if not (real_profiles / folder).is_dir():
        pytest.skip(f"{folder} is absent")
    (rank,) = _report(real_profiles / folder).communication
    assert rank.steps
    for step in rank.steps:
        assert step.profiler is not None, "no step_trace_time.csv / analysis.db row for the step"
        assert step.profiler.overlapped_ns is not None
        assert abs(step.hidden_ns - step.profiler.overlapped_ns) <= US
        assert step.profiler.not_overlapped_ns is not None
        assert abs(step.exposed_ns - step.profiler.not_overlapped_ns) <= US


@pytest.mark.parametrize("folder", AGREE[:3])
def test_real_trace_view_matches_profiler_overlapped(real_profiles: Path, folder: str) -> None:
    """The same from the trace alone (its communication threads): step_trace_time.csv next to
    a bare trace_view.json is its sibling."""
    if not (real_profiles / folder).is_dir():
        pytest.skip(f"{folder} is absent")
    (trace,) = (real_profiles / folder).glob("*/ASCEND_PROFILER_OUTPUT/trace_view.json")
    (rank,) = _report(trace).communication
    for step in rank.steps:
        assert step.profiler is not None and step.profiler.overlapped_ns is not None
        assert abs(step.hidden_ns - step.profiler.overlapped_ns) <= US


def test_real_trimmed_legacy_capture_is_flagged(real_profiles: Path) -> None:
    """The 2023 capture's kernel_details.csv is a 21-row excerpt of the step that
    step_trace_time.csv describes in full (docs/method.md): the figures cannot agree, and
    the report says so."""
    folder = real_profiles / "torch_npu-2023-legacy"
    if not folder.is_dir():
        pytest.skip("torch_npu-2023-legacy is absent")
    report = _report(folder)
    (step,) = report.communication[0].steps
    assert step.profiler is not None and step.profiler.communication_ns == 153_601_324
    assert step.busy_ns < step.profiler.communication_ns / 10
    assert [n for n in report.notes if "step 2: communication" in n]


def test_the_step_table_drops_the_profiler_columns_only_when_no_step_has_them(
    capture_dir: Path,
) -> None:
    with_profiler = _report(capture_dir)
    assert "profiler comm_us" in markdown.render(with_profiler)
    # the text puts the profiler's figures in a table of their own, by run and step, so that
    # neither wraps: ours, then theirs (step 1: the generator's Communication is our 150 us)
    lines = text.render(with_profiler).splitlines()
    ours = lines.index("  rank  run  step  warm  busy_us  hidden_us  exposed_us  compute_us")
    theirs = next(
        i for i, line in enumerate(lines) if line.startswith("  rank  run  step  comm_us")
    )
    assert ours < theirs and lines[theirs + 1].split()[:4] == ["0", "1", "1", "150.000"]
    explained = [line for line in lines[ours:theirs] if line.startswith("  per step; profiler:")]
    assert explained and "step_trace_time.csv" in explained[0]
    # without step_trace_time.csv (or a CUDA trace) no step has the profiler's figures: five
    # "-" columns and a "-" diff would fill the table (and wrap it) with nothing
    (capture_dir / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv").unlink()
    alone = _report(capture_dir)
    assert all(s.profiler is None for s in alone.communication[0].steps)
    for rendered in (text.render(alone), markdown.render(alone)):
        assert "profiler comm_us" not in rendered and "free_us" not in rendered
        assert "per step (no profiler figures to compare)" in rendered
    # our four figures stay, step 1's busy 150, hidden 100, exposed 50, compute 200 us
    row = next(
        line for line in text.render(alone).splitlines() if line.split()[:3] == ["0", "1", "1"]
    )
    assert row.split()[4:] == ["150.000", "100.000", "50.000", "200.000"]
