"""Colour in the text reports: the renderers' exact escapes, and when the CLI turns them on.

The renderers take ``color: bool``; the CLI decides from ``--color``, ``NO_COLOR``,
``FORCE_COLOR`` and whether stdout is a terminal. Colour never reaches other
formats or ``--output`` files.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from overlap_check import __version__
from overlap_check.cli import cli
from overlap_check.cli.options import stdout_color
from overlap_check.lint.findings import Finding, LintResult
from overlap_check.lint.render import render as render_lint
from overlap_check.model import (
    AppliedLimit,
    BaselineDelta,
    CoresResult,
    CoreViolation,
    DeviceCores,
    PlanResult,
    Report,
    StreamPair,
    Thresholds,
)
from overlap_check.report import text
from overlap_check.report.color import color_for, paint
from overlap_check.report.json import render as render_json
from overlap_check.report.text_cores import render_cores
from overlap_check.report.text_table import table

BOLD, RED, GREEN, YELLOW = "\033[1m", "\033[31m", "\033[32m", "\033[33m"
BOLD_RED, BOLD_GREEN, RESET = "\033[1;31m", "\033[1;32m", "\033[0m"
ANSI = re.compile(r"\033\[[0-9;]*m")
FAKE_RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "fake-dual-stream"
PLAN_ARGS = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]
NO_ENV: dict[str, str | None] = {"NO_COLOR": None, "FORCE_COLOR": None, "TERM": None}


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


# --------------------------------------------------------------------------- the switch


@pytest.mark.parametrize(
    ("mode", "tty", "environ", "expected"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", False, {"FORCE_COLOR": "1"}, True),
        ("auto", True, {"NO_COLOR": "1"}, False),
        # an explicit argument beats the environment (no-color.org)
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {"FORCE_COLOR": "1"}, False),
    ],
)
def test_color_for(mode: str, tty: bool, environ: dict[str, str], expected: bool) -> None:
    stream = FakeTty() if tty else io.StringIO()
    assert color_for(mode, stream, environ) is expected


def test_color_for_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="'sometimes'"):
        color_for("sometimes", io.StringIO(), {})


def test_stdout_color_looks_at_the_real_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "stdout", FakeTty())
    assert stdout_color("auto") is True
    assert stdout_color(None) is True  # unset: auto
    monkeypatch.setenv("NO_COLOR", "1")
    assert stdout_color("auto") is False
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.delenv("NO_COLOR")
    assert stdout_color("auto") is False


def test_paint() -> None:
    assert paint("x", "bold red", True) == "\033[1;31mx\033[0m"
    assert paint("x", "yellow", True) == "\033[33mx\033[0m"
    assert paint("x", "bold red", False) == "x"
    assert paint("x", "purple", True) == "x"  # unknown style: unpainted
    assert paint("x", None, True) == "x"
    assert paint("", "red", True) == ""  # nothing to wrap


def test_table_pads_outside_the_escapes() -> None:
    rows = [["1", "real"], ["22", "fake"]]
    red = {1: lambda cell: paint(cell, "red", True)}
    # widths: column 0 = len("id") = 2, column 1 = len("verdict") = 7
    assert table(["id", "verdict"], rows) == ["  id  verdict", "  1   real", "  22  fake"]
    assert table(["id", "verdict"], rows, paint=red) == [
        "  id  verdict",
        f"  1   {RED}real{RESET}",  # the last column's padding is stripped as before
        f"  22  {RED}fake{RESET}",
    ]
    assert table(["verdict", "id"], [["real", "1"]], indent="", paint={0: red[1]}) == [
        "verdict  id",
        f"{RED}real{RESET}     1",  # "real" + 3 spaces to width 7, then the 2-space gap
    ]


# --------------------------------------------------------------------------- text report


def failing_report() -> Report:
    pair = StreamPair(rank=0, main=2, side=3, overlap_ns=1500.0, overlap_pct=0.25,
                      verdict="partial", provisional=True)  # fmt: skip
    plan = PlanResult(name="moe", rank=0, verdict="fake", overlap_pct=0.0, provisional=False,
                      side_stream=3, main_stream=2, diagnosis="1 fake")  # fmt: skip
    delta = BaselineDelta("moe", 0, 0.5, 0.0, -0.5, "regressed")
    return Report(tool_version="9.9", verdict="fail", exit_code=1, thresholds=Thresholds(),
                  runs=(), stream_pairs=(pair,), plans=(plan,), baseline=(delta,),
                  gate_reasons=("plan moe is fake",), notes=("few runs",))  # fmt: skip


def test_text_report_without_colour_has_no_escapes() -> None:
    plain = text.render(failing_report())
    assert "\033" not in plain
    assert text.render(failing_report(), color=False) == plain
    lines = plain.splitlines()
    # the stream pair is provisional: that comes first, before the verdict
    assert lines[0] == (
        "PROVISIONAL: judged on fewer than 5 runs (--min-runs); "
        "rerun or repair the capture before trusting the verdict"
    )
    assert lines[1:4] == ["overlap-check 9.9: FAIL (exit 1)", "Gate failed because:",
                          "  - plan moe is fake"]  # fmt: skip
    assert "  0     2     3     1.500       0.250 (provisional)  partial" in lines
    assert "  moe   0     0.500  0.000  -0.500  regressed" in lines


def test_text_report_colours_verdicts_and_headings() -> None:
    # colours take no room: wrapped to 100 columns, the plain and coloured lines are alike
    wrapped = text.render(failing_report(), color=True, width=100)
    assert ANSI.sub("", wrapped) == text.render(failing_report(), width=100)
    plain = text.render(failing_report())  # unwrapped (conftest), for the whole lines below
    colored = text.render(failing_report(), color=True)
    assert ANSI.sub("", colored) == plain  # the same text, only wrapped in escapes
    lines = colored.splitlines()
    assert lines[0].startswith("\033[1;33mPROVISIONAL: ") and lines[0].endswith(RESET)
    assert lines[1] == f"overlap-check 9.9: {BOLD_RED}FAIL{RESET} (exit 1)"
    assert lines[2] == f"{BOLD_RED}Gate failed because:{RESET}"
    assert lines[4] == ""
    assert lines[5].startswith(f"{BOLD}Plans{RESET} (hidden_pct: ")
    # hidden_pct first (10 wide, n/a: no figure was given), then the verdict (7 wide:
    # "fake" + 3 blanks of padding, then the 2-blank gap), overlap_pct (11), busy_pct (8);
    # judged/occ is 10 wide: "-" + 9 blanks + the gap before the deciding occurrence's "-"
    row = (
        f"  moe   0     n/a         {RED}fake{RESET}     0.000        n/a       0/0 runs  "
        f"-{' ' * 11}-"
    )
    assert row in lines
    assert lines.count(f"{BOLD}Stream pairs{RESET} (" + text.BUSY + ")") == 1
    # overlap_pct column is 19 wide, exactly "0.250 (provisional)": no padding after it
    provisional, partial = f"{YELLOW}(provisional){RESET}", f"{YELLOW}partial{RESET}"
    assert f"  0     2     3     1.500       0.250 {provisional}  {partial}" in lines
    assert f"  moe   0     0.500  0.000  -0.500  {RED}regressed{RESET}" in lines
    assert f"{BOLD}Baseline{RESET}" in lines and f"{BOLD}Notes:{RESET}" in lines
    assert "  - few runs" in lines  # notes themselves stay plain


def test_text_report_pass_is_bold_green() -> None:
    passing = PlanResult(name="moe", rank=0, verdict="real", overlap_pct=0.9, provisional=False,
                         side_stream=3, main_stream=2)  # fmt: skip
    report = Report(tool_version="9.9", verdict="pass", exit_code=0, thresholds=Thresholds(),
                    runs=(), plans=(passing,))  # fmt: skip
    lines = text.render(report, color=True).splitlines()
    assert lines[0] == f"overlap-check 9.9: {BOLD_GREEN}PASS{RESET} (exit 0)"
    row = (
        f"  moe   0     n/a         {GREEN}real{RESET}     0.900        n/a       0/0 runs  "
        f"-{' ' * 11}-"
    )
    assert row in lines
    assert f"{BOLD}Stream pairs{RESET}: none (fewer than two compute streams)" in lines


def cores_result(violations: int, warnings: int) -> CoresResult:
    bad = CoreViolation(run=3, rank=0, stream_id=3, name="Mm", accelerator_core="AI_CORE",
                        block_num=24, mix_block_num=0, limit=12, kind="aicore", start_ns=0,
                        limit_source="plan:moe")  # fmt: skip
    limit = AppliedLimit(source="plan", aicore=12, vectorcore=None, plan="moe", kernels=1)
    return CoresResult(device=DeviceCores(aicore=24, vectorcore=48, source="config"),
                       violations=(bad,) * violations, warnings=(bad,) * warnings,
                       limits=(limit,), checked_kernels=1, violation_count=violations,
                       warning_count=warnings)  # fmt: skip


def test_cores_section_colours_violations_and_warnings() -> None:
    plain = render_cores(cores_result(1, 1))
    colored = render_cores(cores_result(1, 1), color=True)
    assert ANSI.sub("", colored) == plain and "\033" not in plain
    lines = colored.splitlines()
    assert lines[0] == f"{BOLD}Cores{RESET}"
    assert f"  {RED}violations: 1 (these fail the gate){RESET}" in lines
    assert f"  {YELLOW}warnings: 1 (reported, not failed){RESET}" in lines
    clean = render_cores(cores_result(0, 0), color=True).splitlines()
    assert f"  violations: {GREEN}none{RESET}" in clean


# --------------------------------------------------------------------------- lint text


def lint_result(*findings: Finding) -> LintResult:
    return LintResult(findings=findings, files=("m.py",))


def test_lint_text_colours_place_rule_and_summary() -> None:
    finding = Finding("m.py", 3, 5, "OC103", "record_stream is a no-op", "drop it")
    assert render_lint(lint_result(finding), "text") == (
        "m.py:3:5: OC103 record_stream is a no-op\n"
        "    hint: drop it\n"
        "Found 1 finding(s) in 1 file (OC103 x1).\n"
    )
    assert render_lint(lint_result(finding), "text", color=True) == (
        f"{BOLD}m.py:3:5:{RESET} {BOLD_RED}OC103{RESET} record_stream is a no-op\n"
        "    hint: drop it\n"
        f"{RED}Found 1 finding(s) in 1 file (OC103 x1).{RESET}\n"
    )
    assert render_lint(lint_result(), "text", color=True) == (
        f"{GREEN}No findings in 1 file.{RESET}\n"
    )
    # only text colours: JSON ignores the flag
    assert render_lint(lint_result(finding), "json", color=True) == render_lint(
        lint_result(finding), "json"
    )


# --------------------------------------------------------------------------- the CLI


def analyze(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli, ["analyze", str(FAKE_RUNS), *PLAN_ARGS, *args],
                              env={**NO_ENV, **(env or {})})  # fmt: skip


def test_cli_piped_output_is_plain_by_default() -> None:
    result = analyze()
    assert result.exit_code == 1, result.output
    assert "\033" not in result.stdout
    assert result.stdout.splitlines()[0] == f"overlap-check {__version__}: FAIL (exit 1)"


@pytest.mark.parametrize(
    ("args", "env"),
    [
        ((), {"FORCE_COLOR": "1"}),
        (("--color", "always"), {}),
        (("--color", "always"), {"NO_COLOR": "1"}),  # the argument wins
    ],
)
def test_cli_colour_on(args: tuple[str, ...], env: dict[str, str | None]) -> None:
    result = analyze(*args, env=env)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"overlap-check {__version__}: {BOLD_RED}FAIL{RESET} (exit 1)"
    assert any(f"{RED}fake{RESET}" in line for line in lines)
    assert "\033" not in result.stderr  # progress lines stay plain


@pytest.mark.parametrize(
    ("args", "env"),
    [
        ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"}),  # NO_COLOR wins over FORCE_COLOR
        ((), {"FORCE_COLOR": "0"}),
        (("--color", "never"), {"FORCE_COLOR": "1"}),
        (("--color", "auto"), {"NO_COLOR": ""}),  # empty: unset, and stdout is a pipe
    ],
)
def test_cli_colour_off(args: tuple[str, ...], env: dict[str, str | None]) -> None:
    result = analyze(*args, env=env)
    assert result.exit_code == 1, result.output
    assert "\033" not in result.stdout
    assert "FAIL (exit 1)" in result.stdout


@pytest.mark.parametrize("fmt", ["json", "markdown", "junit", "github"])
def test_cli_other_formats_never_colour(fmt: str) -> None:
    result = analyze("--format", fmt, "--color", "always", env={"FORCE_COLOR": "1"})
    assert result.exit_code == 1, result.output
    assert result.stdout and "\033" not in result.stdout


@pytest.mark.parametrize("name", ["report.txt", "report.json", "report.md", "report.xml"])
def test_cli_output_files_never_colour(tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    result = analyze("--output", str(target), env={"FORCE_COLOR": "1"})
    assert result.exit_code == 1, result.output
    assert f"{RED}fake{RESET}" in result.stdout  # the terminal copy is coloured
    written = target.read_text(encoding="utf-8")
    assert written and "\033" not in written
    if name == "report.txt":  # the same report, without the escapes
        assert written == ANSI.sub("", result.stdout)


def test_real_pipe_plain_unless_forced() -> None:
    """Through a real pipe: auto is off, and FORCE_COLOR survives click's ANSI stripping."""
    base = {k: v for k, v in os.environ.items() if k not in NO_ENV}
    argv = [sys.executable, "-m", "overlap_check", "analyze", str(FAKE_RUNS), *PLAN_ARGS, "-q"]
    piped = subprocess.run(argv, env=base, capture_output=True, text=True, timeout=120)
    assert piped.returncode == 1, piped.stderr
    assert "FAIL (exit 1)" in piped.stdout and "\033" not in piped.stdout
    forced = subprocess.run(argv, env={**base, "FORCE_COLOR": "1"}, capture_output=True,
                            text=True, timeout=120)  # fmt: skip
    assert forced.returncode == 1, forced.stderr
    assert f"{BOLD_RED}FAIL{RESET}" in forced.stdout


def test_lint_cli_colour(tmp_path: Path) -> None:
    source = tmp_path / "clean.py"
    source.write_text("x = 1\n")
    runner = CliRunner()
    plain = runner.invoke(cli, ["lint", str(source)], env=NO_ENV)
    assert (plain.exit_code, plain.stdout) == (0, "No findings in 1 file.\n")
    forced = runner.invoke(cli, ["lint", str(source)], env={**NO_ENV, "FORCE_COLOR": "1"})
    assert forced.stdout == f"{GREEN}No findings in 1 file.{RESET}\n"
    never = runner.invoke(cli, ["lint", str(source), "--color", "never"],
                          env={**NO_ENV, "FORCE_COLOR": "1"})  # fmt: skip
    assert never.stdout == "No findings in 1 file.\n"
    out = tmp_path / "lint.txt"
    runner.invoke(cli, ["lint", str(source), "--color", "always", "--output", str(out)], env=NO_ENV)
    assert out.read_text() == "No findings in 1 file.\n"


def test_compare_cli_colour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no config here
    for name in ("GITHUB_STEP_SUMMARY", "OVERLAP_CHECK_TOLERANCE"):
        monkeypatch.delenv(name, raising=False)
    for name, pct in (("base.json", 0.87), ("head.json", 0.40)):
        plan = PlanResult(name="moe", rank=0, verdict="real", overlap_pct=pct, hidden_pct=pct,
                          provisional=False,
                          side_stream=3, main_stream=2)  # fmt: skip
        report = Report(tool_version=__version__, verdict="pass", exit_code=0,
                        thresholds=Thresholds(), runs=(), plans=(plan,))  # fmt: skip
        (tmp_path / name).write_text(render_json(report))
    runner = CliRunner()
    plain = runner.invoke(cli, ["compare", "base.json", "head.json"], env=NO_ENV)
    assert plain.exit_code == 1 and "\033" not in plain.stdout
    assert plain.stdout.splitlines()[-1] == "result: fail (1 failing of 1)"
    colored = runner.invoke(cli, ["compare", "base.json", "head.json", "--color", "always"],
                            env=NO_ENV)  # fmt: skip
    lines = colored.stdout.splitlines()
    assert lines[-1] == f"result: {RED}fail{RESET} (1 failing of 1)"
    assert lines[1].endswith(f"  [{BOLD_RED}REGRESSED{RESET}]")
    assert ANSI.sub("", colored.stdout) == plain.stdout
    as_json = runner.invoke(cli, ["compare", "base.json", "head.json", "--format", "json"],
                            env={**NO_ENV, "FORCE_COLOR": "1"})  # fmt: skip
    assert "\033" not in as_json.stdout
