"""Verdict bands, diagnosis lines and the gate rules."""

from __future__ import annotations

import pytest

from overlap_check.judge import verdict as judgement
from overlap_check.judge.verdict import diagnosis, gate
from overlap_check.model import (
    BarrierCandidate,
    ContentionInterval,
    CoresResult,
    CoreViolation,
    Options,
    PlanResult,
    RankStreamSummary,
    StreamPair,
    Thresholds,
    Verdict,
)
from overlap_check.model.verdicts import bands, figure_text, label

T = Thresholds()


@pytest.mark.parametrize(
    ("pct", "verdict"),
    [
        (1.0, "real"),
        (0.5, "real"),
        (0.4999, "partial"),
        (0.0501, "partial"),
        (0.05, "fake"),
        (0.0, "fake"),
        (None, "no-evidence"),
    ],
)
def test_label_bands(pct: float | None, verdict: str) -> None:
    assert label(pct, T) == verdict


def plan(verdict: Verdict, pct: float | None, rank: int = 0) -> PlanResult:
    return PlanResult("moe", rank, verdict, pct, False, 3, 2, hidden_pct=pct)


def decide(plans: list[PlanResult], **kw: object):  # type: ignore[no-untyped-def]
    options = Options(**kw)  # type: ignore[arg-type]
    return gate(plans, [], [], None, options, use_plans=True)


@pytest.mark.parametrize(
    ("fail_on", "failing"),
    [
        ("fake", {"fake", "not-split", "no-evidence"}),
        ("partial", {"fake", "partial", "not-split", "no-evidence"}),
        ("never", {"no-evidence"}),
    ],
)
def test_fail_on(fail_on: str, failing: set[str]) -> None:
    for verdict, pct in [
        ("real", 0.9),
        ("partial", 0.3),
        ("fake", 0.0),
        ("not-split", 0.0),
        ("no-evidence", None),
    ]:
        decision = decide([plan(verdict, pct)], fail_on=fail_on)  # type: ignore[arg-type]
        assert decision.passed == (verdict not in failing), (fail_on, verdict)


def test_any_failing_rank_fails_and_the_worst_is_named() -> None:
    decision = decide([plan("real", 0.9, 0), plan("fake", 0.01, 1), plan("fake", 0.03, 2)])
    assert not decision.passed
    assert decision.worst_rank == 1
    assert decision.reasons == (
        "plan moe, rank 1: verdict fake (hidden_pct 0.010) fails the gate (--fail-on partial)",
        "plan moe, rank 2: verdict fake (hidden_pct 0.030) fails the gate (--fail-on partial)",
    )


def test_strict_fails_provisional_ranks() -> None:
    ok = [plan("real", 0.9)]
    assert gate(
        ok, [], [], None, Options(), provisional_ranks=[(0, "fewer than 5 runs")], use_plans=True
    ).passed
    strict = gate(
        ok,
        [],
        [],
        None,
        Options(strict=True),
        provisional_ranks=[(0, "fewer than 5 runs")],
        use_plans=True,
    )
    assert not strict.passed
    assert strict.reasons == ("rank 0: provisional result (fewer than 5 runs) and --strict",)


def _violation() -> CoreViolation:
    return CoreViolation(3, 0, 3, "SharedExpert", "AI_CORE", 24, 0, 12, "aicore", 0)


def test_core_violations_fail_and_contention_only_on_request() -> None:
    ok = [plan("real", 0.9)]
    violations = CoresResult(device=None, violations=(_violation(),))
    assert not gate(ok, [], [], violations, Options(), use_plans=True).passed
    contention = CoresResult(
        device=None,
        contention=(ContentionInterval(3, 0, 0, 100, "aicore", 36, 24),),
        over_limit_ns=100,
    )
    assert gate(ok, [], [], contention, Options(), use_plans=True).passed
    flagged = gate(ok, [], [], contention, Options(fail_on_contention=True), use_plans=True)
    assert not flagged.passed
    assert "contention" in flagged.reasons[0]


def test_stream_level_gate() -> None:
    ranks = [RankStreamSummary(0, 2, 1.0, 0.0, 100.0), RankStreamSummary(1, 2, 1.0, 0.0, 100.0)]
    pairs = [StreamPair(0, 2, 3, 0.0, 0.0, "fake", False)]
    decision = gate([], pairs, ranks, None, Options(), use_plans=False)
    # Rank 0's pair is fake; rank 1 has a single compute stream: nothing to pair, it passes
    assert decision.reasons == (
        "rank 0: stream 3 vs main stream 2: verdict fake (busy-time overlap_pct 0.000) fails "
        "the gate (--fail-on partial)",
    )
    never = gate([], pairs, ranks, None, Options(fail_on="never"), use_plans=False)
    assert never.passed
    strict = gate([], pairs, ranks, None, Options(fail_on="never", strict=True), use_plans=False)
    assert strict.reasons == (
        "rank 1: only stream 2 ran compute kernels and no plan was given "
        "(--side/--dominator or a config), with --strict",
    )
    # no compute kernel at all: no evidence, whatever --fail-on
    empty = [RankStreamSummary(0, None, 0.0, 0.0, 0.0)]
    nothing = gate([], [], empty, None, Options(fail_on="never"), use_plans=False)
    assert nothing.reasons == ("rank 0: no evidence: no compute kernel at all",)


def test_diagnosis_lines() -> None:
    assert diagnosis(
        "not-split", 0.0, T, placement=["12 of 12 side ops ran on stream 2, the dominator's stream"]
    ).startswith(
        "3a logical split failed: 12 of 12 side ops ran on stream 2, the dominator's stream;"
    )
    cast = BarrierCandidate("Cast", 2, 0, 40_000, 3, 1, 500, occurrences=60)
    fake = diagnosis("fake", 0.0, T, barriers=[cast], fake_occurrences=60)
    assert fake.startswith("3b fake parallelism: overlap_pct 0.000 <= 0.05")
    assert (
        "Cast on stream 2 starts 0.500 µs after side work ended before the dominator, after a "
        "40.000 µs idle gap" in fake
    )
    assert "(in 60 of 60 fake occurrences)" in fake
    assert fake.endswith(
        "put that pre-computation in the stream-switch block, the wait after the dominator"
    )
    assert diagnosis("partial", 0.3, T).startswith("3b partial overlap: overlap_pct 0.300")
    real = diagnosis("real", 0.9, T, contention_ns=1_500)
    assert real.startswith("3c real overlap (overlap_pct 0.900)")
    assert "block demand exceeded the device cores for at least 1.500 µs" in real
    assert diagnosis("no-evidence", None, T, no_evidence="no kernel").startswith(
        "no evidence: no kernel"
    )


def test_one_band_rule_for_figures_and_arrays() -> None:
    # >= real (0.5) real, <= fake (0.05) fake, between partial; nothing judged: no-evidence
    values = [0.5, 0.49, 0.05, 0.06, float("nan")]
    want = ["real", "partial", "fake", "partial", "no-evidence"]
    assert bands(values, T).tolist() == want
    assert [label(v, T) for v in (0.5, 0.49, 0.05, 0.06, None)] == want


def test_printed_digits_never_cross_a_threshold() -> None:
    # 0.4996 rounds to 0.500 at 3 decimals, which would read real: 4 decimals and the edge
    assert figure_text(0.4996, T) == "0.4996 (just under 0.5)"
    assert figure_text(0.0502, T) == "0.0502 (just over 0.05)"  # 0.050 would read fake
    assert figure_text(0.04996, T) == "0.050"  # 0.04996 and 0.050 are both fake
    assert figure_text(0.5, T) == "0.500" and figure_text(None, T) == "n/a"
    # closer than 1e-9: cut toward the value's band (0.499 is partial, 0.051 partial)
    assert figure_text(0.5 - 1e-11, T) == "0.499 (just under 0.5)"
    assert figure_text(0.05 + 1e-11, T) == "0.051 (just over 0.05)"


def test_decide_names_what_decided() -> None:
    # the band of the median, when the fake layers are few: 1 of 5 fake <= 0.25 x 5
    assert judgement.decide(0.9, [("run 3", (4, 0, 1))], T) == ("real", "band", "real", ())
    assert judgement.decide(0.3, [("run 3", (0, 2, 0))], T) == ("partial", "band", "partial", ())
    # 3 of 6 fake > 0.25 x 6 = 1.5: the median 0.5 is real, the cap makes it partial
    assert judgement.decide(0.5, [("run 3", (3, 0, 3))], T) == ("partial", "fake-share", "real", ())
    # runs 3 and 4 real, run 5 fake in both its layers: 2 of 6 > 1.5, and run 5 is named
    warm = [("run 3", (2, 0, 0)), ("run 4", (2, 0, 0)), ("run 5", (0, 0, 2))]
    assert judgement.decide(1.0, warm, T) == ("partial", "fake-run", "real", ("run 5",))
    assert judgement.decide(0.0, [("run 3", (0, 0, 2))], T) == (
        "fake",
        "band",
        "fake",
        (),
    )  # no cap
    assert judgement.decide(None, [], T) == ("no-evidence", "no-evidence", "no-evidence", ())
