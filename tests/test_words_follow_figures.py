"""The words follow the figures (issue 22.4), in every format and the picture's title.

Every fixture and a set of generated layouts (the fake-share cap, one warm run fake in
every layer, hidden_pct within 0.001 of each threshold, both barrier directions) go
through text, JSON, Markdown, JUnit and GitHub and the timeline's title: every figure
printed beside a band word falls in that band, a verdict printed beside its figure is
that figure's band unless the cap that decided it is named, what decided is named,
and the figure shown first is hidden_pct, the one that decides.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import overlap_check
from overlap_check.model import Capture, Options, Plan, Report, Thresholds
from overlap_check.model.verdicts import figure_text, label
from overlap_check.report import github, junit, markdown, text
from overlap_check.report import json as json_report
from overlap_check.report.plots.select import Selection, charts
from synth.construction import BASE_NS
from synth.expected import Built, Expected
from synth.hiding_layouts import GATE_UP, _dominated, _fake_layer, _real_layer
from synth.layers import SIDE
from synth.model import Kernel, Scenario, Variant
from synth.side_kinds import CASES as SIDE_KIND_CASES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SIDE_KINDS = {c.folder: c.answer for c in SIDE_KIND_CASES}
T = Thresholds()
PLAN = Plan("moe", side="SharedExpert", dominator="GroupedMatmul")

FIG = r"(\d+\.\d+)(?: \(just (?:under|over) [\d.]+\))?"
BAND = "(real|partial|fake)"
# "hidden_pct 0.000 (fake", "overlap_pct 0.867 says real", "hidden_pct 0.500 is real on its own"
FIGURE_THEN_BAND = re.compile(rf"(?:hidden_pct|overlap_pct) {FIG} (?:\(|says |is ){BAND}\b")
# "fake (hidden_pct 0.000", "fake: hidden_pct 0.010", "verdict partial (hidden_pct 0.500, capped"
VERDICT_THEN_FIGURE = re.compile(rf"\b{BAND}(?::| \() ?hidden_pct {FIG}(, capped)?")
BETWEEN = re.compile(rf"_pct {FIG} is between ([\d.]+) and ([\d.]+)")
AT_MOST = re.compile(rf"_pct {FIG} <= ([\d.]+)")


def outputs(report: Report) -> dict[str, str]:
    return {
        "text": text.render(report),
        "markdown": markdown.render(report),
        "junit": junit.render(report),
        "github": github.render(report),
    }


def titles(report: Report, captures: list[Capture]) -> list[str]:
    views = charts(report, captures, Selection(kinds=("timeline",)))
    return [f"{c.view.title}\n{c.view.subtitle}" for c in views]  # type: ignore[union-attr]


def check_words(report: Report, captures: list[Capture]) -> None:
    document = json.loads(json_report.render(report))
    formats = outputs(report)
    pictures = titles(report, captures) if report.plans else []
    for name, out in [*formats.items(), *(("picture", p) for p in pictures)]:
        for value, band in FIGURE_THEN_BAND.findall(out):
            assert label(float(value), T) == band, (name, value, band)
        for band, value, capped in VERDICT_THEN_FIGURE.findall(out):
            # a verdict beside its figure is that figure's band, unless the cap is named
            want = ("partial", "real") if capped else (band, band)
            assert (band, label(float(value), T)) == want, (name, band, value)
        for value, low, high in BETWEEN.findall(out):
            assert float(low) < float(value) < float(high), (name, value)
        for value, edge in AT_MOST.findall(out):
            assert float(value) <= float(edge), (name, value)
    check_tables(formats)
    for plan, saved in zip(report.plans, document["plans"], strict=True):
        # the JSON is the figures: its verdict, deciding figure and cause
        assert (saved["verdict"], saved["hidden_pct"]) == (plan.verdict, plan.hidden_pct)
        decided = saved["diagnosed"]["decided_by"]
        for layer in (o for run in saved["per_run"] for o in run["layers"]):
            if layer["verdict"] != "no-evidence":
                assert layer["verdict"] == label(layer["hidden_pct"], T)
        if plan.verdict not in ("real", "partial", "fake"):
            continue
        shown = f"hidden_pct {figure_text(plan.hidden_pct, T)}"
        named = "capped" if decided in ("fake-share", "fake-run") else shown
        assert decided in ("band", "fake-share", "fake-run")
        for name, out in formats.items():
            assert shown in out and named in out, (name, named)  # what decided is named
        # the figure shown first is the one that decides
        header = next(line for line in formats["text"].splitlines() if "  plan  " in line)
        assert header.index("hidden_pct") < header.index("overlap_pct")
        assert "| plan | hidden_pct | verdict | overlap_pct |" in formats["markdown"]
        assert f"{plan.verdict}: {shown}" in formats["junit"]
        assert f"{plan.verdict}: {shown}" in formats["github"]
    for picture in pictures:
        title, subtitle = picture.split("\n")
        if title.endswith("no occurrence to show"):  # nothing judged: the streams instead
            continue
        assert "hidden_pct" in title and "overlap_pct" not in title
        if "overlap_pct" in subtitle:
            assert subtitle.index("hidden_pct") < subtitle.index("overlap_pct")


def table_rows(out: str, header: list[str]) -> list[list[str]]:
    """The rows of every text table whose header starts with the cells ``header``."""
    rows: list[list[str]] = []
    indent = None
    for line in out.splitlines():
        stripped = line.strip()
        depth = len(line) - len(line.lstrip())
        if re.split(r"\s{2,}", stripped)[: len(header)] == header:
            indent = depth
        elif indent is not None and stripped and depth == indent:
            rows.append(re.split(r"\s{2,}", stripped))
        else:
            indent = None
    return rows


def check_tables(formats: dict[str, str]) -> None:
    """A figure and the band word in the same row agree (the plan table: unless the row
    says the cap decided)."""
    plan_rows = table_rows(formats["text"], ["plan", "rank", "hidden_pct", "verdict"])
    layer_rows = table_rows(formats["text"], ["layer", "side window"])
    markdown_rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in formats["markdown"].splitlines()
        if line.startswith("| ") and not line.startswith("| plan ")
    ]
    pairs = [(r[2], r[3]) for r in plan_rows] + [(r[3], r[4]) for r in layer_rows]
    pairs += [
        (r[1], r[2].replace("(provisional)", "").split()[-1])
        for r in markdown_rows
        if len(r) > 3 and r[2]
    ]
    for figure, band in pairs:
        number = re.match(r"\d+\.\d+", figure)
        if number is None or band not in ("real", "partial", "fake"):
            continue
        want = "partial" if "(capped)" in figure else label(float(number.group()), T)
        assert band == want, (figure, band)


def judged(paths: list[Path], plan: Plan, **options: object) -> None:
    captures = [c for path in paths for c in overlap_check.load(path)]
    report = overlap_check.check(captures, Options(plans=(plan,), **options))  # type: ignore[arg-type]
    check_words(report, list(captures))


def plan_for(folder: str) -> Plan:
    answer = SIDE_KINDS.get(folder)
    if answer is None:
        return PLAN
    return Plan(
        answer.plan,
        side=answer.side,
        side_stream=answer.side_stream,
        dominator=answer.dominator,
        side_kind=answer.side_kind,
    )


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture(folder: str) -> None:
    judged([FIXTURES / folder], plan_for(folder))


@pytest.mark.parametrize(
    "folder",
    # the fake-share cap; the window and hidden bands apart; barriers both ways; a lag
    ["median-hides-fake", "split-side-work", "fake-dual-stream", "late-producer"],
)
def test_the_fixtures_that_contradicted_themselves(folder: str) -> None:
    judged([FIXTURES / folder], PLAN)


def one_layer(under_ns: int) -> Built:
    """One layer: D [60, 360] µs, one 250 µs side op of which ``under_ns`` ran under D and
    the rest while the main stream idled (the join Add waits until 610 µs):
    hidden_pct = under_ns / 250_000."""
    start = 360_000 - under_ns
    kernels = [*_dominated(0, (60_000, 360_000), (610_000, 618_000))]
    kernels.append(Kernel(GATE_UP, SIDE, BASE_NS + start, 250_000, "AI_CORE", step=50))
    return Built((Scenario("edge", tuple(kernels)),), Expected(plans=()), Variant(crlf=False))


@pytest.mark.parametrize(
    ("under_ns", "hidden", "band"),
    [
        (124_900, 0.4996, "partial"),  # 124.9 / 250: 0.500 at 3 decimals would read real
        (125_100, 0.5004, "real"),
        (12_400, 0.0496, "fake"),
        (12_600, 0.0504, "partial"),  # 0.050 would read fake
    ],
)
def test_figures_within_a_thousandth_of_a_threshold(
    tmp_path: Path, under_ns: int, hidden: float, band: str
) -> None:
    one_layer(under_ns).write(tmp_path)
    captures = overlap_check.load(tmp_path)
    report = overlap_check.check(captures, Options(plans=(PLAN,)))
    (plan,) = report.plans
    assert plan.hidden_pct == pytest.approx(hidden, abs=1e-12)
    assert plan.verdict == band
    check_words(report, list(captures))


def test_one_warm_run_fake_in_every_layer(tmp_path: Path) -> None:
    # three warm runs of two layers: runs 1 and 2 real (hidden 1.0), run 3 fake in both
    # layers (hidden 0.0): run medians 1, 1, 0, plan median 1.0 (real), but 2 of 6 layers
    # fake is more than 0.25 x 6 = 1.5: partial, and run 3 is named
    runs = [
        Scenario(f"run{i}", tuple(k for t in (0, 600_000) for k in layer(t)))
        for i, layer in enumerate((_real_layer, _real_layer, _fake_layer))
    ]
    Built(tuple(runs), Expected(plans=()), Variant(crlf=False)).write(tmp_path)
    captures = overlap_check.load(tmp_path)
    report = overlap_check.check(captures, Options(plans=(PLAN,), warmup=0, min_runs=3))
    (plan,) = report.plans
    assert (plan.hidden_pct, plan.verdict_counts, plan.verdict) == (1.0, (4, 0, 2), "partial")
    assert plan.diagnosed is not None
    assert (plan.diagnosed.decided_by, plan.diagnosed.fake_runs) == ("fake-run", ("run 3",))
    assert "fake in every layer: run 3" in plan.diagnosis
    check_words(report, list(captures))


def test_hidden_under_the_named_dominator_is_said_so(tmp_path: Path) -> None:
    # D [60, 360] µs; side op A [350, 360] under D, side op B [1000, 1001] while the main
    # stream idles (the join Add waits until 1010): hidden 10 of 11 µs = 0.909, real, all
    # of it under D; the window [350, 1001] overlaps D by 10 of min(651, 300): 0.033, fake
    kernels = [*_dominated(0, (60_000, 360_000), (1_010_000, 1_018_000))]
    kernels += [
        Kernel(GATE_UP, SIDE, BASE_NS + 350_000, 10_000, "AI_CORE", step=50),
        Kernel(GATE_UP, SIDE, BASE_NS + 1_000_000, 1_000, "AI_CORE", step=50),
    ]
    Built((Scenario("under-d", tuple(kernels)),), Expected(plans=()), Variant(crlf=False)).write(
        tmp_path
    )
    captures = overlap_check.load(tmp_path)
    report = overlap_check.check(captures, Options(plans=(PLAN,)))
    (plan,) = report.plans
    assert plan.hidden_pct == pytest.approx(10 / 11, abs=1e-12)
    assert plan.overlap_pct == pytest.approx(10 / 300, abs=1e-12)
    assert plan.verdict == "real"
    assert "10 of 11 µs of side work ran under the named dominator itself" in plan.diagnosis
    assert "not under the named dominator" not in plan.diagnosis
    check_words(report, list(captures))


def test_a_fake_occurrence_is_counted_on_hidden_pct() -> None:
    # split-side-work: the window (1.0) calls its one layer real, hidden_pct 2 / 202 =
    # 0.0099 fake: the layer counts as fake everywhere (per run, plan, barrier search)
    report = overlap_check.check([FIXTURES / "split-side-work"], Options(plans=(PLAN,)))
    (plan,) = report.plans
    (run,) = plan.per_run
    assert (run.overlap_pct, run.hidden_pct) == (1.0, pytest.approx(2 / 202))
    assert (run.fake, plan.fake_occurrences, plan.verdict_counts) == (1, 1, (0, 0, 1))
