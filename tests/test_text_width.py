"""The text report at a terminal (issue 26): fitted to COLUMNS (default 100), one unit
spelling (µs), tables kept aligned, help that names only real options."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.report import text_table
from overlap_check.report.text_table import WIDTH, table, terminal_width, wrap_lines

ROOT = Path(__file__).resolve().parents[1]
PLAN = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]


@pytest.fixture(autouse=True)
def _terminal_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real default width (conftest renders other tests' reports unwrapped)."""
    monkeypatch.setattr(text_table, "DEFAULT_WIDTH", 100)


@pytest.mark.parametrize(("columns", "width"), [(None, 100), ("80", 80), ("120", 120)])
@pytest.mark.parametrize("fixture", ["fake-dual-stream", "core-limits", "two-rank-job"])
def test_the_report_fits_the_terminal(columns: str | None, width: int, fixture: str) -> None:
    env = {"COLUMNS": columns or ""}
    for plan in (PLAN, []):
        result = CliRunner(env=env).invoke(
            cli, ["analyze", str(ROOT / "fixtures" / fixture), *plan]
        )
        assert result.exit_code in (0, 1), result.output
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= width, fixture
        assert re.findall(r"\d\]? us\b", result.stdout) == []  # µs, never us
        assert " µs" in result.stdout or not plan


def test_long_lines_get_a_hanging_indent_and_paths_break_after_a_slash() -> None:
    text = "  - " + "word " * 20 + "/a/long/path/to/some/file.json"
    wrapped = wrap_lines(text, 30).split("\n")
    assert all(len(line) <= 30 for line in wrapped)
    assert wrapped[0].startswith("  - word") and wrapped[1].startswith("    word")
    assert "".join(line.strip() for line in wrapped).endswith("/a/long/path/to/some/file.json")
    assert wrap_lines("    x " + "y " * 40, 40).split("\n")[1].startswith("        y")


def test_a_wide_table_wraps_its_cells_then_moves_its_last_column_under_each_row() -> None:
    rows = [["1", "a b c d e f g h", "z" * 20]]
    token = WIDTH.set(40)
    try:
        narrow = table(["n", "words", "path"], rows)
        assert all(len(line) <= 40 for line in narrow)
        assert narrow[1].split()[:2] == ["1", "a"]  # the words cell wrapped in its column
        token2 = WIDTH.set(20)
        try:
            under = table(["n", "words", "path"], rows)
        finally:
            WIDTH.reset(token2)
        assert under[-1] == "      path: " + "z" * 20
    finally:
        WIDTH.reset(token)


def test_terminal_width() -> None:
    assert terminal_width({}) == 100
    assert terminal_width({"COLUMNS": "80"}) == 80
    assert terminal_width({"COLUMNS": "10"}) == 40  # never narrower than 40
    assert terminal_width({"COLUMNS": "wide"}) == 100


def test_compare_help_names_no_output_option() -> None:
    assert "--output" not in CliRunner().invoke(cli, ["compare", "--help"]).stdout
    assert "--output" in CliRunner().invoke(cli, ["analyze", "--help"]).stdout
