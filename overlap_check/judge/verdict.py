"""Every judgement, each in one place: a plan's verdict and what decided it (:func:`decide`),
the diagnosis (:func:`diagnose`, in one line :func:`diagnosis`) and the gate (:func:`failures`
builds every plan's and pair's reasons; :func:`gate`, :func:`mark_gate`). The gate's rules:
docs/contract.md, "The gate"; the diagnosis: docs/advice.md."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from overlap_check.judge.advice import fix_steps
from overlap_check.model import (
    FAKE_SHARE,
    BarrierCandidate,
    CoresResult,
    DecidedBy,
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
from overlap_check.model.verdicts import (
    CAUSE_KINDS,
    _us,
    barrier_hint,
    barrier_phrase,
    capped,
    decided_text,
    figure_text,
    label,
)

FAILING: dict[FailOn, frozenset[str]] = {  # every FailOn value (tests/test_verdict.py)
    "fake": frozenset({"fake", "not-split", "no-evidence"}),
    "partial": frozenset({"fake", "partial", "not-split", "no-evidence"}),
    "never": frozenset({"no-evidence"}),
}


def failures(item: PlanResult | StreamPair, by: Report | Options, strict: bool) -> tuple[str, ...]:
    """Why one plan or stream pair fails the gate under ``by``'s settings (empty: it passes),
    naming what decided its verdict: the one place gate reasons are built."""
    thresholds, fail_on = by.thresholds, by.fail_on
    if isinstance(item, StreamPair):
        figure = f"busy-time overlap_pct {figure_text(item.overlap_pct, thresholds)}"
        findings: Sequence[str] = ()
    else:
        figure, findings = decided_text(item, thresholds), item.findings
    reasons = []
    if item.verdict == "no-evidence":
        why = f": {figure}" if figure else ""
        reasons.append(f"no evidence{why}: nothing could be judged, which never passes")
    elif item.verdict in FAILING[fail_on]:
        why = f" ({figure})" if figure else ""
        reasons.append(f"verdict {item.verdict}{why} fails the gate (--fail-on {fail_on})")
    if not by.allow_missing_wait:
        reasons += [
            f"missing wait, a data race (--allow-missing-wait accepts it): {finding}"
            for finding in findings
        ]
    if item.provisional and strict:
        reasons.append(
            f"provisional (fewer than {by.min_runs} runs, or malformed rows skipped) with --strict"
        )
    return tuple(reasons)


def mark_gate(report: Report) -> Report:
    """Each plan and stream pair marked by the gate under the report's own settings."""
    strict = report.strict
    plans = [replace(p, gate_failures=failures(p, report, strict)) for p in report.plans]
    pairs = [replace(p, gate_failures=failures(p, report, strict)) for p in report.stream_pairs]
    return replace(report, plans=tuple(plans), stream_pairs=tuple(pairs))


def decide(
    figure: float | None,
    warm: Sequence[tuple[str, tuple[int, int, int]]],
    thresholds: Thresholds,
    fake_share: float = FAKE_SHARE,
) -> tuple[Verdict, DecidedBy, Verdict, tuple[str, ...]]:
    """A judged plan's verdict, what decided it, the band before the cap and the warm samples
    fake in every layer. The band of ``figure`` (warm median hidden_pct), capped at partial
    (a median hides fake layers: 3 of 6 fake is 0.5). ``warm``: (name, band counts) each."""
    band = label(figure, thresholds)
    verdict = capped(band, band_counts(warm), fake_share)
    if verdict == band:
        return verdict, "band" if band != "no-evidence" else "no-evidence", band, ()
    fake_runs = tuple(name for name, c in warm if sum(c) and c[2] == sum(c))
    return verdict, "fake-run" if fake_runs else "fake-share", band, fake_runs


def band_counts(warm: Sequence[tuple[str, tuple[int, int, int]]]) -> tuple[int, int, int]:
    """The judged layers per band (real, partial, fake) over the warm samples."""
    real, partial, fake = (sum(c[band] for _, c in warm) for band in range(3))
    return real, partial, fake


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
    decided_by: DecidedBy = "band",
    counts: tuple[int, int, int] = (0, 0, 0),
    fake_runs: Sequence[str] = (),
    fake_share: float = FAKE_SHARE,
) -> str:
    """One line: the failure mode (3a / 3b / 3c), what decided it and what to do next."""
    if verdict == "no-evidence":
        reason = no_evidence or "nothing to judge"
        return f"no evidence: {reason}; check the plan's regexes and streams"
    if verdict == "not-split":
        evidence = "; ".join(placement)
        return (
            f"3a logical split failed: {evidence}; put these ops inside the stream-switch block "
            "(npu_stream_switch / torch.npu.stream) and check the graph did not fold them back"
        )
    pct = figure_text(overlap_pct, thresholds)
    if verdict == "partial" and decided_by in ("fake-share", "fake-run"):
        every = f"; fake in every layer: {', '.join(fake_runs)}" if fake_runs else ""
        text = (
            f"3b partial overlap, capped by its fake layers: {figure} {pct} is "
            f"{label(overlap_pct, thresholds)} on its own, but {counts[2]} of {sum(counts)} "
            f"judged warm layers are fake (more than fake_share {fake_share:g} of them{every}); "
            "the median hides them: fix what made those layers fake"
        )
        if barriers:
            text += f"; barrier in the fake layers: {barrier_phrase(barriers[0], fake_occurrences)}"
        return text
    if verdict == "fake":
        text = (
            f"3b fake parallelism: {figure} {pct} <= {thresholds.fake:g}; "
            "the streams ran one after the other"
        )
        if barriers:
            text += f"; barrier candidate: {barrier_phrase(barriers[0], fake_occurrences)}"
        else:
            text += (
                "; no barrier candidate found either way (no main op waited ahead of the "
                "dominator, the side work waited for no main op placed after it)"
            )
        return text
    if verdict == "partial":
        text = (
            f"3b partial overlap: {figure} {pct} is between {thresholds.fake:g} and "
            f"{thresholds.real:g}; the split needs redesign "
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


# docs/method.md's failure mode of each verdict
STAGES: dict[Verdict, Stage | None] = dict(fake="3b", partial="3b", real="3c")
STAGES |= {"not-split": "3a", "no-evidence": None}


def diagnose(
    verdict: Verdict,
    path: ExecutionPath | None,
    *,
    barriers: Sequence[BarrierCandidate] = (),
    fake_occurrences: int = 0,
    evidence: Sequence[Evidence] = (),
    placement: Sequence[str] = (),
    no_evidence: str | None = None,
    decided_by: DecidedBy = "band",
    band: Verdict | None = None,
    fake_runs: Sequence[str] = (),
) -> Diagnosis:
    """The diagnosis as data (docs/advice.md). A partial capped by its fake layers is fixed
    like a fake plan: its causes are those layers', not a short side window."""
    found: list[Evidence] = []
    if verdict == "no-evidence":
        found.append(Evidence("nothing-judged", no_evidence or "nothing to judge"))
    if verdict == "not-split":
        found += [Evidence("placement", text) for text in placement]
    if verdict in ("fake", "partial") and barriers:
        top = barriers[0]
        phrase = barrier_phrase(top, fake_occurrences, hint=False)
        found.append(Evidence("barrier", phrase, top.gap_ns))
    capped_by_fakes = decided_by in ("fake-share", "fake-run")
    if verdict in ("partial", "real") and not capped_by_fakes:
        causes = [e for e in evidence if e.kind != "band-mismatch"]
        found += sorted(causes, key=lambda e: -(e.size_ns or 0))
    found += [e for e in evidence if e.kind == "band-mismatch"]
    waited = barriers[0].waited if barriers else None
    return Diagnosis(
        stage=STAGES[verdict],
        cause=verdict,  # the causes of model.Cause that a verdict alone names
        path=path,
        evidence=tuple(found),
        fix=fix_steps("fake" if capped_by_fakes else verdict, path, found, waited=waited),
        decided_by=decided_by,
        band=band,
        fake_runs=tuple(fake_runs),
    )


def with_cause(found: Diagnosis, cause: Evidence) -> Diagnosis:
    """``found`` with a later-measured cause placed by size (at partial and real by band)."""
    if found.cause not in ("partial", "real") or found.decided_by != "band":
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


def gate(
    plans: Sequence[PlanResult],
    stream_pairs: Sequence[StreamPair],
    ranks: Sequence[RankStreamSummary],
    cores: CoresResult | None,
    options: Options,
    *,
    provisional_ranks: Sequence[tuple[int | None, str]] = (),  # (rank, why)
    damaged_ranks: Sequence[int | None] = (),
    use_plans: bool,
) -> GateDecision:
    """Pass/fail and why, one reason per failing item."""
    reasons: list[str] = []
    # (figure, rank) of every failing item, to name the worst rank.
    failed: list[tuple[float, int | None]] = []
    if use_plans:
        for plan in plans:
            found = failures(plan, options, strict=False)  # --strict's mark: once per rank
            where = f"plan {plan.name}, rank {rank_text(plan.rank)}"
            reasons += [f"{where}: {reason}" for reason in found]
            if found:
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
            found = failures(pair, options, strict=False)
            where = f"rank {rank_text(pair.rank)}: stream {pair.side} vs main stream {pair.main}"
            reasons += [f"{where}: {reason}" for reason in found]
            if found:
                failed.append((pair.overlap_pct, pair.rank))
    violations = 0 if cores is None else max(cores.violation_count, len(cores.violations))
    if violations:
        reasons.append(f"core limits: {violations} violation(s) (a kernel per core kind)")
    intervals = 0 if cores is None else max(cores.contention_count, len(cores.contention))
    if cores is not None and intervals and options.fail_on_contention:
        reasons.append(
            f"contention: {intervals} interval(s) where concurrent block demand "
            f"exceeds the device cores ({cores.over_limit_ns / 1000:.3f} µs in all)"
        )
    if options.strict:
        reasons += [
            f"rank {rank_text(rank)}: provisional result ({why}) and --strict"
            for rank, why in provisional_ranks
        ] + [
            f"rank {rank_text(rank)}: provisional result (malformed rows skipped or an "
            "incomplete export) and --strict"
            for rank in damaged_ranks
        ]
    worst_rank = min(failed, key=lambda item: item[0])[1] if failed else None
    return GateDecision(passed=not reasons, reasons=tuple(reasons), worst_rank=worst_rank)


def worst_rank(plans: Sequence[PlanResult], stream_pairs: Sequence[StreamPair]) -> int | None:
    """The rank with the lowest figure (plans first, else stream pairs); None with one rank."""
    figures: list[tuple[float, int | None]] = [
        (p.hidden_pct if p.hidden_pct is not None else -1.0, p.rank) for p in plans
    ] or [(p.overlap_pct, p.rank) for p in stream_pairs]
    if len({rank for _, rank in figures}) < 2:
        return None
    return min(figures, key=lambda item: item[0])[1]
