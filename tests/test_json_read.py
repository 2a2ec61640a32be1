"""Report.from_json: a JSON report read back renders to the same text again."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import overlap_check
from overlap_check.cli import cli
from overlap_check.judge.baseline import apply_baseline
from overlap_check.model import (
    ContentionInterval,
    CoreLimit,
    CoresResult,
    FailOn,
    Occurrence,
    Options,
    Plan,
    PlanResult,
    PlanRun,
    Report,
    RunInfo,
    StreamStat,
    Thresholds,
    choices_of,
)
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


def test_indented_writes_the_bytes_of_json_dumps_indent_2_but_exponents() -> None:
    from overlap_check.model.json_codec import indented

    data = {
        "empty": [],
        "none": {},
        "nested": [[], [{}], {"a": [1, {"b": None}]}],
        "numbers": [0, -7, 2**63 - 1, 0.1, 12345.678, 1e15 + 0.5, -0.0],
        "text": 'é µs\u2028 "q" \\ \n\t\x01',
        "flags": [True, False],
    }
    assert indented(data) == json.dumps(data, indent=2, ensure_ascii=False)
    # a float json.dumps writes with an exponent may be written another way: the same number
    tiny = {"x": [1e-05, 1.886937034930167e-08, 1e16, 1.2345678901234568e17]}
    lines = ["0.00001,", "1.886937034930167e-8,", "1e16,", "1.2345678901234568e17"]
    assert indented(tiny) == '{\n  "x": [\n' + "\n".join(f"    {n}" for n in lines) + "\n  ]\n}"
    assert json.loads(indented(tiny)) == tiny
    # a lone surrogate is no UTF-8: json.dumps' text all the same
    odd = {"lone surrogate": "\ud800"}
    assert indented(odd) == json.dumps(odd, indent=2, ensure_ascii=False)


@given(st.integers(-(2**53) + 1, 2**53 - 1) | st.integers(-(10**7), 10**7))
def test_us_of_an_int_skips_round_and_gives_its_double(ns: int) -> None:
    from overlap_check.model.json_codec import us

    assert us(ns) == round(ns / 1000, 3)  # the same double, no 5x slower round()
    assert us(ns + 0.5) == round((ns + 0.5) / 1000, 3)  # a median's half: rounded


_NS = st.none() | st.integers(-(2**62), 2**62)


@given(
    st.builds(
        Occurrence,
        index=st.integers(1, 10**6),
        side_ops=st.integers(0, 100),
        side_start_ns=_NS,
        side_end_ns=_NS,
        dominator=st.none() | st.text(max_size=5),
        dom_start_ns=_NS,
        dom_end_ns=_NS,
        overlap_ns=st.integers(0, 2**62),
        overlap_pct=st.none() | st.floats(0, 1),
        busy_overlap_pct=st.none() | st.floats(0, 1),
        side_busy_ns=_NS,
        hidden_ns=_NS,
    ),
    st.none() | st.integers(0, 2**62),
)
def test_a_compiled_writer_writes_what_the_generic_one_does(
    occurrence: Occurrence, origin: int | None
) -> None:
    from overlap_check.model import json_codec

    where = json_codec._Where({}, 0, 1, origin)
    fast = json_codec._compiled(Occurrence)
    assert fast is not None  # Occurrence: plain and time fields only
    compiled = json_codec._write(occurrence, where)
    json_codec._compiled.cache_clear()
    try:  # the generic path: no writer compiled for any class
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(json_codec, "_compiled", lambda cls: None)
            generic = json_codec._write(occurrence, where)
    finally:
        json_codec._compiled.cache_clear()
    assert list(compiled.items()) == list(generic.items())  # keys in the same order


# --------------------------------------------------------------------------- the codec's rules

ORIGIN = 1_736_408_883_000_000_000  # an epoch in ns: above 2**53, as real captures are


def _hand_made() -> Report:
    """One run, one plan with one occurrence, one contention interval: times set by hand."""
    occurrence = Occurrence(
        index=1,
        side_ops=2,
        side_start_ns=ORIGIN + 2_500,
        side_end_ns=ORIGIN + 12_345,
        dominator="GroupedMatmul",
        dom_start_ns=ORIGIN + 1_000,
        dom_end_ns=ORIGIN + 20_000,
        overlap_ns=9_845,
        overlap_pct=1.0,
        busy_overlap_pct=1.0,
        hidden_pct=0.75,
        side_busy_ns=9_845,
        hidden_ns=7_384,
    )
    run = PlanRun(
        run=1,
        warm=True,
        overlap_pct=1.0,
        occurrences=1,
        busy_overlap_pct=1.0,
        fake=0,
        hidden_counts=(1, 0, 0),
        worst=(occurrence,),
        layers=(occurrence,),
    )
    plan = PlanResult(
        name="p",
        rank=0,
        verdict="real",
        overlap_pct=1.0,
        provisional=True,
        side_stream=3,
        main_stream=2,
        per_run=(run,),
        verdict_counts=(1, 0, 0),
    )
    contention = ContentionInterval(
        run=1,
        rank=0,
        start_ns=ORIGIN + 3_000,
        duration_ns=1_500,
        kind="aicore",
        demand=30,
        maximum=24,
    )
    return Report(
        tool_version="0",
        verdict="pass",
        exit_code=0,
        thresholds=Thresholds(),
        runs=(
            RunInfo(
                index=1,
                path="r",
                rank=0,
                warm=True,
                source="kernel_details.csv",
                streams=(StreamStat(2, 4, 20_000),),
                origin_ns=ORIGIN,
                communication=3,
            ),
        ),
        plans=(plan,),
        cores=CoresResult(
            device=None,
            contention=(contention,),
            contention_count=1,
            over_limit_by_rank=((0, 1_500),),
        ),
        fake_share=0.3,
    )


def test_times_are_microseconds_and_points_are_relative_and_exact() -> None:
    rep = _hand_made()
    document = json.loads(render(rep))
    (occurrence,) = document["plans"][0]["per_run"][0]["worst"]
    # 2,500 ns after the origin; the exact point as integer and as text
    assert occurrence["side_start_us"] == 2.5
    assert occurrence["side_start_ns"] == 1_736_408_883_000_002_500
    assert occurrence["side_start_ns_str"] == "1736408883000002500"
    assert occurrence["side_end_us"] == 12.345 and "side_end_ns" not in occurrence
    assert (occurrence["overlap_us"], occurrence["hidden_us"]) == (9.845, 7.384)
    assert document["runs"][0]["streams"][0]["busy_us"] == 20.0
    assert document["runs"][0]["communication_rows"] == 3
    assert document["runs"][0]["origin_ns_str"] == "1736408883000000000"
    assert document["thresholds"] == {"real": 0.5, "fake": 0.05, "fake_share": 0.3}
    assert document["plans"][0]["verdict_counts"] == {"real": 1, "partial": 0, "fake": 0}
    assert "input_shapes" not in document["plans"][0]  # None: left out
    assert "side_kind" not in document["plans"][0]  # compute: left out
    (interval,) = document["cores"]["contention"]
    assert (interval["aicore_demand"], interval["aicore_max"]) == (30, 24)
    assert (interval["start_us"], interval["duration_us"]) == (3.0, 1.5)
    assert document["cores"]["over_limit_by_rank"] == [{"rank": 0, "over_limit_us": 1.5}]
    assert list(document)[:5] == ["schema_version", "tool_version", "config_path", "verdict",
                                  "exit_code"]  # fmt: skip
    assert Report.from_json(document, "report.json") == rep


def test_an_older_report_reads_with_the_defaults() -> None:
    """Keys added since schema_version 1 may be absent; a warning written before warnings had
    every key of a violation has its start only relative to the run's origin."""
    rep = _hand_made()
    document = json.loads(render(rep))
    for key in ("fail_on", "strict", "evidence_summary", "communication"):
        del document[key]
    del document["thresholds"]["fake_share"]
    plan = document["plans"][0]
    del plan["gate_failures"]
    for key in ("contention_runs", "over_limit_by_rank"):
        del document["cores"][key]
    warning = {k: v for k, v in document["cores"]["contention"][0].items() if "demand" not in k}
    warning.update(name="MatMul", stream_id=3, accelerator_core="AI_CORE", block_num=30,
                   mix_block_num=None, limit=24, plan=None, limit_source=None, message="m",
                   start_us=7.25, start_ns=None)  # fmt: skip
    del warning["start_ns"], warning["aicore_max"]
    document["cores"]["warnings"] = [warning]
    back = Report.from_json(document, "report.json")
    assert (back.fail_on, back.strict, back.fake_share) == ("partial", False, 0.25)
    assert (back.evidence_summary, back.communication, back.plans[0].gate_failures) == ((), (), ())
    assert back.cores is not None and back.cores.over_limit_by_rank == ()
    (read,) = back.cores.warnings
    assert (read.start_ns, read.blocks_field) == (ORIGIN + 7_250, "block_num")


def test_a_missing_key_without_a_default_names_the_json_key() -> None:
    document = json.loads(render(_hand_made()))
    del document["runs"][0]["streams"][0]["busy_us"]
    with pytest.raises(InputError, match="unexpected value None") as caught:
        Report.from_json(document, "report.json")
    assert caught.value.key == "runs[0].streams[0].busy_us"
    document = json.loads(render(_hand_made()))
    document["cores"]["contention"][0]["aicore_demand"] = "30"
    with pytest.raises(InputError, match="unexpected value '30'") as caught:
        Report.from_json(document, "report.json")
    assert caught.value.key == "cores.contention[0].aicore_demand"


def test_the_codec_tables_name_fields_of_the_model() -> None:
    from dataclasses import fields

    from overlap_check.model import json_codec as codec

    tables = [*codec.RENAMED, *codec.AS_OBJECTS, *codec.OMITTED_AT_DEFAULT, *codec.ZERO_AS_NULL]
    for cls, name in tables:
        assert name in {f.name for f in fields(cls)}, (cls, name)
    for cls, leading in codec.LEADING.items():
        assert set(leading) <= {f.name for f in fields(cls)}


@pytest.mark.parametrize("key", ["overlap_us", "side_end_us", "side_start_ns", "hidden_pct"])
def test_a_number_that_is_none_names_the_key(key: str) -> None:
    document = json.loads(render(_hand_made()))
    document["plans"][0]["per_run"][0]["layers"][0][key] = float("nan")
    with pytest.raises(InputError, match="unexpected value nan") as caught:
        Report.from_json(document, "report.json")
    assert caught.value.key == f"plans[0].per_run[0].layers[0].{key}"


@pytest.mark.parametrize(
    ("where", "value", "key"),
    [
        (("runs", 0, "rank"), {"a": 1}, "runs[0].rank"),
        (("runs", 0, "origin_ns"), "1736408883000000000", "runs[0].origin_ns"),
        (("plans", 0, "rank"), [0], "plans[0].rank"),
        (("cores", "over_limit_by_rank", 0, "over_limit_us"), float("inf"), None),
        (("plans", 0), 1, "plans[0]"),
    ],
)
def test_a_value_of_another_type_is_bad_input_not_a_traceback(
    where: tuple[str | int, ...], value: object, key: str | None
) -> None:
    document = json.loads(render(_hand_made()))
    node = document
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value
    with pytest.raises(InputError) as caught:
        Report.from_json(document, "report.json")
    if key is not None:
        assert caught.value.key == key
