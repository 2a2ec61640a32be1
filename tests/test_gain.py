"""Issue 16: --reference (layer and step wall before/after), holes after the join, the
evidence summary and their gates, through click on the generated fixtures.

Every figure below follows from the construction (synth.gain_scenarios, synth.layers):
side ops GateUp 80 µs, SwiGlu 20 µs, Down 60 µs with 2 µs gaps (a 164 µs window), the
GroupedMatmul dominator 300 µs (480 µs when stretched).
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import jsonschema  # the dev extra
import pytest
from click.testing import CliRunner, Result

from overlap_check.cli import cli
from overlap_check.model import Report
from overlap_check.report import escape
from overlap_check.report.json import render
from synth import gain_scenarios

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MULTI = FIXTURES / "slower-multi-stream"
SINGLE = FIXTURES / "slower-single-stream"
JOIN = FIXTURES / "join-wait"
PLAN_ARGS = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]
WARM = slice(2, None)  # the first 2 of 5 runs are cold

SIDE_WINDOW_US = 80 + 2 + 20 + 2 + 60  # 164
SIDE_TOTAL_US = 80 + 20 + 60  # 160
# Each layer of the multi-stream capture ends 480 - (164 + 2 + 300) = 14 µs later than
# the reference's: the dominator stretched by 180 µs to hide the side ops that ran 164 +
# 2 µs serially before it. The layer wall runs from one dominator's start to the next's.
LAYER_DELTA_US = 480 - (SIDE_WINDOW_US + 2 + 300)  # 14
# the side ops of join-wait: 180 + 2 + 40 + 2 + 140.54; they start 2 µs into the dominator
JOIN_SIDE_END_AFTER_DOM_US = 2 + (180 + 2 + 40 + 2 + 140.54) - 300  # 66.54
JOIN_WAIT_US = JOIN_SIDE_END_AFTER_DOM_US + 0.42 + 2.04  # the join, then the next main op: 69


def analyze(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["analyze", *map(str, args), "-q"])


def _step_wall_us(built_runs: list[tuple[int, int]]) -> float:
    """Warm median of first start to last end per run (one step per run)."""
    walls = [(end - start) / 1000 for start, end in built_runs[WARM]]
    return float(statistics.median(walls))


def _layer_wall_us(scenarios: object) -> float:
    """Warm median of the layer wall, the first dominator's start to the second's (2 layers
    a run, the last layer has no next one), from the generator's kernels."""
    walls = []
    for s in scenarios:  # type: ignore[attr-defined]
        starts = sorted(k.start_ns for k in s.kernels if "GroupedMatmul" in k.name)
        walls.append((starts[1] - starts[0]) / 1000)
    return float(statistics.median(walls[WARM]))


BEFORE_US = _layer_wall_us(gain_scenarios.slower_single_stream(layers=2).scenarios)
AFTER_US = _layer_wall_us(gain_scenarios.slower_multi_stream(layers=2).scenarios)


def _spans(scenarios: object) -> list[tuple[int, int]]:
    return [
        (min(k.start_ns for k in s.kernels), max(k.end_ns for k in s.kernels))
        for s in scenarios  # type: ignore[attr-defined]
    ]


@pytest.fixture(scope="module")
def compared() -> dict[str, object]:
    result = analyze(MULTI, "--reference", SINGLE, *PLAN_ARGS, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_reference_layer_and_dominator_before_after(compared: dict[str, object]) -> None:
    ref = compared["reference"]
    assert isinstance(ref, dict)
    (delta,) = ref["plans"]
    assert delta["layers"] == 2
    # same seed: the ops around the plan are alike, so the walls differ by 14 µs
    walls = (BEFORE_US, AFTER_US)
    assert walls[1] - walls[0] == pytest.approx(LAYER_DELTA_US)
    assert delta["before"]["layer_wall_us"] == pytest.approx(BEFORE_US)
    assert delta["after"]["layer_wall_us"] == pytest.approx(AFTER_US)
    assert delta["layer_wall_delta_pct"] == pytest.approx(LAYER_DELTA_US / BEFORE_US * 100)
    assert (delta["before"]["dominator_us"], delta["after"]["dominator_us"]) == (300, 480)
    assert delta["before"]["side_total_us"] == delta["after"]["side_total_us"] == SIDE_TOTAL_US
    assert "2 layer(s) per sample in 1 step(s), matched by order" in ref["matched"]


def test_reference_step_wall_is_slower(compared: dict[str, object]) -> None:
    before = _step_wall_us(_spans(gain_scenarios.slower_single_stream(layers=2).scenarios))
    after = _step_wall_us(_spans(gain_scenarios.slower_multi_stream(layers=2).scenarios))
    # same seed: the ops around the plan are alike, each of the 2 layers ends 14 µs later
    assert after - before == pytest.approx(2 * (480 - 466))
    ref = compared["reference"]
    assert isinstance(ref, dict)
    (delta,) = ref["plans"]
    assert delta["before"]["step_wall_us"] == pytest.approx(before)
    assert delta["after"]["step_wall_us"] == pytest.approx(after)
    assert delta["step_wall_delta_pct"] == pytest.approx((after - before) / before * 100)
    assert delta["step_wall_delta_pct"] > 0  # positive = slower: the gain is negative


def test_summary_first_with_wall_delta() -> None:
    result = analyze(MULTI, "--reference", SINGLE, *PLAN_ARGS)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    first = lines.index("Evidence:")
    assert first < next(i for i, line in enumerate(lines) if line.startswith("Plans"))
    summary = lines[first + 1]
    assert "real (hidden_pct 1.000), overlap_pct 1.000" in summary
    wall = f"layer wall {BEFORE_US:.3f} -> {AFTER_US:.3f} µs ({14 / BEFORE_US * 100:+.2f}%)"
    assert wall in summary
    assert "dominator stretched 300.000 -> 480.000 µs (+60.0%)" in summary  # 180 / 300
    assert "Reference" in result.stdout


STRETCH_US = 480 - 300  # the dominator with side work against the reference's: 180
STRETCH_CAUSE = (
    f"dominator stretched 300.000 -> 480.000 µs ({STRETCH_US / 300 * 100:+.1f}%) "  # +60.0%
    f"against the reference: {STRETCH_US:.3f} µs longer per layer (median)"
)


def test_stretched_dominator_is_a_cause_of_the_diagnosis() -> None:
    result = analyze(MULTI, "--reference", SINGLE, *PLAN_ARGS)
    assert result.exit_code == 0, result.output
    causes = [line.strip() for line in result.stdout.splitlines() if "    cause " in line]
    # largest first: contention (960 µs over the warm runs) before the stretch (180 µs),
    # the saturated cube (no time of its own) last
    assert causes[0].startswith("cause 1: block demand over the device's cores for 960.000")
    assert causes[1] == f"cause 2: {STRETCH_CAUSE}"
    assert causes[2].startswith("cause 3: cube saturated")
    markdown = analyze(MULTI, "--reference", SINGLE, *PLAN_ARGS, "--format", "markdown")
    assert f"  - cause 2: {escape.markdown(STRETCH_CAUSE)}" in markdown.stdout


def test_stretched_dominator_in_the_json_diagnosis(compared: dict[str, object]) -> None:
    (plan,) = compared["plans"]  # type: ignore[misc]
    evidence = plan["diagnosed"]["evidence"]
    kinds = [e["kind"] for e in evidence]
    assert kinds.index("contention") < kinds.index("dominator-stretched")
    (stretch,) = [e for e in evidence if e["kind"] == "dominator-stretched"]
    assert (stretch["text"], stretch["size_us"]) == (STRETCH_CAUSE, STRETCH_US)


def test_no_stretch_without_a_reference() -> None:
    result = analyze(MULTI, *PLAN_ARGS)
    assert result.exit_code == 0, result.output
    assert "dominator stretched" not in result.stdout


def test_side_tail_is_a_cause_of_the_diagnosis() -> None:
    # the side ops end 66.54 µs after the dominator, and no main op runs until the join
    tail_cause = (
        f"side tail {JOIN_SIDE_END_AFTER_DOM_US:.3f} µs per layer (median) after the "
        "dominator's end, not covered by main-stream work: side ops that ran alone"
    )
    result = analyze(JOIN, *PLAN_ARGS)
    assert result.exit_code == 0, result.output
    causes = [line.strip() for line in result.stdout.splitlines() if "    cause " in line]
    # the layer wall: the first dominator's start to the second's
    wall_us = _layer_wall_us(gain_scenarios.join_wait(layers=2).scenarios)
    wait_cause = (
        f"join wait: the main stream waited {JOIN_WAIT_US:.3f} µs per layer (median; worst "
        f"{JOIN_WAIT_US:.3f} µs, layer 1 of run 3) for the side tail after the dominator, "
        f"{JOIN_WAIT_US / wall_us * 100:.1f}% of the {wall_us:.3f} µs layer wall"
    )
    # contention (1764 µs over the warm runs), the join wait (69 µs) before the tail
    # (66.54 µs), the saturated cube (not a time) last
    assert causes[0].startswith("cause 1: block demand over the device's cores for 1764.000")
    assert causes[1:] == [f"cause 2: {wait_cause}", f"cause 3: {tail_cause}", causes[3]]
    assert causes[3].startswith("cause 4: cube saturated")
    data = json.loads(analyze(JOIN, *PLAN_ARGS, "--format", "json").stdout)
    (tail,) = [e for e in data["plans"][0]["diagnosed"]["evidence"] if e["kind"] == "side-tail"]
    assert (tail["text"], tail["size_us"]) == (tail_cause, pytest.approx(66.54))
    multi = analyze(MULTI, *PLAN_ARGS).stdout  # the side work lies inside the dominator
    assert not [line for line in multi.splitlines() if "cause" in line and "side tail" in line]


def test_require_gain_fails_a_slower_step() -> None:
    result = analyze(MULTI, "--reference", SINGLE, *PLAN_ARGS, "--require-gain", "0")
    assert result.exit_code == 1
    assert "not at least 0% faster (--require-gain)" in result.stdout


def test_require_gain_passes_a_faster_step() -> None:
    # the other way round: the single-stream capture is 2 x 14 = 28 µs per step faster than
    # the multi-stream one (its plan is not-split, so --fail-on never leaves the gain gate)
    before = _step_wall_us(_spans(gain_scenarios.slower_multi_stream(layers=2).scenarios))
    gain = 28 / before * 100  # 2.34%
    args = [SINGLE, "--reference", MULTI, *PLAN_ARGS, "--fail-on", "never", "--require-gain"]
    assert analyze(*args, f"{gain - 0.1:.2f}").exit_code == 0
    slower = analyze(*args, f"{gain + 0.1:.2f}")
    assert slower.exit_code == 1
    assert f"step wall {-gain:+.2f}% against the reference" in slower.stdout


def test_join_wait_reported_and_gated() -> None:
    assert round(JOIN_WAIT_US, 3) == 69
    result = analyze(JOIN, *PLAN_ARGS, "--format", "json")
    assert result.exit_code == 0, result.output  # real overlap: it passes without the gate
    plan = json.loads(result.stdout)["plans"][0]
    assert plan["verdict"] == "real"
    walls = plan["walls"]
    assert walls["join_wait_us"] == pytest.approx(JOIN_WAIT_US)
    assert walls["join_wait_worst_us"] == pytest.approx(JOIN_WAIT_US)
    assert walls["join_wait_worst_layer"] == 1  # every layer waits alike: the first is named
    assert walls["side_tail_us"] == pytest.approx(JOIN_SIDE_END_AFTER_DOM_US)
    failed = analyze(JOIN, *PLAN_ARGS, "--max-join-wait-us", "20")
    assert failed.exit_code == 1
    assert "join wait 69.000 µs per layer (median) above 20 µs" in failed.stdout
    assert "the main stream waited 69.000 µs per layer for the side tail" in failed.stdout
    assert analyze(JOIN, *PLAN_ARGS, "--max-join-wait-us", "70").exit_code == 0


def test_new_join_wait_against_a_reference() -> None:
    # the reference's side ops run before the dominator on one stream: no join wait there
    result = analyze(
        JOIN, "--reference", SINGLE, *PLAN_ARGS, "--max-join-wait-us", "20", "--format", "json"
    )
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    (delta,) = data["reference"]["plans"]
    assert delta["new_join_wait_us"] == pytest.approx(JOIN_WAIT_US - 0)
    assert any("new join wait against the reference" in r for r in data["gate_reasons"])


def test_structures_that_differ_are_refused() -> None:
    two_ranks = FIXTURES / "two-rank-job"
    result = analyze(MULTI, "--reference", two_ranks, *PLAN_ARGS)
    assert result.exit_code == 2
    assert str(MULTI) in result.output and str(two_ranks) in result.output
    assert "rank 1 is only in the reference" in result.output
    assert "Traceback" not in result.output


def test_reference_from_config_is_relative_to_it(tmp_path: Path) -> None:
    shutil.copytree(SINGLE, tmp_path / "single")
    config = tmp_path / "overlap-check.toml"
    config.write_text(
        '[gate]\nreference = "single"\nrequire_gain = 0\n\n'
        '[[plan]]\nname = "moe"\nside = "SharedExpert"\ndominator = "GroupedMatmul"\n'
    )
    result = analyze(MULTI, "--config", config, "--format", "json")
    assert result.exit_code == 1  # slower: not at least 0% faster
    data = json.loads(result.stdout)
    assert data["reference"]["path"] == str(tmp_path / "single")
    assert data["reference"]["plans"][0]["layers"] == 2


def test_bad_gate_value_in_config(tmp_path: Path) -> None:
    config = tmp_path / "overlap-check.toml"
    config.write_text("[gate]\nmax_join_wait_us = -1\n")
    result = analyze(JOIN, "--config", config, *PLAN_ARGS)
    assert result.exit_code == 2
    assert "gate.max_join_wait_us" in result.output


def test_reference_report_matches_the_schema_and_reads_back(compared: dict[str, object]) -> None:
    schema = json.loads((FIXTURES.parent / "docs" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(compared)
    text = json.dumps(compared, indent=2, ensure_ascii=False) + "\n"
    assert render(Report.from_json(compared, "report.json")) == text
    assert compared["evidence_summary"] and isinstance(compared["evidence_summary"], list)


STEP_ID = 50  # synth.construction.build_run: every kernel of a run is in profiler step 50


def _step_walls_us(built_runs: list[tuple[int, int]]) -> list[float]:
    """Each warm run's one step: first start to last end, in µs."""
    return [(end - start) / 1000 for start, end in built_runs[WARM]]


def test_reference_step_by_step(compared: dict[str, object]) -> None:
    before = _step_walls_us(_spans(gain_scenarios.slower_single_stream(layers=2).scenarios))
    after = _step_walls_us(_spans(gain_scenarios.slower_multi_stream(layers=2).scenarios))
    assert len(before) == len(after) == 5 - 2  # warm runs 3, 4, 5: one step each
    ref = compared["reference"]
    assert isinstance(ref, dict)
    (delta,) = ref["plans"]
    assert (delta["warm_steps_after"], delta["warm_steps_before"]) == (3, 3)
    assert "3 warm step(s) vs 3 in the reference (3 matched by order)" in ref["matched"]
    pcts = [(a - b) / b * 100 for b, a in zip(before, after, strict=True)]
    expected = [
        {
            "before": {"run": run, "step": STEP_ID, "wall_us": pytest.approx(b)},
            "after": {"run": run, "step": STEP_ID, "wall_us": pytest.approx(a)},
            "delta_pct": pytest.approx(pct),
        }
        for run, b, a, pct in zip((3, 4, 5), before, after, pcts, strict=True)
    ]
    assert delta["steps"] == expected
    # same seed: each step ends 2 layers x 14 µs later than its reference step
    assert [a - b for b, a in zip(before, after, strict=True)] == pytest.approx([28.0] * 3)
    assert delta["step_delta_median_pct"] == pytest.approx(statistics.median(pcts))
    assert delta["worst_step"] == pcts.index(max(pcts)) + 1  # the most slowed step, 1-based


def test_reference_steps_in_the_text() -> None:
    before = _step_walls_us(_spans(gain_scenarios.slower_single_stream(layers=2).scenarios))
    after = _step_walls_us(_spans(gain_scenarios.slower_multi_stream(layers=2).scenarios))
    pcts = [(a - b) / b * 100 for b, a in zip(before, after, strict=True)]
    worst = pcts.index(max(pcts))
    result = analyze(MULTI, "--reference", SINGLE, *PLAN_ARGS)
    assert result.exit_code == 0, result.output
    # one line per plan in the Reference section, not one per step
    (line,) = [x for x in result.stdout.splitlines() if "step by step" in x]
    assert line == (
        "  SharedExpert, rank 0, step by step: 3 warm step(s) vs 3 in the reference, 3 matched "
        f"by order; "
        f"step wall Δ median {statistics.median(pcts):+.2f}%, worst run {worst + 3} step "
        f"{STEP_ID}: {before[worst]:.3f} -> {after[worst]:.3f} µs ({pcts[worst]:+.2f}%)"
    )


def test_reference_with_fewer_steps_matches_the_first(tmp_path: Path) -> None:
    # the reference's first 4 runs: 2 warm steps (runs 3 and 4) against the head's 3
    short = tmp_path / "single"
    for run in sorted(SINGLE.iterdir())[:4]:
        shutil.copytree(run, short / run.name)
    before = _step_walls_us(_spans(gain_scenarios.slower_single_stream(layers=2).scenarios))
    after = _step_walls_us(_spans(gain_scenarios.slower_multi_stream(layers=2).scenarios))
    result = analyze(MULTI, "--reference", short, *PLAN_ARGS, "--format", "json")
    assert result.exit_code == 0, result.output
    ref = json.loads(result.stdout)["reference"]
    (delta,) = ref["plans"]
    assert "3 warm step(s) vs 2 in the reference (2 matched by order)" in ref["matched"]
    assert (delta["warm_steps_after"], delta["warm_steps_before"]) == (3, 2)
    assert [s["before"]["wall_us"] for s in delta["steps"]] == pytest.approx(before[:2])
    assert [s["after"]["wall_us"] for s in delta["steps"]] == pytest.approx(after[:2])


def test_join_wait_before_and_after_the_reference() -> None:
    result = analyze(JOIN, "--reference", SINGLE, *PLAN_ARGS)
    assert result.exit_code == 0, result.output
    # the reference runs its side ops before the dominator on one stream: no wait there
    (summary,) = [x for x in result.stdout.splitlines() if x.startswith("  plan SharedExpert")]
    assert (
        f"the main stream waited {JOIN_WAIT_US:.3f} µs per layer for the side tail "
        f"(0.000 µs in the reference: {JOIN_WAIT_US - 0:.3f} µs new)"
    ) in summary
    reference = result.stdout[result.stdout.index("Reference (against") :].splitlines()
    row = reference[2]  # the heading, the table's header, then the plan's row
    assert f"0.000 -> {JOIN_WAIT_US:.3f}" in row
