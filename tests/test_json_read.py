"""Report.from_json: a JSON report read back renders to the same text again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.errors import InputError
from overlap_check.model import Report
from overlap_check.report.json import render

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PLAN = ["--side", "SharedExpert", "--dominator", "GroupedMatmul", "--side-stream", "3",
        "--main-stream", "2", "--name", "moe-shared-expert"]  # fmt: skip
LIMITS = """
[[plan]]
name = "moe-shared-expert"
side = "SharedExpert"
dominator = "GroupedMatmul"
[plan.limit_core]
aicore = 12
vectorcore = 24
"""


def analyze_json(*args: str) -> str:
    result = CliRunner().invoke(cli, ["analyze", *args, "--format", "json", "-q"])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def assert_round_trip(text: str) -> None:
    again = render(Report.from_json(json.loads(text), "report.json"))
    assert again == text


@pytest.mark.parametrize("folder", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_report_reads_back(folder: str) -> None:
    assert_round_trip(analyze_json(str(FIXTURES / folder)))
    assert_round_trip(analyze_json(str(FIXTURES / folder), *PLAN))


def test_core_findings_and_baseline_read_back(tmp_path: Path) -> None:
    config = tmp_path / "limits.toml"
    config.write_text(LIMITS, encoding="utf-8")
    cores = analyze_json(str(FIXTURES / "core-limits"), "--config", str(config))
    assert json.loads(cores)["cores"]["violations"]  # there are findings to read back
    assert_round_trip(cores)
    base = tmp_path / "base.json"
    base.write_text(analyze_json(str(FIXTURES / "real-dual-stream"), *PLAN), encoding="utf-8")
    judged = analyze_json(str(FIXTURES / "fake-dual-stream"), *PLAN, "--baseline", str(base))
    assert json.loads(judged)["baseline"]
    assert_round_trip(judged)


def test_per_step_samples_read_back() -> None:
    assert_round_trip(analyze_json(str(FIXTURES / "warm-cold-runs"), *PLAN, "--per", "step"))


def test_a_share_outside_0_1_is_an_error_naming_the_key() -> None:
    text = analyze_json(str(FIXTURES / "real-dual-stream"), *PLAN)
    document = json.loads(text)
    document["plans"][0]["per_run"][0]["overlap_pct"] = 1.25
    with pytest.raises(InputError, match=r"unexpected value 1\.25") as caught:
        Report.from_json(document, "report.json")
    where = (caught.value.path, caught.value.key)
    assert where == ("report.json", "plans[0].per_run[0].overlap_pct")


def test_indented_writes_the_bytes_of_json_dumps_indent_2() -> None:
    from overlap_check.report.json import indented

    data = {
        "empty": [],
        "none": {},
        "nested": [[], [{}], {"a": [1, {"b": None}]}],
        "numbers": [0, -7, 2**63 - 1, 0.1, 1e-05, 1e16, 1.2345678901234568e17, -0.0],
        "text": 'é µs\u2028 "q" \\ \n\t\x01',
        "flags": [True, False],
    }
    assert indented(data) == json.dumps(data, indent=2, ensure_ascii=False)
    # NaN is json.dumps' own token, not JSON, and a lone surrogate is no UTF-8: the same
    # text all the same
    for odd in ({"x": [float("nan"), float("inf")]}, {"lone surrogate": "\ud800"}):
        assert indented(odd) == json.dumps(odd, indent=2, ensure_ascii=False)
