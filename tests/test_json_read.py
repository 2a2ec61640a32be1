"""Report.from_json: a JSON report read back renders to the same text again."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

import overlap_check
from overlap_check.cli import cli
from overlap_check.judge.baseline import apply_baseline
from overlap_check.model import CoreLimit, FailOn, Options, Plan, Report, choices_of
from overlap_check.model.errors import InputError, OverlapCheckError
from overlap_check.report import github, junit, markdown, text
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


# --------------------------------------------------------------------------- the whole Report

RENDERERS: dict[str, Callable[[Report], str]] = {
    "json": render,
    "text": text.render,
    "markdown": markdown.render,
    "junit": junit.render,
    "github": github.render,
}
LIBRARY_PLAN = Plan("moe-shared-expert", side="SharedExpert", dominator="GroupedMatmul")
OPTION_SETS = {
    "streams": Options(),
    "plan": Options(plans=(LIBRARY_PLAN,)),
    # the gate's other settings, and samples that are steps (PlanRun.step)
    "per step, strict, fail on fake": Options(
        plans=(LIBRARY_PLAN,), per="step", strict=True, fail_on="fake"
    ),
}


def assert_restored(rep: Report, name: str) -> None:
    """JSON -> from_json gives the same Report, and every format renders from it alike."""
    document = render(rep)
    back = Report.from_json(json.loads(document), "report.json")
    for fmt, renderer in RENDERERS.items():
        assert renderer(back) == renderer(rep), f"{name}: {fmt}"
    assert back == rep, name


def _reports_of(folder: Path) -> Iterator[tuple[str, Report]]:
    for label, options in OPTION_SETS.items():
        try:
            yield f"{folder.name}, {label}", overlap_check.check([str(folder)], options)
        except OverlapCheckError:
            continue  # a capture these options refuse (a bare msprof dir without --per ...)


@pytest.mark.parametrize("folder", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_report_is_restored_whole(folder: str) -> None:
    reports = list(_reports_of(FIXTURES / folder))
    assert reports or folder == "msprof-cli"  # a raw msprof dir needs its own options
    for name, rep in reports:
        assert_restored(rep, name)


def test_every_real_capture_report_is_restored_whole(real_profiles: Path) -> None:
    checked = 0
    for folder in sorted(path for path in real_profiles.iterdir() if path.is_dir()):
        for name, rep in _reports_of(folder):
            assert_restored(rep, name)
            checked += 1
    assert checked >= 3


def test_the_gate_marks_and_settings_are_restored() -> None:
    options = Options(plans=(LIBRARY_PLAN,), fail_on="fake", strict=True)
    rep = overlap_check.check([str(FIXTURES / "partial-dual-stream")], options)
    document = json.loads(render(rep))
    assert (document["fail_on"], document["strict"]) == ("fake", True)
    (plan,) = document["plans"]
    assert (plan["verdict"], plan["gate_failures"]) == ("partial", [])  # partial passes here
    fake = overlap_check.check([str(FIXTURES / "fake-dual-stream")], options)
    back = Report.from_json(json.loads(render(fake)), "report.json")
    assert (back.fail_on, back.strict) == ("fake", True)
    assert back.plans[0].gate_failures == (
        "verdict fake (hidden_pct 0.000) fails the gate (--fail-on fake)",
    )
    assert [p.gate_failures for p in back.stream_pairs] == [
        ("verdict fake (busy-time overlap_pct 0.000) fails the gate (--fail-on fake)",)
    ]


def test_the_fake_share_the_plans_were_judged_with_is_kept() -> None:
    options = Options(plans=(LIBRARY_PLAN,), fake_share=0.4)
    rep = overlap_check.check([str(FIXTURES / "partial-dual-stream")], options)
    document = json.loads(render(rep))
    assert document["thresholds"] == {"real": 0.5, "fake": 0.05, "fake_share": 0.4}
    assert Report.from_json(document, "report.json").fake_share == 0.4
    del document["thresholds"]["fake_share"]  # a report written before it was kept
    assert Report.from_json(document, "report.json").fake_share == Options().fake_share


def test_step_samples_keep_their_step_id() -> None:
    rep = overlap_check.check([str(FIXTURES / "warm-cold-runs")], OPTION_SETS["plan"])
    stepped = overlap_check.check(
        [str(FIXTURES / "warm-cold-runs")], replace(OPTION_SETS["plan"], per="step")
    )
    back = Report.from_json(json.loads(render(stepped)), "report.json")
    # synth.construction.build_run: every kernel of a run is in profiler step 50
    assert {r.step for r in back.plans[0].per_run} == {50}
    assert {r.step for r in rep.plans[0].per_run} == {None}  # per run: no step of its own


def test_the_schema_spells_the_fail_on_values_of_the_model() -> None:
    schema = json.loads((FIXTURES.parent / "docs" / "report.schema.json").read_text())
    assert tuple(schema["properties"]["fail_on"]["enum"]) == choices_of(FailOn)


def test_reference_core_limits_and_baseline_reports_are_restored_whole() -> None:
    with_reference = replace(
        OPTION_SETS["plan"], reference=str(FIXTURES / "slower-single-stream"), require_gain=0
    )
    rep = overlap_check.check([str(FIXTURES / "slower-multi-stream")], with_reference)
    assert rep.reference is not None and rep.reference.plans[0].steps  # steps to restore
    assert_restored(rep, "reference")
    limited = Plan(
        "moe-shared-expert",
        side="SharedExpert",
        dominator="GroupedMatmul",
        limit_core=CoreLimit(aicore=12, vectorcore=24),
    )
    cores = overlap_check.check([str(FIXTURES / "core-limits")], Options(plans=(limited,)))
    assert cores.cores is not None and cores.cores.violations
    assert_restored(cores, "core limits")
    base = overlap_check.check([str(FIXTURES / "real-dual-stream")], OPTION_SETS["plan"])
    head = overlap_check.check([str(FIXTURES / "fake-dual-stream")], OPTION_SETS["plan"])
    judged = apply_baseline(head, base, 0.1)
    assert judged.baseline and judged.baseline_tolerance == 0.1
    assert_restored(judged, "baseline")


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
