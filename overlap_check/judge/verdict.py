"""Labels, the diagnosis line and the gate decision.

Labels: ``overlap_pct >= real`` real, ``<= fake`` fake, in between partial;
``not-split`` when placement failed (3a) and ``no-evidence`` when nothing
could be judged.

Diagnosis follows the method's order: 3a (logical split failed: side ops not
on a side stream) → 3b (fake or partial overlap on the timeline; barrier
candidates named) → 3c (overlap is real; if wall time did not drop, look at
contention, tails and core limits).

Gate rules (``--fail-on``):

- ``fake`` (default): plan verdicts fake, not-split and no-evidence fail;
- ``partial``: partial fails as well;
- ``never``: no plan label fails the gate except ``no-evidence``.

``no-evidence`` always fails: an analysis that found nothing to judge (no side
ops, no dominator, no occurrence, or without a plan no compute kernel at all)
must never read as a pass. Without a plan, a rank with a single compute stream
(beside it at most helper streams, hiding.helper_streams) has nothing to pair:
the report says so and it passes, unless ``strict``. Without plans the
stream pairs are judged by the
same rule (a pair can only be real, partial or fake). The gate also fails on
core-limit violations, on contention only with ``fail_on_contention``, and on a
provisional result with ``strict``. Every rank is judged on its own; the gate
fails when any rank fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from overlap_check.judge.advice import CAUSE_KINDS, fix_steps
from overlap_check.model import (
    BarrierCandidate,
    CoresResult,
    Diagnosis,
    Evidence,
    ExecutionPath,
    FailOn,
    Options,
    PlanResult,
    RankStreamSummary,
    Report,
    Stage,
    StreamPair,
    Thresholds,
    Verdict,
    rank_text,
)

FAILING: dict[FailOn, frozenset[str]] = {  # every FailOn value (tests/test_verdict.py)
    "fake": frozenset({"fake", "not-split", "no-evidence"}),
    "partial": frozenset({"fake", "partial", "not-split", "no-evidence"}),
    "never": frozenset({"no-evidence"}),
}


def fails(verdict: str, fail_on: FailOn) -> bool:
    """Whether a plan or stream-pair verdict fails the gate under ``--fail-on``."""
    return verdict in FAILING[fail_on]


def item_failures(
    verdict: str, provisional: bool, fail_on: FailOn, strict: bool, min_runs: int
) -> tuple[str, ...]:
    """Why one plan or stream pair fails the gate, in words; empty when it passes."""
    reasons = []
    if verdict == "no-evidence":
        reasons.append("no evidence: nothing could be judged, which never passes")
    elif fails(verdict, fail_on):
        reasons.append(f"verdict {verdict} fails the gate (--fail-on {fail_on})")
    if provisional and strict:
        reasons.append(
            f"provisional (fewer than {min_runs} runs, or malformed rows skipped) with --strict"
        )
    return tuple(reasons)


def mark_gate(report: Report) -> Report:
    """The report with each plan and stream pair marked by the gate (``gate_failures``),
    under the report's own ``fail_on`` / ``strict`` / ``min_runs``: renderers read it."""

    def failures(verdict: str, provisional: bool) -> tuple[str, ...]:
        return item_failures(verdict, provisional, report.fail_on, report.strict, report.min_runs)

    return replace(
        report,
        plans=tuple(
            replace(p, gate_failures=failures(p.verdict, p.provisional)) for p in report.plans
        ),
        stream_pairs=tuple(
            replace(p, gate_failures=failures(p.verdict, p.provisional))
            for p in report.stream_pairs
        ),
    )


BARRIER_HINT = "pin that pre-computation inside the stream-switch block"
# barrier (b): the side work's input came from a main op GE placed after the dominator
PRODUCER_HINT = (
    "make that producer run before the dominator (compute it earlier, or move it into the "
    "stream-switch block) so the side work can start under the dominator"
)


def label(overlap_pct: float | None, thresholds: Thresholds) -> Verdict:
    """The verdict band of an overlap fraction; None (nothing judged) is no-evidence."""
    if overlap_pct is None:
        return "no-evidence"
    if overlap_pct >= thresholds.real:
        return "real"
    if overlap_pct <= thresholds.fake:
        return "fake"
    return "partial"


def _us(ns: float) -> str:
    return f"{ns / 1000:.3f} µs"


def barrier_phrase(candidate: BarrierCandidate, fake_occurrences: int) -> str:
    """The barrier and which way the wait went (docs/hidden-fraction.md)."""
    seen = f"in {candidate.occurrences} of {fake_occurrences} fake occurrences"
    if candidate.waited == "side":
        return (
            f"the side stream waited for {candidate.name} ({candidate.chain}) on stream "
            f"{candidate.stream_id}: the side window starts {_us(candidate.lag_ns)} after it "
            f"ended, after the dominator started, with the side stream idle ({seen})"
        )
    chain = f" (chain {candidate.chain} up to the dominator)" if candidate.chain else ""
    return (
        f"{candidate.name}{chain} on stream {candidate.stream_id} starts "
        f"{_us(candidate.after_side_end_ns)} after the side window ends, after a "
        f"{_us(candidate.gap_ns)} idle gap on the main stream: the main stream waited for "
        f"the side stream ({seen})"
    )


def barrier_hint(candidate: BarrierCandidate) -> str:
    """The advice that matches which way the wait went."""
    return PRODUCER_HINT if candidate.waited == "side" else BARRIER_HINT


def diagnosis(
    verdict: Verdict,
    overlap_pct: float | None,
    thresholds: Thresholds,
    *,
    placement: Sequence[str] = (),
    barriers: Sequence[BarrierCandidate] = (),
    fake_occurrences: int = 0,
    no_evidence: str | None = None,
    contention_ns: int = 0,
    figure: str = "overlap_pct",
) -> str:
    """One line saying which failure mode (3a / 3b / 3c) applies and what to do next.

    ``overlap_pct``: the figure the verdict follows, named ``figure`` in the text."""
    if verdict == "no-evidence":
        reason = no_evidence or "nothing to judge"
        return f"no evidence: {reason}; check the plan's regexes and streams"
    if verdict == "not-split":
        evidence = "; ".join(placement)
        return (
            f"3a logical split failed: {evidence}; put these ops inside the stream-switch block "
            "(npu_stream_switch / torch.npu.stream) and check the graph did not fold them back"
        )
    pct = f"{overlap_pct:.3f}" if overlap_pct is not None else "n/a"
    if verdict == "fake":
        text = (
            f"3b fake parallelism: {figure} {pct} <= {thresholds.fake}; "
            "the streams ran one after the other"
        )
        if barriers:
            phrase = barrier_phrase(barriers[0], fake_occurrences)
            text += f"; barrier candidate: {phrase} - {barrier_hint(barriers[0])}"
        else:
            text += (
                "; no barrier candidate found either way (no main op waited ahead of the "
                "dominator, the side work waited for no main op placed after it)"
            )
        return text
    if verdict == "partial":
        text = (
            f"3b partial overlap: {figure} {pct} is between {thresholds.fake} and "
            f"{thresholds.real}; the split needs redesign "
            "(longer side work, a longer or different dominator)"
        )
        if barriers:
            first = barriers[0]
            name = first.name if first.waited == "main" else f"{first.name} (the side waited)"
            text += f"; barrier candidate in the fake occurrences: {name} - {barrier_hint(first)}"
        return text
    text = (
        f"3c real overlap ({figure} {pct}); if wall time did not drop, look at contention "
        "(block demand vs device cores), tails and core limits (limit_core_num)"
    )
    if contention_ns > 0:
        text += (
            f"; main + side block demand exceeded the device cores for at least "
            f"{_us(contention_ns)} over the warm runs (see Cores)"
        )
    return text


STAGES: dict[Verdict, Stage | None] = {
    "not-split": "3a",
    "fake": "3b",
    "partial": "3b",
    "real": "3c",
    "no-evidence": None,
}


def diagnose(
    verdict: Verdict,
    path: ExecutionPath | None,
    *,
    barriers: Sequence[BarrierCandidate] = (),
    fake_occurrences: int = 0,
    evidence: Sequence[Evidence] = (),
    placement: Sequence[str] = (),
    no_evidence: str | None = None,
) -> Diagnosis:
    """The diagnosis as data: the stage and cause of ``verdict``, the measured evidence
    (a barrier at 3b; the causes ``evidence`` gives at partial and real, largest first;
    a band mismatch at any verdict)
    and the fix steps for ``path`` (advice.fix_steps)."""
    found: list[Evidence] = []
    if verdict == "no-evidence":
        found.append(Evidence("nothing-judged", no_evidence or "nothing to judge"))
    if verdict == "not-split":
        found += [Evidence("placement", text) for text in placement]
    if verdict in ("fake", "partial") and barriers:
        top = barriers[0]
        found.append(Evidence("barrier", barrier_phrase(top, fake_occurrences), top.gap_ns))
    if verdict in ("partial", "real"):
        causes = [e for e in evidence if e.kind != "band-mismatch"]
        found += sorted(causes, key=lambda e: -(e.size_ns or 0))
    found += [e for e in evidence if e.kind == "band-mismatch"]
    cause = verdict  # the causes of model.Cause that a verdict alone names
    return Diagnosis(
        stage=STAGES[verdict],
        cause=cause,
        path=path,
        evidence=tuple(found),
        fix=fix_steps(cause, path, found),
    )


def with_cause(found: Diagnosis, cause: Evidence) -> Diagnosis:
    """``found`` with one more measured cause (a stage after the judgement measured it,
    e.g. against a reference): placed as :func:`diagnose` places causes, largest first
    and before a band mismatch, with the fix steps redone. Only at partial and real,
    the verdicts whose causes are measured; otherwise ``found`` unchanged."""
    if found.cause not in ("partial", "real"):
        return found
    size = cause.size_ns or 0
    evidence = list(found.evidence)
    at = next(
        (
            i
            for i, e in enumerate(evidence)
            if e.kind == "band-mismatch" or (e.kind in CAUSE_KINDS and (e.size_ns or 0) < size)
        ),
        len(evidence),
    )
    evidence.insert(at, cause)
    return replace(
        found, evidence=tuple(evidence), fix=fix_steps(found.cause, found.path, evidence)
    )


@dataclass(frozen=True)
class GateDecision:
    passed: bool
    reasons: tuple[str, ...]
    worst_rank: int | None


def _fmt(pct: float | None) -> str:
    return "n/a" if pct is None else f"{pct:.3f}"


def gate(
    plans: Sequence[PlanResult],
    stream_pairs: Sequence[StreamPair],
    ranks: Sequence[RankStreamSummary],
    cores: CoresResult | None,
    options: Options,
    *,
    provisional_ranks: Sequence[int | None] = (),
    damaged_ranks: Sequence[int | None] = (),
    use_plans: bool,
) -> GateDecision:
    """Decide pass/fail and say why in words, one reason per failing item."""
    reasons: list[str] = []
    # (figure, rank) of every failing item, to name the worst rank.
    failed: list[tuple[float, int | None]] = []
    if use_plans:
        for plan in plans:
            if fails(plan.verdict, options.fail_on):
                reasons.append(
                    f"plan {plan.name}, rank {rank_text(plan.rank)}: {_plan_reason(plan)}"
                )
                failed.append((plan.hidden_pct if plan.hidden_pct is not None else -1.0, plan.rank))
    else:
        paired = {pair.rank for pair in stream_pairs}
        for summary in ranks:
            if summary.rank in paired:
                continue
            if summary.main_stream is None:
                reasons.append(
                    f"rank {rank_text(summary.rank)}: no evidence: no compute kernel at all"
                )
                failed.append((-1.0, summary.rank))
            elif options.strict:  # one compute stream: nothing to pair, a pass unless strict
                helpers = ", ".join(map(str, summary.helper_streams))
                reasons.append(
                    f"rank {rank_text(summary.rank)}: only stream {summary.main_stream} ran "
                    f"compute kernels{f' (beside helper stream(s) {helpers})' if helpers else ''}"
                    " and no plan was given (--side/--dominator or a config), with --strict"
                )
                failed.append((-1.0, summary.rank))
        for pair in stream_pairs:
            if fails(pair.verdict, options.fail_on):
                reasons.append(
                    f"rank {rank_text(pair.rank)}: stream {pair.side} vs main stream {pair.main}: "
                    f"{pair.verdict} (busy-time overlap_pct {_fmt(pair.overlap_pct)})"
                )
                failed.append((pair.overlap_pct, pair.rank))
    violations = 0 if cores is None else max(cores.violation_count, len(cores.violations))
    if cores is not None and violations:
        reasons.append(f"core limits: {violations} kernel(s) over their configured core limit")
    intervals = 0 if cores is None else max(cores.contention_count, len(cores.contention))
    if cores is not None and intervals and options.fail_on_contention:
        reasons.append(
            f"contention: {intervals} interval(s) where concurrent block demand "
            f"exceeds the device cores ({cores.over_limit_ns / 1000:.3f} µs in all)"
        )
    if options.strict:
        for rank in provisional_ranks:
            reasons.append(
                f"rank {rank_text(rank)}: provisional result (fewer than {options.min_runs} runs) "
                "and --strict"
            )
        for rank in damaged_ranks:
            reasons.append(
                f"rank {rank_text(rank)}: provisional result (malformed rows skipped or an "
                "incomplete export) and --strict"
            )
    worst_rank = min(failed, key=lambda item: item[0])[1] if failed else None
    return GateDecision(passed=not reasons, reasons=tuple(reasons), worst_rank=worst_rank)


def _plan_reason(plan: PlanResult) -> str:
    if plan.verdict == "no-evidence":
        judged = plan.diagnosed.evidence if plan.diagnosed is not None else ()
        reasons = [e.text for e in judged if e.kind == "nothing-judged"]
        return f"no evidence: {reasons[0]}" if reasons else "no evidence"
    if plan.verdict == "not-split":
        return f"not-split ({plan.placement[0]})" if plan.placement else "not-split"
    return f"{plan.verdict} ({plan.decided_by} {_fmt(plan.hidden_pct)})"


def worst_rank(plans: Sequence[PlanResult], stream_pairs: Sequence[StreamPair]) -> int | None:
    """The rank with the lowest figure (plans first, else stream pairs); None with one rank."""
    figures: list[tuple[float, int | None]] = [
        (p.hidden_pct if p.hidden_pct is not None else -1.0, p.rank) for p in plans
    ] or [(p.overlap_pct, p.rank) for p in stream_pairs]
    if len({rank for _, rank in figures}) < 2:
        return None
    return min(figures, key=lambda item: item[0])[1]
