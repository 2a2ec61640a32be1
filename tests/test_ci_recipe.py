"""The documented CI recipe, run exactly as written against generator output.

The gate job's shell commands are parsed out of examples/github-actions.yml and
run with bash (as GitHub runs a `run:` step: -e, pipefail) in a folder laid out
as the job sees it: overlap-check.toml (the example config), the profile job's
captures in overlap-check-runs/, and the baseline cache in overlap-check-baseline/.
The GitLab job must run the same gate commands, and docs/ci.md must show both
files verbatim.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from synth import scenarios, write_runs

REPO = Path(__file__).resolve().parents[1]
GITHUB = REPO / "examples" / "github-actions.yml"
GITLAB = REPO / "examples" / "gitlab-ci.yml"
EXAMPLE_CONFIG = REPO / "examples" / "overlap-check.toml"
CI_DOC = REPO / "docs" / "ci.md"


# --------------------------------------------------------------------------- parsing the recipe


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_after(lines: list[str], start: int) -> str:
    """The literal block scalar (``|``) opened on lines[start], dedented."""
    opener = _indent(lines[start])
    body = []
    for line in lines[start + 1 :]:
        if line.strip() and _indent(line) <= opener:
            break
        body.append(line)
    return textwrap.dedent("\n".join(body)).strip() + "\n"


def github_step(name: str) -> str:
    """The `run: |` script of the step called ``name`` in the GitHub workflow."""
    lines = GITHUB.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {name}")
    step_indent = _indent(lines[start])
    for i in range(start + 1, len(lines)):
        if lines[i].strip().startswith("- ") and _indent(lines[i]) <= step_indent:
            break
        if lines[i].strip() == "run: |":
            return _block_after(lines, i)
    raise AssertionError(f"step {name!r} has no `run: |` block")


def gitlab_gate_script() -> str:
    """The `- |` script item of overlap-check-gate that runs `overlap-check analyze`."""
    lines = GITLAB.read_text(encoding="utf-8").splitlines()
    job = lines.index("overlap-check-gate:")
    for i in range(job + 1, len(lines)):
        if lines[i].strip() == "- |":
            block = _block_after(lines, i)
            if "overlap-check analyze" in block:
                return block
    raise AssertionError("overlap-check-gate has no `- |` script running overlap-check analyze")


GATE = github_step("Gate")
UPDATE_BASELINE = github_step("Update the baseline")


def test_the_recipe_is_the_one_documented() -> None:
    doc = CI_DOC.read_text(encoding="utf-8")
    assert GITHUB.read_text(encoding="utf-8") in doc
    assert GITLAB.read_text(encoding="utf-8") in doc
    assert gitlab_gate_script() == GATE
    assert "overlap-check analyze overlap-check-runs $BASELINE_ARGS" in GATE


# --------------------------------------------------------------------------- running it


def workspace(tmp_path: Path, built: Any, name: str) -> Path:
    """A job's working directory: the config, and the profile job's captures.

    The example's ``[plan.limit_core]`` is left out: it states that the side ops run
    under limit_core_num, which the generated workloads do not model (their side
    ops use every core), so it would fail every gate here for that reason alone.
    """
    folder = tmp_path / name
    folder.mkdir()
    example = EXAMPLE_CONFIG.read_text(encoding="utf-8")
    without_limit = re.sub(r"(?ms)^# Only if the side ops.*?^mode = .*?\n", "", example)
    assert "limit_core" in example and "limit_core" not in without_limit
    (folder / "overlap-check.toml").write_text(without_limit, encoding="utf-8")
    write_runs(built.scenarios, folder / "overlap-check-runs")
    return folder


def run_step(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a step's script as GitHub does: bash --noprofile --norc -eo pipefail."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("OVERLAP_CHECK_") and key not in ("NO_COLOR", "FORCE_COLOR")
    }
    environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environ.get('PATH', '')}"
    environ["GITHUB_STEP_SUMMARY"] = str(cwd / "step-summary.md")
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def junit_of(folder: Path) -> tuple[dict[str, int], list[ET.Element]]:
    root = ET.parse(folder / "overlap-check.xml").getroot()
    suite = root.find("testsuite")
    assert suite is not None
    numbers = {k: int(suite.attrib[k]) for k in ("tests", "failures", "errors", "skipped")}
    return numbers, list(suite.iter("testcase"))


def keep_as_baseline(source: Path, target: Path) -> None:
    """What the cache does between the main branch's job and a later one."""
    shutil.copytree(source / "overlap-check-baseline", target / "overlap-check-baseline")


@pytest.fixture(scope="module")
def main_branch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The main branch's job: a clean pass, then the baseline update step."""
    folder = workspace(tmp_path_factory.mktemp("main"), scenarios.real_dual_stream(), "job")
    gate = run_step(GATE, folder)
    assert gate.returncode == 0, gate.stderr
    update = run_step(UPDATE_BASELINE, folder)
    assert update.returncode == 0, update.stderr
    return folder


def test_clean_pass(main_branch: Path) -> None:
    numbers, cases = junit_of(main_branch)
    assert numbers == {"tests": 1, "failures": 0, "errors": 0, "skipped": 0}
    assert [case.attrib["name"] for case in cases] == ["moe-shared-expert rank 0"]
    summary = (main_branch / "step-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## overlap-check: ✅ pass")
    assert "| moe-shared-expert | 1.000 | ✅ real | 1.000 | 3 of 5 |" in summary
    baseline = main_branch / "overlap-check-baseline" / "overlap-check.json"
    assert baseline.read_text() == (main_branch / "overlap-check.json").read_text()
    assert '"verdict": "pass"' in baseline.read_text()


def test_fake_plan_fails(tmp_path: Path) -> None:
    folder = workspace(tmp_path, scenarios.fake_dual_stream(), "pr")
    gate = run_step(GATE, folder)
    assert gate.returncode == 1, gate.stderr
    numbers, cases = junit_of(folder)
    assert numbers == {"tests": 1, "failures": 1, "errors": 0, "skipped": 0}
    failure = cases[0].find("failure")
    assert failure is not None
    want = "verdict fake (hidden_pct 0.000) fails the gate (--fail-on partial)"
    assert failure.attrib["message"] == want
    assert "Cast" in (failure.text or "")  # the barrier candidate is named
    summary = (folder / "step-summary.md").read_text(encoding="utf-8")
    assert summary.startswith("## overlap-check: ❌ fail")
    assert "❌ fake" in summary


# partial_dual_stream(0.6)'s hidden_pct (see the test below): 94.4 of 160 us busy
HIDDEN_60 = (60_000 + 20_000 + (98_400 - 60_000 - 2_000 - 20_000 - 2_000)) / 160_000


def test_regression_against_the_baseline_fails(tmp_path: Path, main_branch: Path) -> None:
    # The last 0.6 x 164 us = 98.4 us of the side window lie under the dominator. The
    # side ops are 80 + 20 + 60 us with two 2 us gaps: 60 + 20 + (98.4 - 60 - 2 - 20 - 2)
    # = 94.4 us of 160 us busy are hidden, hidden_pct 0.590: real, it passes on its own ...
    alone = workspace(tmp_path, scenarios.partial_dual_stream(0.6), "alone")
    assert run_step(GATE, alone).returncode == 0
    # ... but drops 1.0 - 0.59 = 0.41 > 0.1 below the main branch's report.
    folder = workspace(tmp_path, scenarios.partial_dual_stream(0.6), "pr")
    keep_as_baseline(main_branch, folder)
    gate = run_step(GATE, folder)
    assert gate.returncode == 1, gate.stderr
    numbers, cases = junit_of(folder)
    assert numbers == {"tests": 1, "failures": 1, "errors": 0, "skipped": 0}
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.attrib["message"].startswith(
        f"baseline: moe-shared-expert rank 0: hidden_pct 1.000 -> {HIDDEN_60:.3f} "
        f"({HIDDEN_60 - 1:+.3f})"
    )
    summary = (folder / "step-summary.md").read_text(encoding="utf-8")
    assert f"| {HIDDEN_60 - 1:+.3f} (1.000 → {HIDDEN_60:.3f}) ❌ |" in summary


def test_within_tolerance_passes(tmp_path: Path, main_branch: Path) -> None:
    folder = workspace(tmp_path, scenarios.real_dual_stream(seed=11), "pr")
    keep_as_baseline(main_branch, folder)
    gate = run_step(GATE, folder)
    assert gate.returncode == 0, gate.stderr
    summary = (folder / "step-summary.md").read_text(encoding="utf-8")
    assert "| +0.000 (1.000 → 1.000) |" in summary
    assert junit_of(folder)[0]["failures"] == 0


def test_compare_on_the_kept_reports(tmp_path: Path, main_branch: Path) -> None:
    folder = workspace(tmp_path, scenarios.partial_dual_stream(0.6), "pr")
    assert run_step(GATE, folder).returncode == 0
    script = "overlap-check compare overlap-check-baseline/overlap-check.json overlap-check.json\n"
    keep_as_baseline(main_branch, folder)
    compared = run_step(script, folder)
    assert compared.returncode == 1
    change = f"hidden_pct 1.000 -> {HIDDEN_60:.3f} ({HIDDEN_60 - 1:+.3f})"
    assert f"moe-shared-expert rank 0: {change}" in compared.stdout


def test_bad_regex_in_the_config_exits_2_naming_the_file(tmp_path: Path) -> None:
    folder = workspace(tmp_path, scenarios.real_dual_stream(), "pr")
    config = folder / "overlap-check.toml"
    config.write_text(
        re.sub(r'side = "SharedExpert"', 'side = "Shared(Expert"', config.read_text())
    )
    gate = run_step(GATE, folder)
    assert gate.returncode == 2
    assert "overlap-check.toml:" in gate.stderr
    assert "plan[1].side" in gate.stderr
    assert "bad regular expression" in gate.stderr
