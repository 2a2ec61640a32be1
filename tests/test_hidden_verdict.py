"""The plan verdict follows hidden_pct (docs/hidden-fraction.md), through the public path:
issue 14's layouts (fixtures/, synth.hiding_layouts) checked with overlap_check.check and
the CLI, their answers written from the construction."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check import check
from overlap_check.cli import cli
from overlap_check.model import Options, Plan
from synth.hiding_layouts import Answer, layout
from synth.layers import DOMINATOR as DOMINATOR_OP
from synth.layers import MAIN, SIDE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DOMINATOR = "GroupedMatmul"
# Layouts whose side ops start before their own dominator's end. Side work after the
# dominator (split side work, late producer, lagging side stream) is tested through the
# same path in test_layer_verdicts.py. The eager kernel names are judged on the part that
# moved to stream 3.
PAIRED = ["under-another-op", "prolog-chain", "median-hides-fake", "real-kernel-names"]


def answer_of(folder: str) -> Answer:
    answer = layout(folder).answer
    assert isinstance(answer, Answer)
    return answer


def plan_of(answer: Answer) -> Plan:
    return Plan("p", side=answer.side, dominator=DOMINATOR, side_stream=SIDE, main_stream=MAIN)


@pytest.mark.parametrize("folder", PAIRED)
def test_verdict_and_hidden_pct_follow_the_construction(folder: str) -> None:
    answer = answer_of(folder)
    (plan,) = check([FIXTURES / folder], Options(plans=(plan_of(answer),)), workers=1).plans
    judged = [layer for layer in answer.layers if layer.side_ops]
    # one capture, one warm run: the plan's hidden_pct is the median over its layers
    want = statistics.median(layer.hidden_ns / layer.side_busy_ns for layer in judged)
    assert plan.hidden_pct == pytest.approx(want, abs=1e-12)
    assert (plan.verdict, plan.decided_by) == (answer.verdict, "hidden_pct")
    # overlap_pct stays the recipes' window figure
    window = statistics.median(layer.overlap_pct or 0.0 for layer in judged)
    assert plan.overlap_pct == pytest.approx(window, abs=1e-12)
    counts = [0, 0, 0]
    for layer in judged:
        counts[("real", "partial", "fake").index(layer.verdict)] += 1
    assert plan.verdict_counts == tuple(counts)


def test_under_another_op_figures_and_note() -> None:
    # Layout 2: side ops [55, 130] + [132, 230] µs (busy 75 + 98 = 173) all under the
    # attention kernel [40, 240]; the dominator D [240, 540] follows: the window overlap is 0
    # (fake), hidden_pct 173 / 173 = 1.0 (real), none of it under D itself.
    answer = answer_of("under-another-op")
    (plan,) = check([FIXTURES / "under-another-op"], Options(plans=(plan_of(answer),))).plans
    assert (plan.overlap_pct, plan.hidden_pct, plan.verdict) == (0.0, 1.0, "real")
    deciding = plan.deciding_occurrence()
    assert deciding is not None
    occ = deciding[1]
    assert (occ.side_busy_ns, occ.hidden_ns, occ.layer, occ.dominator_pct) == (
        173_000,
        173_000,
        1,
        0.0,
    )
    assert (
        "overlap_pct 0.000 says fake but hidden_pct 1.000 says real: 173 of 173 µs of side "
        "work ran under the main path, none of it under the named dominator"
    ) in plan.diagnosis


def test_median_hides_fake_layers_is_capped_at_partial() -> None:
    # six layers, three fake (hidden 0) and three real (hidden 1): median (0 + 1) / 2 = 0.5
    # is real, but 3 of 6 fake is more than a quarter: at best partial
    answer = answer_of("median-hides-fake")
    (plan,) = check([FIXTURES / "median-hides-fake"], Options(plans=(plan_of(answer),))).plans
    assert (plan.hidden_pct, plan.verdict_counts, plan.verdict) == (0.5, (3, 0, 3), "partial")
    # what decided is named: the cap with its counts, not "between 0.05 and 0.5"
    assert plan.diagnosed is not None
    assert (plan.diagnosed.decided_by, plan.diagnosed.band) == ("fake-share", "real")
    assert "capped by its fake layers: hidden_pct 0.500 is real on its own, but 3 of 6" in (
        plan.diagnosis
    )
    assert "between" not in plan.diagnosis and "needs redesign" not in plan.diagnosis
    assert not any("more to hide under" in step for step in plan.diagnosed.fix)
    share = Options(plans=(plan_of(answer),), fake_share=0.5)  # 3 > 0.5 * 6 is false
    (plan,) = check([FIXTURES / "median-hides-fake"], share).plans
    assert plan.verdict == "real"


def test_cli_prints_and_writes_the_deciding_figures(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = [
        "analyze",
        str(FIXTURES / "under-another-op"),
        "--side",
        "SharedExpert",
        "--dominator",
        DOMINATOR,
        "--output",
        str(out),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output  # real passes
    # the side window [55, 230] µs and D [240, 540] µs from the first compute kernel (RmsNorm
    # at 0); window 0.0, hidden 173 / 173
    assert (
        "side window [55.000, 230.000] µs, dominator window [240.000, 540.000] µs "
        f"({DOMINATOR_OP.name}), hidden_pct 1.000 (real on its own; plan verdict real), "
        "overlap_pct 0.000"
    ) in result.output
    (plan,) = json.loads(out.read_text())["plans"]
    assert (plan["decided_by"], plan["verdict_counts"]) == (
        "hidden_pct",
        {"real": 1, "partial": 0, "fake": 0},
    )
    assert (plan["hidden_pct"], plan["overlap_pct"]) == (1.0, 0.0)


def test_eager_names_on_both_streams_through_the_cli(tmp_path: Path) -> None:
    # Layout 7, per layer (2 layers): MatMulV3 [0, 40] and SwiGlu [41, 61] µs on the main
    # stream 2, D [80, 380], two MatMulV3 [100, 180] + [182, 242] on stream 3 (140 µs, all
    # under D: hidden 140 / 140). No SwiGlu ran on stream 3: not-split, with the part that
    # moved still measured. Each layer's stream 3 ran its two MatMulV3: nothing shows that
    # the main stream's MatMulV3 [0, 40] is side work, so it is not named (issue 23).
    out = tmp_path / "r.json"
    base = ["analyze", str(FIXTURES / "real-kernel-names"), "--dominator", DOMINATOR]
    args = [*base, "--side", "MatMulV3|SwiGlu", "--side-stream", "3", "--output", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output  # not-split fails the gate
    (plan,) = json.loads(out.read_text())["plans"]
    assert plan["verdict"] == "not-split"
    assert plan["stayed"] == plan["placement"] == ["SwiGlu x2 on stream 2"]
    assert plan["hidden_pct"] == 140_000 / 140_000
    assert "the figures are of the 4 side ops that moved" in plan["diagnosis"]
    # --op-type keeps the matmuls only: every one named moved, judged real, none named
    matmul = [*base, "--side", "aclnn", "--op-type", "^MatMulV3$", "--side-stream", "3"]
    result = CliRunner().invoke(cli, [*matmul, "--output", str(out)])
    assert result.exit_code == 0, result.output
    (plan,) = json.loads(out.read_text())["plans"]
    assert (plan["verdict"], plan["op_type"], plan["stayed"]) == (
        "real",
        "^MatMulV3$",
        [],
    )
    assert "stayed off the side stream" not in result.output
