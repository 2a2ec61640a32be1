"""The CI renderers (Markdown, JUnit, GitHub) and the colour switch, on hand-built Reports."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.judge.verdict import mark_gate
from overlap_check.model import (
    BaselineDelta,
    ContentionInterval,
    CoresResult,
    CoreViolation,
    DeviceCores,
    Occurrence,
    PlanResult,
    PlanRun,
    Report,
    RunInfo,
    StreamPair,
    StreamPairRun,
    Thresholds,
)
from overlap_check.model.errors import InputError
from overlap_check.report import github, junit, markdown
from overlap_check.report.color import paint_verdict, use_color
from overlap_check.report.escape import displayed, shown
from overlap_check.report.workflow_commands import command, escape_data, escape_property

# --------------------------------------------------------------------------- builders


def occurrence(index: int, pct: float | None) -> Occurrence:
    return Occurrence(
        index=index,
        side_ops=3,
        side_start_ns=1_000,
        side_end_ns=2_000,
        dominator="GroupedMatmul",
        dom_start_ns=900,
        dom_end_ns=2_100,
        overlap_ns=0,
        overlap_pct=pct,
        busy_overlap_pct=pct,
        hidden_pct=pct,
    )


def plan_run(run: int, warm: bool, pct: float | None, worst: float | None = None) -> PlanRun:
    worst_occ = (occurrence(12, worst),) if worst is not None else ()
    return PlanRun(run=run, warm=warm, overlap_pct=pct, occurrences=60, busy_overlap_pct=pct,
                   judged=60, worst=worst_occ, hidden_pct=pct)  # fmt: skip


def plan(
    verdict: str = "real",
    pct: float | None = 0.87,
    *,
    name: str = "moe-shared-expert",
    rank: int | None = 0,
    provisional: bool = False,
    diagnosis: str = "",
) -> PlanResult:
    runs = (
        plan_run(1, False, 0.02),
        plan_run(2, False, 0.03),
        plan_run(3, True, pct, worst=0.41),
        plan_run(4, True, pct, worst=0.35),
        plan_run(5, True, pct, worst=0.5),
    )
    return PlanResult(
        name=name,
        rank=rank,
        verdict=verdict,  # type: ignore[arg-type]
        overlap_pct=pct,
        hidden_pct=pct,
        provisional=provisional,
        side_stream=3,
        main_stream=2,
        per_run=runs,
        runs_used=3,
        diagnosis=diagnosis,
    )


def report(*plans: PlanResult, **changes: object) -> Report:
    run = RunInfo(index=1, path="run1", rank=0, warm=False, source="kernel_details.csv", streams=())
    base = Report(
        tool_version="0.1.0",
        verdict="pass",
        exit_code=0,
        thresholds=Thresholds(),
        runs=(run,),
        plans=plans,
    )
    return mark_gate(replace(base, **changes))  # type: ignore[arg-type]


def failed(base: Report, *reasons: str) -> Report:
    return base.failing(*reasons)


def junit_tree(rep: Report) -> ET.Element:
    text = junit.render(rep)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    return ET.fromstring(text.split("\n", 1)[1])


def counts(root: ET.Element) -> dict[str, int]:
    suite = root.find("testsuite")
    assert suite is not None
    return {k: int(suite.attrib[k]) for k in ("tests", "failures", "errors", "skipped")}


# --------------------------------------------------------------------------- pass / fail


def test_pass_in_every_format() -> None:
    rep = report(plan(diagnosis="3c real overlap (overlap_pct 0.870)"))
    md = markdown.render(rep)
    assert md.startswith("## overlap-check: ✅ pass\n")
    assert "### Plans, rank 0" in md
    # plan | hidden_pct | verdict | overlap_pct | runs used | deciding occurrence (lowest
    # warm hidden_pct: run 4)
    assert "| moe-shared-expert | 0.870 | ✅ real | 0.870 | 3 of 5 | 0.350 (run 4, `#`12) |" in md
    assert "- **moe-shared-expert**: 3c real overlap" in md
    assert "vs baseline" not in md

    root = junit_tree(rep)
    assert counts(root) == {"tests": 1, "failures": 0, "errors": 0, "skipped": 0}
    assert root.attrib["tests"] == "1"
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.attrib == {
        "classname": "overlap-check.plans",
        "name": "moe-shared-expert rank 0",
        "time": "0",
    }
    assert case.find("failure") is None
    out = case.findtext("system-out") or ""
    assert "per run (hidden_pct): 1 (cold): 0.020, 2 (cold): 0.030, 3: 0.870" in out

    lines = github.render(rep).splitlines()
    assert lines[0].startswith(
        "::notice title=overlap-check%3A moe-shared-expert rank 0::real: hidden_pct 0.870"
    )
    assert lines[-1] == "overlap-check: pass"


def test_fake_plan_fails_in_every_format() -> None:
    diagnosis = "3b fake parallelism: overlap_pct 0.000 <= 0.05; barrier candidate: Cast"
    rep = failed(
        report(plan("fake", 0.0, diagnosis=diagnosis)),
        "plan moe-shared-expert, rank 0: fake (overlap_pct 0.000)",
    )
    md = markdown.render(rep)
    assert md.startswith("## overlap-check: ❌ fail\n")
    assert "- plan moe-shared-expert, rank 0: fake (overlap_pct 0.000)" in md
    assert "| moe-shared-expert | 0.000 | ❌ fake | 0.000 | 3 of 5 |" in md
    assert "barrier candidate: Cast" in md

    root = junit_tree(rep)
    assert counts(root) == {"tests": 1, "failures": 1, "errors": 0, "skipped": 0}
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    want = "verdict fake (hidden_pct 0.000) fails the gate (--fail-on partial)"
    assert failure.attrib["message"] == want
    assert failure.attrib["type"] == "plan"
    assert "fake: hidden_pct 0.000" in (failure.text or "")
    assert "barrier candidate: Cast" in (failure.text or "")

    out = github.render(rep)
    assert out.startswith("::error title=overlap-check%3A moe-shared-expert rank 0::fake:")
    assert "%0Averdict fake (hidden_pct 0.000) fails the gate" in out
    assert out.splitlines()[-1].startswith("overlap-check: fail (plan moe-shared-expert")


@pytest.mark.parametrize("fail_on", ["fake", "partial", "never"])
def test_no_evidence_never_passes(fail_on: str) -> None:
    rep = failed(
        report(plan("no-evidence", None), fail_on=fail_on),
        "plan moe-shared-expert, rank 0: no-evidence (overlap_pct n/a)",
    )
    assert "| moe-shared-expert | n/a | ❌ no-evidence | n/a |" in markdown.render(rep)
    root = junit_tree(rep)
    assert counts(root)["failures"] == 1
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.attrib["message"].startswith("no evidence")
    assert github.render(rep).startswith("::error title=overlap-check%3A moe-shared-expert")


def test_no_evidence_shows_failure_even_in_a_report_marked_pass() -> None:
    rep = report(plan("no-evidence", None))  # inconsistent input: the case still fails
    assert counts(junit_tree(rep))["failures"] == 1
    assert "❌ no-evidence" in markdown.render(rep)
    assert github.render(rep).startswith("::error")


def test_partial_warns_or_fails_by_fail_on() -> None:
    lenient = report(plan("partial", 0.25), fail_on="fake")
    assert counts(junit_tree(lenient))["failures"] == 0
    assert github.render(lenient).startswith("::warning title=overlap-check%3A moe-shared-expert")
    assert "⚠️ partial" in markdown.render(lenient)

    # the default, as the recipes establish a plan only at >= 0.5
    strict = failed(report(plan("partial", 0.25)), "partial")
    assert counts(junit_tree(strict))["failures"] == 1
    assert github.render(strict).startswith("::error")


def test_provisional_pass_is_skipped_in_junit_and_a_warning_elsewhere() -> None:
    rep = report(plan(provisional=True))
    root = junit_tree(rep)
    assert counts(root) == {"tests": 1, "failures": 0, "errors": 0, "skipped": 1}
    skipped = root.find("testsuite/testcase/skipped")
    assert skipped is not None
    assert "provisional" in skipped.attrib["message"]
    # GitLab shows the element's text, Jenkins the attribute: both carry the reason
    assert skipped.text == skipped.attrib["message"]
    assert skipped.text.endswith("[provisional: judged on fewer than 5 runs (--min-runs)]")
    assert "skipped" not in root.attrib  # on <testsuites> the schemas reject it
    assert github.render(rep).startswith("::warning")
    md = markdown.render(rep)
    assert "⚠️ **Provisional**: judged on fewer than 5 runs" in md
    assert "⚠️ real (provisional)" in md


def test_provisional_with_strict_fails() -> None:
    rep = failed(report(plan(provisional=True), strict=True), "rank 0: provisional")
    root = junit_tree(rep)
    assert counts(root) == {"tests": 1, "failures": 1, "errors": 0, "skipped": 0}


def test_one_table_per_rank() -> None:
    rep = report(plan(rank=0), plan("fake", 0.01, rank=1))
    md = markdown.render(rep)
    assert md.index("### Plans, rank 0") < md.index("### Plans, rank 1")
    names = [case.attrib["name"] for case in junit_tree(rep).iter("testcase")]
    assert names == ["moe-shared-expert rank 0", "moe-shared-expert rank 1"]


# --------------------------------------------------------------------------- stream pairs


def pair(side: int, pct: float, verdict: str) -> StreamPair:
    runs = tuple(
        StreamPairRun(run=i, warm=i > 2, overlap_ns=0, overlap_pct=pct, main_busy_ns=1,
                      side_busy_ns=1)
        for i in (1, 2, 3, 4, 5)
    )  # fmt: skip
    return StreamPair(rank=0, main=2, side=side, overlap_ns=0.0, overlap_pct=pct,
                      verdict=verdict, provisional=False, per_run=runs)  # type: ignore[arg-type]  # fmt: skip


def test_stream_pairs_when_there_is_no_plan() -> None:
    rep = failed(
        report(stream_pairs=(pair(3, 0.9, "real"), pair(4, 0.0, "fake"))),
        "rank 0: stream 4 vs main stream 2: fake",
    )
    md = markdown.render(rep)
    assert "### Stream pairs, rank 0" in md
    assert "| stream 3 vs 2 (main) | 0.900 | ✅ real | 3 of 5 |" in md
    assert "| stream 4 vs 2 (main) | 0.000 | ❌ fake | 3 of 5 |" in md
    root = junit_tree(rep)
    assert counts(root) == {"tests": 2, "failures": 1, "errors": 0, "skipped": 0}
    assert [c.attrib["name"] for c in root.iter("testcase")] == [
        "stream 3 vs 2 rank 0",
        "stream 4 vs 2 rank 0",
    ]
    assert {c.attrib["classname"] for c in root.iter("testcase")} == {"overlap-check.streams"}


def test_stream_pairs_are_not_cases_when_there_are_plans() -> None:
    rep = report(plan(), stream_pairs=(pair(3, 0.0, "fake"),))
    assert counts(junit_tree(rep))["tests"] == 1
    assert "Stream pairs" not in markdown.render(rep)


# --------------------------------------------------------------------------- core limits


def violation(run: int, name: str) -> CoreViolation:
    return CoreViolation(run=run, rank=0, stream_id=3, name=name, accelerator_core="AI_CORE",
                         block_num=24, mix_block_num=0, limit=12, kind="aicore", start_ns=0,
                         plan="moe-shared-expert")  # fmt: skip


def test_core_violations_fail_their_own_case() -> None:
    cores = CoresResult(
        device=DeviceCores(aicore=24, vectorcore=48, source="info.json"),
        violations=(violation(3, "aclnnSharedExpert_A"), violation(4, "aclnnSharedExpert|B")),
        checked_kernels=10,
        violation_count=2,
    )
    rep = failed(
        report(plan(), cores=cores), "core limits: 2 violation(s) (a kernel per core kind)"
    )
    root = junit_tree(rep)
    assert counts(root) == {"tests": 2, "failures": 1, "errors": 0, "skipped": 0}
    cores_case = [
        c for c in root.iter("testcase") if c.attrib["classname"] == "overlap-check.cores"
    ]
    assert [c.attrib["name"] for c in cores_case] == ["core limits: moe-shared-expert rank 0"]
    failure = cores_case[0].find("failure")
    assert failure is not None
    assert "run 3: aclnnSharedExpert_A on stream 3 (AI_CORE) uses 24 blocks, aicore limit 12" in (
        failure.text or ""
    )
    md = markdown.render(rep)
    assert "Device: 24 AI Core (aic) / 48 AI Vector (aiv) (info.json)." in md
    assert "❌ 2 violation(s) of limit_core_num (a kernel per core kind)." in md
    assert (
        "| 4 | 0 | moe-shared-expert | aclnnSharedExpert\\|B | 3 | AI_CORE | 24 | aicore 12 |" in md
    )
    assert github.render(rep).count("::error") == 1


def test_core_limits_within_limits_pass() -> None:
    cores = CoresResult(device=None, checked_kernels=8, exempt_kernels=2)
    root = junit_tree(report(plan(), cores=cores))
    assert counts(root) == {"tests": 2, "failures": 0, "errors": 0, "skipped": 0}
    assert "✅ 8 kernel(s) within limit_core_num (2 exempt)." in markdown.render(
        report(plan(), cores=cores)
    )


def test_no_limits_configured() -> None:
    cores = CoresResult(device=DeviceCores(aicore=24, vectorcore=48, source="soc"))
    rep = report(plan(), cores=cores)
    assert counts(junit_tree(rep))["tests"] == 1  # no core case
    assert "No core limits configured" in markdown.render(rep)


def test_gate_case_when_the_failure_is_shown_nowhere_else() -> None:
    contention = ContentionInterval(run=3, rank=0, start_ns=0, duration_ns=5_000, kind="aicore",
                                    demand=36, maximum=24)  # fmt: skip
    cores = CoresResult(
        device=None, contention=(contention,), over_limit_ns=5_000, checked_kernels=4
    )
    reason = "contention: 1 interval(s) where main + side block demand exceeds the device cores"
    rep = failed(report(plan(), cores=cores, fail_on="fake"), reason)
    root = junit_tree(rep)
    # plan (pass) + core limits (pass) + gate (fail)
    assert counts(root) == {"tests": 3, "failures": 1, "errors": 0, "skipped": 0}
    gate = [c for c in root.iter("testcase") if c.attrib["name"] == "gate"]
    assert len(gate) == 1
    failure = gate[0].find("failure")
    assert failure is not None and failure.attrib["message"] == reason
    assert github.render(rep).startswith("::error title=overlap-check%3A gate::contention")


# --------------------------------------------------------------------------- baseline


def test_baseline_regression_fails_the_plan_case_and_shows_the_change() -> None:
    deltas = (
        BaselineDelta("moe-shared-expert", 0, 0.87, 0.40, 0.40 - 0.87, "regressed"),
        BaselineDelta("indexer", 0, 0.7, None, None, "missing-in-head"),
    )
    rep = failed(
        report(plan("partial", 0.40), baseline=deltas, baseline_tolerance=0.1, fail_on="fake"),
        "baseline: moe-shared-expert rank 0 dropped",
        "baseline: indexer rank 0 missing",
    )
    md = markdown.render(rep)
    assert "| vs baseline |" in md
    assert "| -0.470 (0.870 → 0.400) ❌ |" in md
    assert "### Baseline (tolerance 0.100)" in md
    assert "- ❌ indexer rank 0: in the baseline (hidden_pct 0.700) but not in this report" in md
    root = junit_tree(rep)
    assert counts(root) == {"tests": 2, "failures": 2, "errors": 0, "skipped": 0}
    names = [c.attrib["name"] for c in root.iter("testcase")]
    assert names == ["moe-shared-expert rank 0", "baseline: indexer rank 0"]
    plan_failure = root.find("testsuite/testcase/failure")
    assert plan_failure is not None
    # partial passes --fail-on fake; the baseline is what fails it
    assert plan_failure.attrib["message"].startswith("baseline: moe-shared-expert rank 0")
    assert "dropped by more than the tolerance 0.100" in plan_failure.attrib["message"]


def test_baseline_within_tolerance_is_a_detail_not_a_failure() -> None:
    deltas = (BaselineDelta("moe-shared-expert", 0, 0.9, 0.87, 0.87 - 0.9, "ok"),)
    rep = report(plan(), baseline=deltas, baseline_tolerance=0.1)
    assert "| -0.030 (0.900 → 0.870) |" in markdown.render(rep)
    assert counts(junit_tree(rep))["failures"] == 0


# --------------------------------------------------------------------------- escaping


def test_github_escaping() -> None:
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a: b, c%") == "a%3A b%2C c%25"
    assert command("notice", "m", title="t: x") == "::notice title=t%3A x::m"
    # properties keep their order; None ones are left out
    assert command("error", "m", file="a,b.toml", line=3, title=None) == (
        "::error file=a%2Cb.toml,line=3::m"
    )
    assert command("warning", "m") == "::warning::m"


def test_names_with_markup_are_escaped() -> None:
    rep = report(plan("fake", 0.0, name="a|b<c>&d\x01"))
    rep = failed(rep, "fake")
    assert "| a\\|b\\<c\\>\\&d\\\\x01 |" in markdown.render(displayed(rep))
    root = junit_tree(rep)  # parses: the control character was replaced
    assert [c.attrib["name"] for c in root.iter("testcase")] == ["a|b<c>&d? rank 0"]


def test_verdict_reasons_and_notes_are_suite_properties_in_junit() -> None:
    rep = failed(report(plan("fake", 0.0), notes=("rank 0: 3 rows skipped",)), "plan x: fake")
    root = junit_tree(rep)
    properties = [(p.attrib["name"], p.attrib["value"]) for p in root.iter("property")]
    assert ("summary", "overlap-check: fail") in properties
    assert ("gate_reason", "plan x: fake") in properties
    assert ("note", "rank 0: 3 rows skipped") in properties
    suite = root.find("testsuite")
    assert suite is not None and suite.find("system-out") is None  # Surefire allows none there


def test_notes_are_warnings_and_in_the_summary() -> None:
    rep = report(plan(), notes=("rank 0: 3 rows skipped (line 7, 9, 12)",))
    out = github.render(rep).splitlines()
    # commas are escaped only in properties (the title), not in the message
    assert out[0] == "::warning title=overlap-check::rank 0: 3 rows skipped (line 7, 9, 12)"
    assert out[1].startswith("::notice")
    assert "- rank 0: 3 rows skipped (line 7, 9, 12)" in markdown.render(rep)


# --------------------------------------------------------------------------- step summary


def test_step_summary_is_appended(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("earlier step\n")
    rep = report(plan())
    markdown.append_step_summary(rep, {"GITHUB_STEP_SUMMARY": str(target)})
    markdown.append_step_summary(rep, {"GITHUB_STEP_SUMMARY": str(target)})
    text = target.read_text()
    assert text.startswith("earlier step\n## overlap-check: ✅ pass")
    assert text.count("## overlap-check: ✅ pass") == 2


def test_step_summary_not_written_when_unset_or_switched_off(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    markdown.append_step_summary(report(plan()), {})
    environ = {"GITHUB_STEP_SUMMARY": str(target), "OVERLAP_CHECK_STEP_SUMMARY": "0"}
    markdown.append_step_summary(report(plan()), environ)
    assert not target.exists()


def test_step_summary_that_cannot_be_written(tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "summary.md"
    with pytest.raises(InputError) as caught:
        markdown.append_step_summary(report(plan()), {"GITHUB_STEP_SUMMARY": str(target)})
    assert caught.value.path == str(target)
    assert "GITHUB_STEP_SUMMARY" in str(caught.value)


# --------------------------------------------------------------------------- colour


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("tty", "environ", "expected"),
    [
        (True, {}, True),
        (False, {}, False),
        (True, {"NO_COLOR": "1"}, False),
        (True, {"NO_COLOR": ""}, True),  # empty: unset
        (False, {"FORCE_COLOR": "1"}, True),
        (False, {"FORCE_COLOR": "0"}, False),
        (True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # NO_COLOR wins
        (True, {"TERM": "dumb"}, False),
    ],
)
def test_use_color(tty: bool, environ: dict[str, str], expected: bool) -> None:
    stream = FakeTty() if tty else io.StringIO()
    assert use_color(stream, environ) is expected


def test_paint_verdict() -> None:
    assert paint_verdict("fake", True) == "\033[31mfake\033[0m"
    assert paint_verdict("fake", False) == "fake"


# --------------------------------------------------------------------------- hostile names

# A name that, printed raw, ends the annotation and starts a command of its own.
HOSTILE = "evil\n::error file=evil.py,line=1::pwned 50%, a:b\r"
FAKE_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fake-dual-stream"
NO_SUMMARY = {"GITHUB_STEP_SUMMARY": None}


def _unescape(text: str) -> str:
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(code, char)
    return text


def runner_commands(output: str) -> list[tuple[str, dict[str, str], str]]:
    """The workflow commands GitHub's runner reads from ``output``, decoded as it decodes them.

    The runner splits the log into lines at CR, LF or CRLF and takes a line that
    starts with ``::`` as ``::kind key=value,key=value::message``.
    """
    found = []
    for line in re.split(r"\r\n|\r|\n", output):
        if not line.strip().startswith("::"):
            continue
        head, _, message = line.strip()[2:].partition("::")
        kind, _, listed = head.partition(" ")
        properties = dict(item.partition("=")[::2] for item in listed.split(",") if item)
        decoded = {key: _unescape(value) for key, value in properties.items()}
        found.append((kind, decoded, _unescape(message)))
    return found


def test_hostile_plan_name_from_the_command_line_stays_in_its_annotation() -> None:
    args = ["analyze", str(FAKE_FIXTURE), "--side", "SharedExpert", "--dominator",
            "GroupedMatmul", "--name", HOSTILE, "--format", "github", "-q"]  # fmt: skip
    result = CliRunner().invoke(cli, args, env=NO_SUMMARY)
    assert result.exit_code == 1  # the fixture's plan is fake
    commands = runner_commands(result.stdout)
    # one annotation (the plan's error); no evil.py command, from the title nor the verdict line
    assert [(kind, set(props)) for kind, props, _ in commands] == [("error", {"title"})]
    # the CLI shows the name escaped (escape.py): its newline is no line break even decoded
    assert commands[0][1]["title"] == f"overlap-check: {shown(HOSTILE)} rank 0"
    lines = result.stdout.split("\n")
    assert len(lines) == 3 and lines[2] == ""  # the annotation, the verdict line, the end
    # the side work ran while the main stream waited: none hidden
    verdict = "verdict fake (hidden_pct 0.000) fails the gate (--fail-on partial))"
    assert _unescape(lines[1]) == f"overlap-check: fail (plan {shown(HOSTILE)}, rank 0: {verdict}"


def test_config_plan_annotation_points_at_its_plan_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "overlap-check.toml"
    toml_name = HOSTILE.replace("\n", "\\n").replace("\r", "\\r")
    config.write_text(
        "[gate]\nfail_on = \"fake\"\n\n"  # lines 1-3
        "[[plan]]\nname = \"other\"\nside = \"Nothing\"\n\n"  # the first plan on line 4
        f"[[plan]]  # the hostile one, line 8\nname = \"{toml_name}\"\nside = \"SharedExpert\"\n"
        "dominator = \"GroupedMatmul\"\n",
        encoding="utf-8",
    )  # fmt: skip
    monkeypatch.chdir(tmp_path)
    args = ["analyze", str(FAKE_FIXTURE), "--format", "github", "-q"]
    result = CliRunner().invoke(cli, args, env=NO_SUMMARY)
    assert result.exit_code == 1, result.output
    by_title = {props["title"]: (kind, props) for kind, props, _ in runner_commands(result.stdout)}
    kind, props = by_title[f"overlap-check: {shown(HOSTILE)} rank 0"]
    assert (kind, props["file"], props["line"]) == ("error", "overlap-check.toml", "8")
    _, other = by_title["overlap-check: other rank 0"]  # no side op found: no-evidence
    assert (other["file"], other["line"]) == ("overlap-check.toml", "4")
    assert all(props.get("file") != "evil.py" for props in props_of(result.stdout))


def props_of(output: str) -> list[dict[str, str]]:
    return [props for _, props, _ in runner_commands(output)]


def test_hostile_kernel_names_and_paths_stay_in_their_annotation() -> None:
    diagnosis = f"3b fake parallelism; barrier candidate: {HOSTILE} on stream 2"
    rep = failed(
        report(plan("fake", 0.0, name="p,1:x", diagnosis=diagnosis),
               notes=(f"skipped rows in /data/{HOSTILE}/kernel_details.csv",)),
        f"plan p,1:x, rank 0: fake; {HOSTILE}",
    )  # fmt: skip
    out = github.render(rep)
    commands = runner_commands(out)
    assert [(kind, set(props)) for kind, props, _ in commands] == [
        ("error", {"title"}),
        ("warning", {"title"}),
    ]
    assert commands[0][1]["title"] == "overlap-check: p,1:x rank 0"
    assert commands[0][2].endswith(diagnosis)
    assert commands[1][2] == f"skipped rows in /data/{HOSTILE}/kernel_details.csv"
    assert len(out.split("\n")) == 4  # two commands, the verdict line, the final newline


def test_lint_annotations_escape_a_hostile_path(tmp_path: Path) -> None:
    folder = tmp_path / "a,b:c%d\n::error file=evil.py,line=1::x"
    folder.mkdir()
    source = folder / "model.py"
    lint_data = Path(__file__).parent / "data" / "lint" / "pipeline_npugraph_ex.py"
    source.write_text(lint_data.read_text(encoding="utf-8"), encoding="utf-8")  # 2 findings
    result = CliRunner().invoke(cli, ["lint", str(source), "--format", "github"])
    commands = runner_commands(result.stdout)
    assert len(commands) == len(result.stdout.split("\n")) - 1 == 2  # one line per finding
    assert [props["line"] for props in props_of(result.stdout)] == ["30", "43"]
    assert {props["file"] for props in props_of(result.stdout)} == {shown(str(source))}


# --------------------------------------------------------------------------- evidence summary

# a name that would close the XML element and open one of its own, printed raw
XML_HOSTILE = 'x</system-out><failure message="pwned"/>&amp;"'


def test_evidence_summary_in_every_ci_format() -> None:
    lines = (
        "plan moe-shared-expert, rank 0: fake, hidden_pct 0.000, overlap_pct 0.000",
        f"plan {XML_HOSTILE}, rank 0: real, hidden_pct 0.870, overlap_pct 0.870",
    )
    rep = report(plan("fake", 0.0), plan(name=XML_HOSTILE), evidence_summary=lines)
    rep = failed(rep, "plan moe-shared-expert, rank 0: fake")
    # JUnit: each line a suite property, and in its plan's testcase after the verdict line
    root = junit_tree(rep)
    properties = [(p.get("name"), p.get("value")) for p in root.iter("property")]
    # a repeated property name is numbered (xunitparser rejects a repeated one)
    assert [(n, v) for n, v in properties if n.startswith("evidence")] == [
        ("evidence.1", lines[0]),
        ("evidence.2", lines[1]),
    ]
    cases = root.findall("testsuite/testcase")
    assert [case.get("name") for case in cases] == [
        "moe-shared-expert rank 0",
        f"{XML_HOSTILE} rank 0",
    ]
    for case, line in zip(cases, lines, strict=True):
        out = case.findtext("system-out")
        assert out is not None and out.split("\n")[1] == f"evidence: {line}"
    failure = cases[0].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.split("\n")[1] == f"evidence: {lines[0]}"
    assert len(root.findall(".//failure")) == 1  # the hostile name opened none of its own
    # GitHub: in the plan's annotation, one line per command whatever the name holds
    commands = runner_commands(github.render(rep))
    messages = [message for kind, _, message in commands if kind in ("error", "notice")]
    assert [message.split("\n")[1] for message in messages] == [f"evidence: {x}" for x in lines]
    # Markdown: its own section, before the plans
    md = markdown.render(rep)
    assert md.index("**Evidence:**") < md.index("### Plans")


def test_hostile_plan_name_in_the_evidence_line_stays_in_its_annotation() -> None:
    args = ["analyze", str(FAKE_FIXTURE), "--side", "SharedExpert", "--dominator",
            "GroupedMatmul", "--name", HOSTILE, "--format", "github", "-q"]  # fmt: skip
    result = CliRunner().invoke(cli, args, env=NO_SUMMARY)
    assert result.exit_code == 1
    ((kind, _, message),) = runner_commands(result.stdout)  # still one command
    assert kind == "error"
    # decoded, the line holds the name shown escaped (escape.py), inside this one message
    evidence = f"plan {shown(HOSTILE)}, rank 0: fake (hidden_pct 0.000), overlap_pct 0.000"
    assert f"\nevidence: {evidence}\n" in message


def test_ci_formats_state_the_deciding_figure_where_the_window_figure_disagrees() -> None:
    # split-side-work (synth.hiding_layouts): the side window spans the dominator (window
    # overlap_pct 1.000), but only 2 of the 202 µs of side work ran under the main stream's
    # compute: hidden_pct 2 / 202 = 0.0099 -> 0.010, fake. The bands apply to hidden_pct, so
    # the verdict line must say so, not set "fake" beside 1.000.
    folder = FAKE_FIXTURE.parent / "split-side-work"
    args = ["analyze", str(folder), "--side", "SharedExpert", "--dominator", "GroupedMatmul",
            "-q", "--format"]  # fmt: skip
    want = "fake: hidden_pct 0.010 (median of 1 warm run(s) of 1; real >= 0.5, fake <= 0.05); "
    want += "window overlap_pct 1.000"
    result = CliRunner().invoke(cli, [*args, "junit"], env=NO_SUMMARY)
    assert result.exit_code == 1
    failure = ET.fromstring(result.stdout).find("testsuite/testcase/failure")
    assert failure is not None
    text = failure.text or ""
    assert text.startswith(want)
    assert "deciding occurrence: run 1, #1: hidden_pct 0.010 (fake), overlap_pct 1.000" in text
    assert "per run (hidden_pct): 1: 0.010" in text
    result = CliRunner().invoke(cli, [*args, "github"], env=NO_SUMMARY)
    kind, _, message = runner_commands(result.stdout)[0]  # then the provisional warning
    assert kind == "error" and message.startswith(want)
    result = CliRunner().invoke(cli, [*args, "markdown"], env=NO_SUMMARY)
    # plan | hidden_pct | verdict | overlap_pct | runs used | deciding occurrence (its band)
    row = "| SharedExpert | 0.010 | ❌ fake (provisional) | 1.000 | 1 of 1 | "
    row += "0.010 (fake) (run 1, `#`1) |"
    assert row in result.stdout
