"""Config discovery from the working directory up to the repository root, the config
named in reports, and --output written all at once."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.cli.config import find_config, load_config
from overlap_check.report.output_file import write_atomically
from synth import scenarios, write_runs

PYPROJECT_PLAN = """\
[project]
name = "workload"

[[tool.overlap-check.plan]]
name = "from-pyproject"
side = "SharedExpert"
dominator = "GroupedMatmul"
"""


@pytest.fixture(scope="module")
def fake_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fake")
    write_runs(scenarios.fake_dual_stream().scenarios, root)
    return root


def repository(tmp_path: Path) -> Path:
    """tmp/outer/repo (a git checkout: it holds .git) with repo/src/deep inside."""
    repo = tmp_path / "outer" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    return repo


def test_pyproject_plans_are_found_from_a_subdirectory(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (repo / "pyproject.toml").write_text(PYPROJECT_PLAN, encoding="utf-8")
    assert find_config(repo / "src" / "deep") == repo / "pyproject.toml"
    config = load_config(None, repo / "src" / "deep")
    assert [plan.name for plan in config.plans] == ["from-pyproject"]


def test_the_nearest_config_wins(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (repo / "pyproject.toml").write_text(PYPROJECT_PLAN, encoding="utf-8")
    nearer = repo / "src" / "overlap-check.toml"
    nearer.write_text("[thresholds]\nreal = 0.6\n", encoding="utf-8")
    assert find_config(repo / "src" / "deep") == nearer


def test_a_pyproject_without_the_table_does_not_stop_the_walk(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (repo / "overlap-check.toml").write_text("[runs]\nwarmup = 1\n", encoding="utf-8")
    (repo / "src" / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert find_config(repo / "src" / "deep") == repo / "overlap-check.toml"


def test_a_config_above_the_repository_root_is_not_used(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    (tmp_path / "outer" / "overlap-check.toml").write_text("[runs]\nwarmup = 1\n", "utf-8")
    assert find_config(repo / "src" / "deep") is None
    assert find_config(repo) is None
    assert load_config(None, repo / "src").source is None


def test_a_git_file_marks_the_root_too(tmp_path: Path) -> None:
    # A worktree or submodule has a .git file, not a folder.
    repo = tmp_path / "outer" / "worktree"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")
    (tmp_path / "outer" / "overlap-check.toml").write_text("[runs]\nwarmup = 1\n", "utf-8")
    assert find_config(repo / "src") is None


def test_reports_name_the_config_used(
    fake_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = repository(tmp_path)
    (repo / "pyproject.toml").write_text(PYPROJECT_PLAN, encoding="utf-8")
    monkeypatch.chdir(repo / "src" / "deep")
    text = CliRunner().invoke(cli, ["analyze", str(fake_runs)])
    assert text.exit_code == 1, text.output  # the pyproject plan is fake
    assert "from-pyproject" in text.stdout
    assert f"Config: {repo / 'pyproject.toml'}\n" in text.stdout
    as_json = CliRunner().invoke(cli, ["analyze", str(fake_runs), "--format", "json"])
    report = json.loads(as_json.stdout)
    assert report["config_path"] == str(repo / "pyproject.toml")
    assert [plan["name"] for plan in report["plans"]] == ["from-pyproject"]


def test_without_a_config_the_report_says_none(
    fake_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repository(tmp_path))
    result = CliRunner().invoke(cli, ["analyze", str(fake_runs), "--format", "json"])
    assert json.loads(result.stdout)["config_path"] is None
    text = CliRunner().invoke(cli, ["analyze", str(fake_runs)])
    assert "Config:" not in text.stdout


# --------------------------------------------------------------------------- --output


def _disk_full(fd: int) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"
    target.write_text("old report\n", encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _disk_full)
    with pytest.raises(OSError):
        write_atomically(target, "new report\n")
    assert target.read_text(encoding="utf-8") == "old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_write_replaces_the_file_and_keeps_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    write_atomically(target, "first\n")
    write_atomically(target, b"second\n")
    assert target.read_bytes() == b"second\n"
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("command", ["analyze", "lint"])
def test_output_that_cannot_be_written_exits_2_and_keeps_the_old_file(
    command: str, fake_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"
    target.write_text("old report\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "fsync", _disk_full)
    source = tmp_path / "model.py"
    source.write_text("x = 1\n", encoding="utf-8")
    argv = ["analyze", str(fake_runs)] if command == "analyze" else ["lint", str(source)]
    result = CliRunner().invoke(cli, [*argv, "--output", str(target)])
    assert result.exit_code == 2, result.output
    assert "cannot write the report" in result.stderr and str(target) in result.stderr
    assert target.read_text(encoding="utf-8") == "old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.py", "report.json"]
