"""Baselines: loading, comparing, failing the gate, and `overlap-check compare`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.judge.baseline import apply_baseline, compare_reports, load_baseline
from overlap_check.model import BaselineDelta, PlanResult, Report, StreamPair, Thresholds
from overlap_check.model.errors import InputError, UsageError
from overlap_check.report.json import render, to_dict


def doc(plans: list[tuple[str, int | None, float | None]], pairs: Any = ()) -> Report:
    """A report with these plan figures (name, rank, hidden_pct) and stream pairs
    (rank, main, side, overlap_pct): what a baseline is read back as."""
    streams = tuple(stream_pair(rank, main, side, pct) for rank, main, side, pct in pairs)
    return head_report(*(plan_result(name, rank, pct) for name, rank, pct in plans), pairs=streams)


def stream_pair(rank: int | None, main: int, side: int, pct: float) -> StreamPair:
    return StreamPair(rank=rank, main=main, side=side, overlap_ns=0.0, overlap_pct=pct,
                      verdict="real", provisional=False)  # fmt: skip


def plan_result(name: str, rank: int | None, pct: float | None) -> PlanResult:
    verdict = "no-evidence" if pct is None else "real"
    # the verdict follows hidden_pct, so the baseline compares it; overlap_pct set
    # otherwise to show it is not what is compared
    window = None if pct is None else 1.0 - pct
    return PlanResult(name=name, rank=rank, verdict=verdict, overlap_pct=window,
                      hidden_pct=pct, provisional=False, side_stream=3,
                      main_stream=2)  # fmt: skip


def head_report(*plans: PlanResult, pairs: tuple[StreamPair, ...] = ()) -> Report:
    return Report(tool_version="0.1.0", verdict="pass", exit_code=0, thresholds=Thresholds(),
                  runs=(), plans=plans, stream_pairs=pairs)  # fmt: skip


# --------------------------------------------------------------------------- compare_reports


def test_drop_beyond_tolerance_regresses_and_within_passes() -> None:
    base = doc([("moe", 0, 0.87), ("indexer", 0, 0.60)])
    head = doc([("moe", 0, 0.40), ("indexer", 0, 0.55)])
    moe, indexer = compare_reports(base, head, 0.1)
    assert moe == BaselineDelta("moe", 0, 0.87, 0.40, 0.40 - 0.87, "regressed")
    assert indexer == BaselineDelta("indexer", 0, 0.60, 0.55, 0.55 - 0.60, "ok")


def test_a_drop_of_exactly_the_tolerance_passes() -> None:
    # 0.3 - 0.4 is -0.10000000000000003 in floating point: still "exactly" 0.1
    (delta,) = compare_reports(doc([("moe", 0, 0.4)]), doc([("moe", 0, 0.3)]), 0.1)
    assert delta.status == "ok"
    (delta,) = compare_reports(doc([("moe", 0, 0.4)]), doc([("moe", 0, 0.299)]), 0.1)
    assert delta.status == "regressed"


def test_rise_beyond_tolerance_is_improved() -> None:
    (delta,) = compare_reports(doc([("moe", 0, 0.2)]), doc([("moe", 0, 0.9)]), 0.1)
    assert (delta.status, delta.delta) == ("improved", 0.9 - 0.2)


def test_lost_and_gained_figures() -> None:
    base = doc([("a", 0, 0.8), ("b", 0, None)])
    head = doc([("a", 0, None), ("b", 0, 0.5)])
    a, b = compare_reports(base, head, 0.1)
    assert (a.status, a.delta) == ("regressed", None)
    assert (b.status, b.delta) == ("improved", None)


def test_missing_on_either_side_and_per_rank() -> None:
    base = doc([("moe", 0, 0.9), ("moe", 1, 0.9), ("old", 0, 0.9)])
    head = doc([("moe", 0, 0.9), ("new", 0, 0.7)])
    deltas = compare_reports(base, head, 0.1)
    # head order first, then what only the baseline has
    assert [(d.plan, d.rank, d.status) for d in deltas] == [
        ("moe", 0, "ok"),
        ("new", 0, "missing-in-base"),
        ("moe", 1, "missing-in-head"),
        ("old", 0, "missing-in-head"),
    ]


def test_stream_pairs_are_compared_when_neither_side_has_plans() -> None:
    base = doc([], pairs=[(0, 2, 3, 0.8), (0, 2, 4, 0.5)])
    head = doc([], pairs=[(0, 2, 3, 0.6), (0, 2, 4, 0.45)])
    first, second = compare_reports(base, head, 0.1)
    assert (first.plan, first.rank, first.status) == ("stream 3 vs 2", 0, "regressed")
    assert first.delta == pytest.approx(0.6 - 0.8)
    assert (second.plan, second.status) == ("stream 4 vs 2", "ok")


def test_plans_win_over_stream_pairs() -> None:
    base = doc([("moe", 0, 0.9)], pairs=[(0, 2, 3, 0.9)])
    head = doc([("moe", 0, 0.9)], pairs=[(0, 2, 3, 0.0)])
    assert [d.plan for d in compare_reports(base, head, 0.1)] == ["moe"]


def test_bad_tolerance() -> None:
    with pytest.raises(UsageError):
        compare_reports(doc([]), doc([]), -0.1)


# --------------------------------------------------------------------------- apply_baseline


def test_apply_baseline_fails_the_gate_on_regression() -> None:
    report = head_report(plan_result("moe", 0, 0.40))
    judged = apply_baseline(report, doc([("moe", 0, 0.87)]), 0.1)
    assert (judged.verdict, judged.exit_code) == ("fail", 1)
    assert judged.baseline == (BaselineDelta("moe", 0, 0.87, 0.40, 0.40 - 0.87, "regressed"),)
    assert judged.baseline_tolerance == 0.1
    (reason,) = judged.gate_reasons
    assert reason.startswith("baseline: moe rank 0: hidden_pct 0.870 -> 0.400 (-0.470)")


def test_apply_baseline_within_tolerance_passes() -> None:
    report = head_report(plan_result("moe", 0, 0.80))
    judged = apply_baseline(report, doc([("moe", 0, 0.87)]), 0.1)
    assert (judged.verdict, judged.exit_code, judged.gate_reasons) == ("pass", 0, ())
    assert judged.baseline is not None and judged.baseline[0].status == "ok"


def test_apply_baseline_fails_on_a_plan_missing_from_the_report() -> None:
    report = head_report(plan_result("moe", 0, 0.9))
    judged = apply_baseline(report, doc([("moe", 0, 0.9), ("indexer", 0, 0.7)]), 0.1)
    assert judged.verdict == "fail"
    assert "indexer rank 0: in the baseline" in judged.gate_reasons[0]


def test_apply_baseline_accepts_a_new_plan() -> None:
    report = head_report(plan_result("moe", 0, 0.9), plan_result("indexer", 0, 0.7))
    judged = apply_baseline(report, doc([("moe", 0, 0.9)]), 0.1)
    assert judged.verdict == "pass"
    assert judged.baseline is not None
    assert [d.status for d in judged.baseline] == ["ok", "missing-in-base"]


def test_apply_baseline_on_stream_pairs() -> None:
    pair = StreamPair(rank=0, main=2, side=3, overlap_ns=0.0, overlap_pct=0.2, verdict="partial",
                      provisional=False)  # fmt: skip
    judged = apply_baseline(head_report(pairs=(pair,)), doc([], pairs=[(0, 2, 3, 0.9)]), 0.1)
    assert judged.verdict == "fail"
    assert judged.gate_reasons[0].startswith("baseline: stream 3 vs 2 rank 0:")


def test_apply_baseline_keeps_earlier_gate_reasons() -> None:
    report = head_report(plan_result("moe", 0, 0.0)).failing("plan moe, rank 0: fake")
    judged = apply_baseline(report, doc([("moe", 0, 0.9)]), 0.1)
    assert judged.gate_reasons[0] == "plan moe, rank 0: fake"
    assert len(judged.gate_reasons) == 2


# --------------------------------------------------------------------------- load_baseline


def write_json(folder: Path, name: str, report: Report) -> Path:
    """The report as `analyze --format json` writes it."""
    path = folder / name
    path.write_text(render(report), encoding="utf-8")
    return path


def test_load_baseline_reads_a_report(tmp_path: Path) -> None:
    report = doc([("moe", 0, 0.9)], pairs=[(0, 2, 3, 0.5)])
    assert load_baseline(write_json(tmp_path, "base.json", report)) == report


def spoilt(change: Callable[[dict[str, Any]], object]) -> str:
    """A valid report's JSON with one thing changed."""
    document = to_dict(doc([("a", 0, 0.5)], pairs=[(0, 2, 3, 0.5)]))
    change(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    ("content", "message", "key"),
    [
        (spoilt(lambda d: d.update(schema_version=2)), "schema_version 1", None),
        ("[1, 2]", "schema_version 1", None),
        (spoilt(lambda d: d.update(plans={})), "expected a list", "plans"),
        (spoilt(lambda d: d["plans"][0].update(overlap_pct=1.5)),
         "unexpected value 1.5", "plans[0].overlap_pct"),
        (spoilt(lambda d: d["plans"][0].pop("name")), "unexpected value None", "plans[0].name"),
        (spoilt(lambda d: d["stream_pairs"][0].update(main="2")),
         "unexpected value '2'", "stream_pairs[0].main"),
        (spoilt(lambda d: d.pop("runs")), "expected a list", "runs"),
        (spoilt(lambda d: d["plans"].append(d["plans"][0])), "'a' rank 0 appears twice",
         "plans[1]"),
    ],
)  # fmt: skip
def test_load_baseline_rejects_other_files(
    tmp_path: Path, content: str, message: str, key: str | None
) -> None:
    path = tmp_path / "base.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as caught:
        load_baseline(path)
    assert (caught.value.path, caught.value.key) == (str(path), key)


def test_load_baseline_bad_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    path.write_text('{\n  "schema_version": 1,\n  "plans": [,]\n}\n')
    with pytest.raises(InputError) as caught:
        load_baseline(path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)


def test_load_baseline_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_baseline(tmp_path / "nope.json")


# --------------------------------------------------------------------------- compare CLI


@pytest.fixture
def reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no config here
    for name in ("GITHUB_STEP_SUMMARY", "OVERLAP_CHECK_TOLERANCE"):
        monkeypatch.delenv(name, raising=False)
    write_json(tmp_path, "base.json", doc([("moe", 0, 0.87), ("indexer", 0, 0.6)]))
    write_json(tmp_path, "same.json", doc([("moe", 0, 0.82), ("indexer", 0, 0.6)]))
    write_json(tmp_path, "worse.json", doc([("moe", 0, 0.40), ("indexer", 0, 0.6)]))
    return tmp_path


def test_compare_passes_within_tolerance(reports: Path) -> None:
    result = CliRunner().invoke(cli, ["compare", "base.json", "same.json"])
    assert result.exit_code == 0, result.output
    assert "moe rank 0: hidden_pct 0.870 -> 0.820 (-0.050)" in result.output
    assert result.output.splitlines()[-1] == "result: pass (0 failing of 2)"


def test_compare_fails_on_regression(reports: Path) -> None:
    result = CliRunner().invoke(cli, ["compare", "base.json", "worse.json"])
    assert result.exit_code == 1
    assert "[REGRESSED]" in result.output
    # a wider tolerance lets the same drop (0.47) through
    assert (
        CliRunner()
        .invoke(cli, ["compare", "base.json", "worse.json", "--tolerance", "0.5"])
        .exit_code
        == 0
    )


def test_compare_json_and_markdown(reports: Path) -> None:
    result = CliRunner().invoke(cli, ["compare", "base.json", "worse.json", "--format", "json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert (document["verdict"], document["exit_code"], document["tolerance"]) == ("fail", 1, 0.1)
    assert document["deltas"][0] == {
        "plan": "moe",
        "rank": 0,
        "base": 0.87,
        "head": 0.40,
        "delta": 0.40 - 0.87,
        "status": "regressed",
        "figure": "hidden_pct",
    }
    result = CliRunner().invoke(cli, ["compare", "base.json", "worse.json", "--format", "markdown"])
    assert "| moe | 0 | 0.870 | 0.400 | -0.470 | ❌ regressed |" in result.stdout


def test_compare_tolerance_from_environment_and_config(
    reports: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # drop of moe: 0.87 - 0.82 = 0.05
    (reports / "overlap-check.toml").write_text("[gate]\ntolerance = 0.01\n")
    assert CliRunner().invoke(cli, ["compare", "base.json", "same.json"]).exit_code == 1
    monkeypatch.setenv("OVERLAP_CHECK_TOLERANCE", "0.06")
    assert CliRunner().invoke(cli, ["compare", "base.json", "same.json"]).exit_code == 0
    args = ["compare", "base.json", "same.json", "--tolerance", "0.04"]
    assert CliRunner().invoke(cli, args).exit_code == 1


def test_compare_reads_the_tolerance_from_pyproject(reports: Path) -> None:
    # found from the working directory; drop of moe: 0.87 - 0.82 = 0.05 > 0.01
    (reports / "pyproject.toml").write_text("[tool.overlap-check.gate]\ntolerance = 0.01\n")
    result = CliRunner().invoke(cli, ["compare", "base.json", "same.json"])
    assert result.exit_code == 1
    assert "(tolerance 0.010)" in result.output


def test_compare_writes_the_step_summary(reports: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = reports / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert CliRunner().invoke(cli, ["compare", "base.json", "worse.json"]).exit_code == 1
    assert summary.read_text().startswith("## overlap-check compare: ❌ fail")


def test_compare_bad_input_exits_2(reports: Path) -> None:
    (reports / "other.json").write_text('{"hello": 1}')
    result = CliRunner().invoke(cli, ["compare", "base.json", "other.json"])
    assert result.exit_code == 2
    assert "other.json: not an overlap-check JSON report" in result.output
    assert CliRunner().invoke(cli, ["compare", "base.json", "nope.json"]).exit_code == 2
