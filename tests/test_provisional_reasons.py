"""Why a result is provisional is data (Report.provisional_reasons), and each format says it.

Three causes, each named in its own words: fewer runs than --min-runs, cold runs judged
because the warm-up had to shrink, and rows lost to damage. A damaged or cold-judged
capture must never read "judged on fewer than 1 runs".
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from overlap_check import check
from overlap_check.model import Options, Plan
from overlap_check.report import markdown, text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PLAN = Plan(name="SharedExpert", side="SharedExpert", dominator="GroupedMatmul")


def test_fewer_runs_than_min_runs_is_named() -> None:
    # split-side-work holds 1 run; the method asks for 5 (the default --min-runs)
    report = check([FIXTURES / "split-side-work"], Options(plans=(PLAN,)))
    assert report.provisional_reasons == ("judged on fewer than 5 runs (--min-runs)",)


def test_a_cold_run_judged_is_not_called_too_few_runs() -> None:
    # 1 run with --min-runs 1 is enough runs, but the 2 warm-up runs shrink to 0 (at least
    # one run must be judged), so the one run judged is a cold one
    report = check([FIXTURES / "split-side-work"], Options(plans=(PLAN,), min_runs=1))
    reason = "cold runs judged: warm-up reduced from 2 to 0"
    assert report.provisional_reasons == (reason,)
    assert text.render(report).splitlines()[0].startswith(f"PROVISIONAL: {reason};")
    assert f"**Provisional**: {reason};" in markdown.render(report)
    assert "fewer than 1 runs" not in text.render(report) + markdown.render(report)


def test_rows_lost_to_damage_are_named() -> None:
    # malformed: one run, a kernel_details.csv row with a field missing; warm-up 0 and
    # --min-runs 1, so the run count makes nothing provisional: the damage alone does
    report = check([FIXTURES / "malformed"], Options(min_runs=1, warmup=0))
    assert report.provisional_reasons == ("malformed rows were skipped or an export is incomplete",)
    assert report.provisional_text == report.provisional_reasons[0]


def test_a_report_without_reasons_stood_on_its_run_count() -> None:
    # a report written before the causes were recorded reads back without them
    report = check([FIXTURES / "split-side-work"], Options(plans=(PLAN,)))
    older = replace(report, provisional_reasons=())
    assert older.provisional_text == "judged on fewer than 5 runs (--min-runs)"


def test_a_result_with_nothing_judged_still_says_it_is_provisional() -> None:
    # one compute stream and no plan: no verdict, but the rank's figures (and the --strict
    # gate) stand on 1 run of the 5 the method asks for: the banner must say so, as the gate
    # and the notes do
    one = sorted((FIXTURES / "slower-single-stream").iterdir())[0]
    report = check([one], Options())
    assert (report.plans, report.stream_pairs) == ((), ())
    assert report.provisional_reasons == ("judged on fewer than 5 runs (--min-runs)",)
    assert report.provisional
    assert text.render(report).splitlines()[0].startswith("PROVISIONAL: judged on fewer than 5")
    assert "**Provisional**: judged on fewer than 5 runs" in markdown.render(report)
    strict = check([one], Options(strict=True))
    assert any("provisional result (fewer than 5 runs)" in r for r in strict.gate_reasons)
    # its five runs: nothing provisional, no banner
    enough = check([FIXTURES / "slower-single-stream"], Options())
    assert not enough.provisional and not text.render(enough).startswith("PROVISIONAL")


def test_the_strict_gate_and_the_note_give_the_same_cause() -> None:
    # cold-judged (1 run, --min-runs 1, the warm-up of 2 shrunk to 0): the gate's reason and
    # the rank's note never call 1 run "fewer than 1"
    one = [FIXTURES / "split-side-work"]
    cold = check(one, Options(plans=(PLAN,), min_runs=1, strict=True))
    reason = (
        "rank 0: provisional result (cold runs judged: warm-up reduced from 2 to 0) and --strict"
    )
    assert reason in cold.gate_reasons
    assert "rank 0: provisional: 1 run; 0 discarded as warm-up (reduced from 2), 1 judged" in (
        cold.notes
    )
    assert "fewer than 1" not in " ".join(cold.gate_reasons + cold.notes)
    # two runs of the same capture: plural again; the warm-up of 2 shrinks to 1, 2 - 1 judged
    two = check(one * 2, Options(plans=(PLAN,)))
    note = "rank 0: provisional: 2 runs (the method asks for at least 5); 1 discarded as warm-up"
    assert f"{note} (reduced from 2), 1 judged" in two.notes
    # judged per step, the unit is steps in the banner and in the gate alike
    steps = check(one, Options(plans=(PLAN,), strict=True, per="step"))
    assert steps.provisional_reasons == ("judged on fewer than 5 steps (--min-runs)",)
    assert "rank 0: provisional result (fewer than 5 steps) and --strict" in steps.gate_reasons


def test_the_skipped_rows_note_names_their_lines() -> None:
    from overlap_check.judge.judgement import _capture_notes
    from overlap_check.readers import load

    report = check([FIXTURES / "malformed"], Options(min_runs=1, warmup=0))
    (run,) = report.runs
    assert run.skipped_rows == 1 and len(run.skipped_lines) == 1
    (note,) = [n for n in report.notes if "malformed row(s) skipped" in n]
    assert note.endswith(f"kernel_details.csv (line(s) {run.skipped_lines[0]})")
    # more than five: the first five, then "...": the JSON's skipped_lines has them all
    (capture,) = load(sorted((FIXTURES / "malformed").iterdir())[0])
    # the skipped row is an 8.290 µs Add alone on the timeline: 802.080 - 8.290 = 793.790 µs
    assert capture.incomplete is not None
    assert "covering 793.790 µs where step_trace_time.csv counts 802.080 µs" in capture.incomplete
    many = replace(
        capture, skipped_rows=7, skipped_lines=(3, 5, 8, 13, 21, 34, 55), incomplete=None
    )
    (listed,) = _capture_notes("rank 0 run 1", many)
    assert listed.startswith("rank 0 run 1: 7 malformed row(s) skipped in ")
    assert listed.endswith(" (line(s) 3, 5, 8, 13, 21 ...)")
