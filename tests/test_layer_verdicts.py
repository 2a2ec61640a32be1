"""Layer-true occurrences and barriers both ways through the public path (overlap_check.check
and the CLI) on issue 14's layouts whose side work runs after the dominator: split side work,
a late producer, a side stream a layer behind (fixtures/, synth.hiding_layouts). Every figure
is the construction's ns arithmetic, written out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check import check
from overlap_check.cli import cli
from overlap_check.model import Occurrence, Options, Plan, PlanResult
from overlap_check.model.verdicts import BARRIER_HINT, PRODUCER_HINT
from synth.construction import BASE_NS
from synth.hiding_layouts import Answer, LayerAnswer, layout
from synth.layers import MAIN, SIDE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DOMINATOR = "GroupedMatmul"


def answer_of(folder: str) -> Answer:
    answer = layout(folder).answer
    assert isinstance(answer, Answer)
    return answer


def result_of(folder: str) -> PlanResult:
    plan = Plan("p", side="SharedExpert", dominator=DOMINATOR, side_stream=SIDE, main_stream=MAIN)
    (result,) = check([FIXTURES / folder], Options(plans=(plan,)), workers=1).plans
    return result


def absolute(window: tuple[int, int] | None) -> tuple[int | None, int | None]:
    return (None, None) if window is None else (BASE_NS + window[0], BASE_NS + window[1])


def assert_layer(got: Occurrence, want: LayerAnswer) -> None:
    """One row of the layer table against the layout's answer (written from the construction)."""
    assert got.side_ops == want.side_ops
    assert (got.side_start_ns, got.side_end_ns) == absolute(want.side_window)
    assert (got.dom_start_ns, got.dom_end_ns) == absolute(want.dom_window)
    assert (got.side_busy_ns, got.hidden_ns) == (want.side_busy_ns, want.hidden_ns)
    assert got.hidden_pct == want.hidden_pct
    assert got.overlap_pct == want.overlap_pct
    assert got.verdict == (want.verdict if want.side_ops else "no-evidence")
    assert got.join_not_waited == want.join_not_waited


@pytest.mark.parametrize("folder", ["split-side-work", "late-producer", "lagging-side-stream"])
def test_the_layer_table_is_the_constructions(folder: str) -> None:
    answer = answer_of(folder)
    plan = result_of(folder)
    (run,) = plan.per_run
    assert [o.layer for o in run.layers] == list(range(1, len(answer.layers) + 1))
    for got, want in zip(run.layers, answer.layers, strict=True):
        assert_layer(got, want)
    assert run.lag == answer.lag
    assert run.join_not_waited == sum(layer.join_not_waited for layer in answer.layers)
    assert plan.verdict == answer.verdict


def test_split_side_work_is_fake_though_its_window_spans_the_dominator() -> None:
    # D [60, 360] µs; side ops [60, 62] (under D) and [360, 560] (after it, nothing else ran)
    plan = result_of("split-side-work")
    assert plan.hidden_pct == 2_000 / (2_000 + 200_000)  # 0.0099 <= 0.05: fake
    # window [60, 560] (500 µs) holds D (300 µs): overlap 300 / min(500, 300)
    assert plan.overlap_pct == 300_000 / min(500_000, 300_000)
    assert (plan.verdict, plan.verdict_counts) == ("fake", (0, 0, 1))
    # neither way a barrier: the side work does not end before D starts, and it starts
    # 60 - 40 = 20 µs after RmsNorm ended (more than "right after", 10 µs)
    assert plan.barrier_candidates == ()
    assert "the side window spans the dominator, but only 2 of 202 µs" in plan.diagnosis
    assert plan.findings == ()


def test_late_producer_names_the_producer_not_the_join() -> None:
    # D [60, 360], Cast [360, 364.2] (after D), side [366, 530] while the main stream idles,
    # then the join Add [532, 540.11]
    plan = result_of("late-producer")
    assert plan.hidden_pct == 0 / (80_000 + 20_000 + 60_000)
    assert plan.overlap_pct == 0.0  # the window starts after D ended
    assert plan.verdict == "fake"
    (barrier,) = plan.barrier_candidates
    assert (barrier.waited, barrier.chain, barrier.stream_id) == ("side", "Cast", MAIN)
    assert barrier.name == "aclnnCast_CastAiCore_Cast"
    assert barrier.start_ns == BASE_NS + 360_000
    assert barrier.lag_ns == 366_000 - 364_200  # the side window starts 1.8 µs after Cast
    assert "Add" not in barrier.name
    assert "the side stream waited for aclnnCast_CastAiCore_Cast (Cast)" in plan.diagnosis
    assert PRODUCER_HINT in plan.diagnosis and BARRIER_HINT not in plan.diagnosis


def test_lagging_side_stream_is_flagged() -> None:
    # layer 1: D1 [60, 360] without side work; layer 2: 80 + 82 µs all under D2; layer 3:
    # 162 µs under D3 and 162 µs after it (after the join Add [1162, 1170] started)
    plan = result_of("lagging-side-stream")
    assert plan.hidden_pct == (162_000 / 162_000 + 162_000 / 324_000) / 2
    assert (plan.verdict, plan.verdict_counts) == ("real", (2, 0, 0))
    join, lag = plan.findings
    assert join.startswith("join did not wait: in 1 of 3 warm layers")
    assert "(first: run 1, layer 3)" in join
    assert lag.startswith("side stream a layer behind in 1 of 1 warm runs")


def test_median_hides_fake_names_the_chain_the_main_stream_waited_for() -> None:
    # each fake layer: side [60, 224], the main stream idle, Cast [225.5, 229.7],
    # Swish [229.8, 236.22], then D [238, 538]
    (barrier,) = result_of("median-hides-fake").barrier_candidates
    assert (barrier.waited, barrier.chain, barrier.occurrences) == ("main", "Cast -> Swish", 3)
    assert barrier.after_side_end_ns == 225_500 - 224_000
    assert barrier.gap_ns == 225_500 - 40_000  # idle since RmsNorm [0, 40] ended


def test_cli_text_and_json_carry_the_layers(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["analyze", str(FIXTURES / "lagging-side-stream"), "--side", "SharedExpert"]
    args += ["--dominator", DOMINATOR, "--output", str(out)]
    result = CliRunner().invoke(cli, args)
    # real, but a missing wait (a data race) fails the gate by default (issue 23.11)
    assert result.exit_code == 1, result.output
    assert "missing wait, a data race (--allow-missing-wait accepts it): join did not" in (
        result.output
    )
    allowed = CliRunner().invoke(cli, [*args, "--allow-missing-wait"])
    assert allowed.exit_code == 0, allowed.output  # accepted knowingly: real passes
    assert "finding: side stream a layer behind" in allowed.output  # still reported
    # times from the first compute kernel (RmsNorm at 0); layers 2 and 3 shown, layer 1 has
    # no side work: 2 of 3
    assert "layers (run 1, 2 of 3 shown; every layer in JSON):" in result.output
    # hidden_pct first, with its band; the window figure after it
    row = "3      [900.000, 1344.000] µs  [860.000, 1160.000] µs  0.500       real     0.867"
    assert row in result.output
    assert "0.867        did not wait" in result.output
    assert "finding: side stream a layer behind" in result.output
    (plan,) = json.loads(out.read_text())["plans"]
    (run,) = plan["per_run"]
    assert (run["lag"], run["join_not_waited"]) == (True, 1)
    assert [o["verdict"] for o in run["layers"]] == ["no-evidence", "real", "real"]
    assert [o["join_not_waited"] for o in run["layers"]] == [False, False, True]
    # the third layer's window [900, 1344] µs against D3 [860, 1160]: 260 / min(444, 300)
    assert (run["layers"][2]["side_start_us"], run["layers"][2]["side_end_us"]) == (900.0, 1344.0)
    assert run["layers"][2]["overlap_pct"] == 260 / 300
    assert len(plan["findings"]) == 2


def test_cli_json_names_the_late_producer(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["analyze", str(FIXTURES / "late-producer"), "--side", "SharedExpert"]
    args += ["--dominator", DOMINATOR, "--output", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output  # fake fails the gate
    assert "barrier Cast (the side stream waited for it)" in result.output
    (plan,) = json.loads(out.read_text())["plans"]
    (barrier,) = plan["barrier_candidates"]
    assert (barrier["waited"], barrier["chain"], barrier["lag_us"]) == ("side", "Cast", 1.8)
