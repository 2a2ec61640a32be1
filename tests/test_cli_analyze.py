"""`overlap-check analyze` through click: exit codes, stdout/stderr, formats, options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from overlap_check.cli import cli
from synth import scenarios, write_runs

PLAN_ARGS = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]


def invoke(*args: str | Path, cwd: Path | None = None) -> Result:
    runner = CliRunner()
    argv = ["analyze", *map(str, args)]
    if cwd is None:
        return runner.invoke(cli, argv)
    with runner.isolated_filesystem(temp_dir=cwd):
        return runner.invoke(cli, argv)


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("real")
    write_runs(scenarios.real_dual_stream().scenarios, root)
    return root


@pytest.fixture(scope="module")
def fake_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fake")
    write_runs(scenarios.fake_dual_stream().scenarios, root)
    return root


def test_pass_exits_0(real_runs: Path) -> None:
    result = invoke(real_runs, *PLAN_ARGS)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("overlap-check ")
    assert "PASS (exit 0)" in result.stdout
    assert "read 5 capture(s)" in result.stderr  # progress goes to stderr only


def test_fail_exits_1_and_json_is_the_only_stdout(fake_runs: Path) -> None:
    result = invoke(fake_runs, *PLAN_ARGS, "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)  # nothing but the report on stdout
    assert data["verdict"] == "fail" and data["exit_code"] == 1
    assert data["plans"][0]["verdict"] == "fake"
    assert "Cast" in data["plans"][0]["barrier_candidates"][0]["name"]


def test_quiet_leaves_stderr_empty(fake_runs: Path) -> None:
    result = invoke(fake_runs, *PLAN_ARGS, "-q")
    assert result.exit_code == 1
    assert result.stderr == ""


def test_stream_level_without_plan(real_runs: Path) -> None:
    result = invoke(real_runs, "--format", "json")
    assert result.exit_code == 0
    pair = json.loads(result.stdout)["stream_pairs"][0]
    assert (pair["main"], pair["side"], pair["verdict"]) == (2, 3, "real")


def test_fail_on_never_and_thresholds(fake_runs: Path) -> None:
    assert invoke(fake_runs, *PLAN_ARGS, "--fail-on", "never").exit_code == 0
    # A side stream that does not exist: no evidence fails whatever --fail-on says.
    no_side = invoke(
        fake_runs, "--side", "NoSuchOp", "--dominator", "GroupedMatmul", "--fail-on", "never"
    )
    assert no_side.exit_code == 1
    assert "no evidence" in no_side.stdout


def test_output_file_format_from_suffix(fake_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = invoke(fake_runs, *PLAN_ARGS, "--output", out)
    assert result.exit_code == 1
    assert result.stdout.startswith("overlap-check ")  # text on stdout
    assert json.loads(out.read_text())["plans"][0]["verdict"] == "fake"  # json in the file


def test_config_file_plan(fake_runs: Path, tmp_path: Path) -> None:
    config = tmp_path / "oc.toml"
    config.write_text(
        '[[plan]]\nname = "moe"\nside = "SharedExpert"\ndominator = "GroupedMatmul"\n'
        "side_stream = 3\nmain_stream = 2\n"
    )
    result = invoke(fake_runs, "--config", config, "--format", "json")
    assert result.exit_code == 1
    (plan,) = json.loads(result.stdout)["plans"]
    assert (plan["name"], plan["verdict"], plan["side_stream"]) == ("moe", "fake", 3)


def test_warmup_and_strict(real_runs: Path) -> None:
    paths = sorted(real_runs.iterdir())[:3]
    ok = invoke(*paths, *PLAN_ARGS, "--format", "json")
    assert ok.exit_code == 0
    assert json.loads(ok.stdout)["plans"][0]["provisional"] is True
    strict = invoke(*paths, *PLAN_ARGS, "--strict")
    assert strict.exit_code == 1
    assert "--strict" in strict.stdout


def test_missing_path_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    result = invoke(missing)
    assert result.exit_code == 2
    assert str(missing) in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_malformed_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "kernel_details.csv"
    bad.write_text("this,is,not\na,kernel,table\n")
    result = invoke(bad)
    assert result.exit_code == 2
    assert "kernel_details.csv" in result.stderr
    assert "Traceback" not in result.output


def test_bad_options_exit_2(real_runs: Path) -> None:
    assert invoke(real_runs, "--format", "yaml").exit_code == 2
    bad_regex = invoke(real_runs, "--side", "(", "--dominator", "GroupedMatmul")
    assert bad_regex.exit_code == 2 and "--side" in bad_regex.stderr
    assert invoke(real_runs, "--per", "step", "--real", "2").exit_code == 2


def test_verbose_lists_skipped_lines(real_profiles: Path) -> None:
    legacy = real_profiles / "torch_npu-2023-legacy" / "rank0_ascend_pt"
    result = invoke(legacy, "-v")
    assert result.exit_code in (0, 1)
    assert "skipped rows in" in result.stderr and "line(s)" in result.stderr
    quiet = invoke(legacy)
    assert "line(s)" not in quiet.stderr


def test_help_has_examples() -> None:
    result = CliRunner().invoke(cli, ["analyze", "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output and "--dominator" in result.output


def test_a_missing_renderer_is_a_usage_error() -> None:
    from overlap_check.cli.options import render
    from overlap_check.model import Report, Thresholds
    from overlap_check.model.errors import UsageError

    report = Report("0", "pass", 0, Thresholds(), ())
    with pytest.raises(UsageError, match="--format yaml is not available"):
        render(report, "yaml")


def test_unknown_rank_prints_as_dash(fake_runs: Path, tmp_path: Path) -> None:
    # A bare kernel_details.csv has no profiler_info*.json: its rank is unknown, which the
    # report prints as "-" (JSON: null), never as Python's "None".
    bare = tmp_path / "kernel_details.csv"
    bare.write_bytes(
        next(fake_runs.glob("*/ASCEND_PROFILER_OUTPUT/kernel_details.csv")).read_bytes()
    )
    result = invoke(bare)
    assert result.exit_code == 1
    assert "None" not in result.output
    assert "read 1 capture(s), rank(s) -\n" in result.output
    assert (
        "  - rank -: stream 3 vs main stream 2: verdict fake (busy-time overlap_pct 0.000) "
        "fails the gate (--fail-on partial)\n"
    ) in result.output
    as_json = json.loads(invoke(bare, "--format", "json", "-q").output)
    assert as_json["runs"][0]["rank"] is None


def test_the_plan_table_row_fits_100_columns_on_one_line() -> None:
    # README's first example: 5 runs, the first 2 cold (3 judged), occurrence #1 of run 3
    # decides; each cell on the row's own line, none wrapped under it
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "fake-dual-stream"
    args = ["analyze", str(fixture), "--side", "SharedExpert", "--dominator", "GroupedMatmul"]
    lines = CliRunner().invoke(cli, args, env={"COLUMNS": "100"}).stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  plan          rank"))
    assert lines[at].split()[-1] == "deciding"
    row = lines[at + 1].split()
    assert row[:4] == ["SharedExpert", "0", "0.000", "fake"]
    assert row[-6:] == ["3/5", "runs", "2/2", "#1,", "run", "3"]
    assert lines[at + 2] == "" and max(map(len, lines[at : at + 2])) <= 100
