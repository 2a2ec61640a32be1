"""A missing wait is a data race: it fails the gate by default and shows in every format
(issue 23.11); --allow-missing-wait / [gate] allow_missing_wait accepts it knowingly."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.cli.config import Config, load_config, merge_options
from overlap_check.judge.pipeline import check
from overlap_check.model import Options, Plan, Report
from overlap_check.report import github, junit, markdown, text
from overlap_check.report import json as json_report

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PLAN = Plan("moe", side="SharedExpert", dominator="GroupedMatmul")
# fixtures/lagging-side-stream (synth.hiding_layouts): layer 1 has no side work, each
# layer's side work runs under the next dominator, and layer 3's after its join Add
# [1162, 1170] µs had started (side end 1344 µs): both signs of a missing wait; hidden
# 162 + 162 of 162 + 324 µs per layer: layers 1.0 and 0.5, median 0.75, real
LAG = "side stream a layer behind in 1 of 1 warm runs"
JOIN = "join did not wait: in 1 of 3 warm layers"


def formats(report: Report) -> dict[str, str]:
    return {
        "text": text.render(report),
        "json": json_report.render(report),
        "markdown": markdown.render(report),
        "junit": junit.render(report),
        "github": github.render(report),
    }


def test_a_missing_wait_fails_a_real_plan_and_every_format_says_so() -> None:
    report = check([FIXTURES / "lagging-side-stream"], Options(plans=(PLAN,)), workers=1)
    (plan,) = report.plans
    assert (plan.verdict, plan.hidden_pct) == ("real", 0.75)
    assert (report.verdict, report.exit_code) == ("fail", 1)
    assert [r.split(": ", 2)[1] for r in report.gate_reasons] == [
        "missing wait, a data race (--allow-missing-wait accepts it)"
    ] * 2
    for name, out in formats(report).items():
        assert LAG in out and JOIN in out, name
    assert github.render(report).startswith("::error ")


def test_allowed_knowingly_it_passes_and_is_still_reported() -> None:
    options = Options(plans=(PLAN,), allow_missing_wait=True)
    report = check([FIXTURES / "lagging-side-stream"], options, workers=1)
    assert (report.verdict, report.exit_code, report.gate_reasons) == ("pass", 0, ())
    for name, out in formats(report).items():
        assert LAG in out and JOIN in out, name
    assert github.render(report).startswith("::warning ")  # worth a look, not a pass notice
    assert json.loads(json_report.render(report))["allow_missing_wait"] is True


def test_the_flag_and_the_config_key(tmp_path: Path) -> None:
    config = tmp_path / "overlap-check.toml"
    config.write_text("[gate]\nallow_missing_wait = true\n", encoding="utf-8")
    assert merge_options(load_config(str(config), tmp_path), {}, {}).allow_missing_wait
    assert not merge_options(Config(), {}, {}).allow_missing_wait
    args = ["analyze", str(FIXTURES / "lagging-side-stream"), "--side", "SharedExpert"]
    args += ["--dominator", "GroupedMatmul", "-q"]
    assert CliRunner().invoke(cli, args).exit_code == 1
    assert CliRunner().invoke(cli, [*args, "--allow-missing-wait"]).exit_code == 0
    assert CliRunner().invoke(cli, [*args, "--config", str(config)]).exit_code == 0
