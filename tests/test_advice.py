"""The structured diagnosis: causes as data, ordered by size, and fix steps per execution path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.judge.advice import CUBE_BOUND, GIVE_PATH, fix_steps
from overlap_check.judge.pipeline import check
from overlap_check.judge.verdict import diagnose, with_cause
from overlap_check.model import BarrierCandidate, Evidence, ExecutionPath, Options, Plan
from overlap_check.report import text as text_report
from synth.layers import DOMINATOR, SIDE_OPS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PLAN = Plan(name="moe", side="SharedExpert", dominator="GroupedMatmul")


def test_fix_steps_name_the_apis_of_the_path() -> None:
    ge = " ".join(fix_steps("fake", "ge"))
    assert "torchair.scope.npu_wait_tensor" in ge and "torchair.ops" in ge
    assert "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1" in ge
    ngx = " ".join(fix_steps("fake", "npugraph_ex"))
    assert "event.record()" in ngx and "wait_stream(side)" in ngx and "torchair" not in ngx
    # core limits: per operator under GE, per stream (Ascend C only) under npugraph_ex / eager
    assert "torchair.scope.limit_core_num" in " ".join(fix_steps("real", "ge"))
    real_ngx = " ".join(fix_steps("real", "npugraph_ex"))
    assert "torch.npu.npugraph_ex.scope.limit_core_num(aic, aiv, stream=side)" in real_ngx
    assert "Ascend C" in real_ngx and "torch_npu.npu_prefetch" in real_ngx
    assert "torch.npu.set_stream_limit" in " ".join(fix_steps("partial", "eager"))
    assert 'torchair.scope.npu_stream_switch("tag")' in fix_steps("not-split", "ge")[0]


def test_unknown_path_gives_generic_steps_that_ask_for_it() -> None:
    steps = fix_steps("fake", None)
    assert steps[-1] == GIVE_PATH and "--source DIR" in GIVE_PATH
    assert len(steps) == 2  # one generic step, then how to name the path
    assert GIVE_PATH not in fix_steps("no-evidence", None)  # nothing to fix in the model yet


def test_causes_are_listed_largest_first_and_only_at_partial_and_real() -> None:
    small = Evidence("contention", "contention", 5_000)
    cube = Evidence("cube-saturated", "cube", None)
    big = Evidence("contention", "more contention", 20_000)
    found = diagnose("partial", "ge", evidence=[small, cube, big])
    assert [e.text for e in found.evidence] == ["more contention", "contention", "cube"]
    assert (found.stage, found.cause, found.path) == ("3b", "partial", "ge")
    # the saturated cube replaces "give the side stream more to hide under" (issue 23.12)
    assert found.fix[0] == CUBE_BOUND
    assert not any("more to hide under" in step for step in found.fix)
    barrier = BarrierCandidate("Cast", 2, 0, 167_500, 3, 1, 1_500, occurrences=6)
    fake = diagnose("fake", None, barriers=[barrier], fake_occurrences=6, evidence=[big])
    assert [(e.kind, e.size_ns) for e in fake.evidence] == [("barrier", 167_500)]
    assert diagnose("real", None).stage == "3c"
    nothing = diagnose("no-evidence", None, no_evidence="no kernel matched")
    assert (nothing.stage, nothing.evidence[0].text) == (None, "no kernel matched")


def test_a_later_cause_goes_in_by_size_before_a_band_mismatch() -> None:
    small = Evidence("contention", "contention", 5_000)
    cube = Evidence("cube-saturated", "cube", None)
    band = Evidence("band-mismatch", "bands differ")
    found = diagnose("real", None, evidence=[small, cube, band])
    mid = Evidence("dominator-stretched", "stretched", 12_000)
    tiny = Evidence("dominator-stretched", "barely", 1_000)
    assert [e.text for e in with_cause(found, mid).evidence] == [
        "stretched",  # 12 µs before 5 µs
        "contention",
        "cube",
        "bands differ",
    ]
    # 1 µs: after the 5 µs contention, before the cube (no time of its own)
    texts = [e.text for e in with_cause(found, tiny).evidence]
    assert texts == ["contention", "barely", "cube", "bands differ"]
    assert with_cause(found, mid).fix == found.fix  # no step of its own
    fake = diagnose("fake", None)
    assert with_cause(fake, mid) == fake  # causes are measured at partial and real only


def test_real_fixture_names_contention_then_a_saturated_cube() -> None:
    report = check([str(FIXTURES / "real-dual-stream")], Options(plans=(PLAN,), path="ge"))
    found = report.plans[0].diagnosed
    assert found is not None and (found.stage, found.cause, found.path) == ("3c", "real", "ge")
    contention, cube = found.evidence
    # Per layer the side ops run inside the dominator (MIX_AIC 24 AI-core / 48 vector blocks):
    # GateUp MatMul (AI_CORE 24, 80 us) and Down MatMul (24, 60 us) push AI-core demand to
    # 24 + 24 = 48 > 24; SwiGlu (AI_VECTOR_CORE 48, 20 us) vector demand to 48 + 48 = 96 > 48.
    gate_up, swiglu, down = SIDE_OPS
    per_layer_ns = gate_up.duration_ns + swiglu.duration_ns + down.duration_ns
    assert per_layer_ns == 80_000 + 20_000 + 60_000
    layers = sum(r.occurrences for r in report.plans[0].per_run if r.warm)
    assert layers == 3 * 2  # 3 warm runs (5 - 2 warm-up) x 2 layers
    assert contention.size_ns == layers * per_layer_ns == 960_000
    assert "worst instant: vectorcore demand 96 of 48 cores" in contention.text
    assert DOMINATOR.block == 24  # and the device (info.json) has 24 AI cores
    assert cube.kind == "cube-saturated" and cube.size_ns is None
    assert "at least 24 AI-core blocks, and the device has 24 AI cores" in cube.text
    text = text_report.render(report)
    assert "    cause 1: block demand over the device's cores for 960.000 µs" in text
    assert "    cause 2: cube saturated" in text
    # a real plan is never told that multi-stream will not help (issue 23.12)
    assert "    fix (ge): the dominator asks for every AI core" in text
    assert "will not help" not in text


def test_without_a_path_the_real_fixture_gets_generic_steps() -> None:
    report = check([str(FIXTURES / "real-dual-stream")], Options(plans=(PLAN,)))
    found = report.plans[0].diagnosed
    assert found is not None and found.path is None
    assert [e.kind for e in found.evidence] == ["contention", "cube-saturated"]
    assert found.fix[-1] == GIVE_PATH


def test_cli_path_and_source_choose_the_advice(tmp_path: Path) -> None:
    fixture = str(FIXTURES / "fake-dual-stream")
    args = ["analyze", fixture, "--side", "SharedExpert", "--dominator", "GroupedMatmul"]
    runner = CliRunner()
    ge = runner.invoke(cli, [*args, "--path", "ge", "--format", "json", "-q"])
    assert ge.exit_code == 1, ge.output
    diagnosed = json.loads(ge.output)["plans"][0]["diagnosed"]
    assert diagnosed["path"] == "ge" and diagnosed["cause"] == "fake"
    assert diagnosed["evidence"][0]["kind"] == "barrier"
    assert diagnosed["evidence"][0]["size_us"] == 167.5  # the idle gap before the Cast
    model = tmp_path / "model"
    model.mkdir()
    (model / "run.py").write_text(
        "import torch\nmodel = torch.compile(object(), backend='npugraph_ex')\n"
    )
    found = runner.invoke(cli, [*args, "--source", str(model)])
    assert found.exit_code == 1, found.output
    assert "    fix (npugraph_ex): start the side work right after its input exists" in found.output
    both = runner.invoke(cli, [*args, "--source", str(model), "--path", "ge"])
    assert both.exit_code == 2 and "--path and --source" in both.output
    bad = runner.invoke(cli, [*args, "--path", "graph"])
    assert bad.exit_code == 2


def test_source_with_no_single_path_is_a_note(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "import torch\nm = torch.compile(object(), backend='npugraph_ex')\n"
    )
    (tmp_path / "b.py").write_text(
        "import torch, torchair\nm = torch.compile(object(), backend=torchair.get_npu_backend())\n"
    )
    fixture = str(FIXTURES / "fake-dual-stream")
    args = ["analyze", fixture, "--side", "SharedExpert", "--dominator", "GroupedMatmul"]
    result = CliRunner().invoke(cli, [*args, "--source", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "execution path unknown:" in result.output and "(ge, npugraph_ex)" in result.output
    assert "fix (path unknown)" in result.output


def test_a_plan_gives_its_path_in_the_config(tmp_path: Path) -> None:
    from overlap_check.cli.config import load_config
    from overlap_check.model.errors import ConfigError

    config = tmp_path / "overlap-check.toml"
    config.write_text('[[plan]]\nname = "moe"\nside = "SharedExpert"\npath = "eager"\n')
    assert load_config(str(config), tmp_path).plans[0].path == "eager"
    config.write_text('[[plan]]\nname = "moe"\nside = "SharedExpert"\npath = "graph"\n')
    try:
        load_config(str(config), tmp_path)
    except ConfigError as err:
        assert "plan[1].path" in str(err) and "'npugraph_ex'" in str(err)
    else:
        raise AssertionError("a bad path must be a ConfigError")


NGX_CONFIG = """
[[plan]]
name = "moe-shared-expert"
side = "SharedExpert"
dominator = "GroupedMatmul"
path = "npugraph_ex"
[plan.limit_core]
aicore = 12
vectorcore = 24
mode = "npugraph_ex"
"""


def test_npugraph_ex_limit_fails_for_an_ascend_c_operator(tmp_path: Path) -> None:
    config = tmp_path / "overlap-check.toml"
    config.write_text(NGX_CONFIG)
    fixture = str(FIXTURES / "npugraph-ex-limits")
    result = CliRunner().invoke(
        cli, ["analyze", fixture, "--config", str(config), "--format", "json", "-q"]
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["plans"][0]["verdict"] == "real"  # the gate fails on the limit alone
    cores = report["cores"]
    # The side GroupedMatmul (MIX_AIC, Block Num 20 > 12, Mix Block Num 40 > 24) is Ascend C:
    # 2 violations per layer x 2 layers x 5 runs = 20. The MatMulV3 (AI_CORE 20 > 12) may not
    # be Ascend C: 1 per layer x 2 x 5 = 10 warnings.
    assert len(cores["violations"]) == 2 * 2 * 5
    assert {v["name"] for v in cores["violations"]} == {
        "aclnnGroupedMatmulV5_SharedExpertGroupedMatmul_GroupedMatmul"
    }
    assert "an Ascend C operator" in cores["violations"][0]["message"]
    assert len(cores["warnings"]) == 1 * 2 * 5
    assert {w["name"] for w in cores["warnings"]} == {"aclnnMatmul_SharedExpertDown_MatMulV3"}
    # 20 violations of 10 kernel launches (2 kinds each): counted and said as violations
    assert report["gate_reasons"] == ["core limits: 20 violation(s) (a kernel per core kind)"]


def test_config_names_more_ascend_c_operators(tmp_path: Path) -> None:
    config = tmp_path / "overlap-check.toml"
    config.write_text(NGX_CONFIG + '\n[cores]\nascend_c = ["MatMulV3$"]\n')
    fixture = str(FIXTURES / "npugraph-ex-limits")
    result = CliRunner().invoke(
        cli, ["analyze", fixture, "--config", str(config), "--format", "json", "-q"]
    )
    assert result.exit_code == 1, result.output
    cores = json.loads(result.output)["cores"]
    assert (len(cores["violations"]), len(cores["warnings"])) == (20 + 10, 0)
    config.write_text(NGX_CONFIG + '\n[cores]\nascend_c = ["("]\n')
    bad = CliRunner().invoke(cli, ["analyze", fixture, "--config", str(config)])
    assert bad.exit_code == 2 and "cores.ascend_c" in bad.output


def test_a_plan_limits_its_main_path_too(tmp_path: Path) -> None:
    config = tmp_path / "overlap-check.toml"
    main_limit = '[plan.main_limit_core]\naicore = 12\nmode = "npugraph_ex"\n'
    config.write_text(NGX_CONFIG.replace('path = "npugraph_ex"', "main_stream = 2") + main_limit)
    fixture = str(FIXTURES / "npugraph-ex-limits")
    result = CliRunner().invoke(
        cli, ["analyze", fixture, "--config", str(config), "--format", "json", "-q"]
    )
    assert result.exit_code == 1, result.output
    cores = json.loads(result.output)["cores"]
    main = [v for v in cores["violations"] if v["limit_source"] == "plan:moe-shared-expert:main"]
    # Per layer on main stream 2, AI-core kernels over 12: the dominator GroupedMatmul (MIX_AIC
    # 24, Ascend C: fails) and the MatMulV3 (AI_CORE 24: reported); 2 layers x 5 runs.
    assert {v["name"] for v in main} == {"aclnnGroupedMatmulV5_GroupedMatmul_GroupedMatmul"}
    assert len(main) == 1 * 2 * 5
    main_warnings = [
        w for w in cores["warnings"] if w["limit_source"] == "plan:moe-shared-expert:main"
    ]
    assert {w["name"] for w in main_warnings} == {"aclnnMatmul_MatMulV3Common_MatMulV3"}
    assert len(main_warnings) == 1 * 2 * 5
    # the side limit still governs the side ops: 2 violations + 1 warning per layer
    assert len(cores["violations"]) == (2 + 1) * 2 * 5
    assert len(cores["warnings"]) == (1 + 1) * 2 * 5
    config.write_text('[[plan]]\nname = "p"\nside = "S"\n[plan.main_limit_core]\naicore = 12\n')
    bad = CliRunner().invoke(cli, ["analyze", fixture, "--config", str(config)])
    assert bad.exit_code == 2 and "main_limit_core needs main_stream or dominator" in bad.output


PATHS_OR_NONE = ("ge", "npugraph_ex", "eager", None)
MEASURED = [
    Evidence("cube-saturated", "cube"),
    Evidence("join-wait", "join", 5_000),
    Evidence("tail-ops", "tail", 1_000),
]


@pytest.mark.parametrize("path", PATHS_OR_NONE)
@pytest.mark.parametrize("waited", ["main", "side", None])
def test_no_fix_step_contradicts_the_verdict_the_wait_or_another(
    path: ExecutionPath | None, waited: Literal["main", "side"] | None
) -> None:
    # issue 23.12, every cause x path x barrier direction, with every measured cause
    for cause in ("fake", "partial", "real"):
        steps = " ".join(fix_steps(cause, path, MEASURED, waited=waited))  # type: ignore[arg-type]
        if cause == "real":  # a real plan is never told multi-stream will not help
            assert "will not help" not in steps
        if cause == "partial":  # never both "give it more to hide under" and "will not help"
            assert "will not help" in steps and "more to hide under" not in steps
    fake = fix_steps("fake", path, waited=waited)
    text = " ".join(fake)
    if waited == "side":  # the producer step alone: no generic "move it past the dominator"
        assert "make that producer run before the dominator" in text
        assert "past the dominator" not in text and "the main stream waited" not in text
    elif waited == "main":  # the main stream waited for the side work, never the other way
        assert "the main stream waited for the side work" in text
        assert "the side work waited for" not in text and "producer" not in text
    else:  # no barrier found: the generic search, said once
        assert text.count("move it past the dominator") == 1
    assert len(set(fake)) == len(fake)


def test_will_not_help_only_where_the_figures_show_it() -> None:
    # without a saturated cube, no step says multi-stream will not help
    for cause in ("fake", "partial", "real", "not-split", "no-evidence"):
        for path in PATHS_OR_NONE:
            assert "will not help" not in " ".join(fix_steps(cause, path, MEASURED[1:]))  # type: ignore[arg-type]
