"""A plan's result over all its warm runs: verdict, barriers ranked, placement, findings,
and the note when the window figure and hidden_pct disagree."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from overlap_check.judge.verdict import band_counts, decide, diagnose, diagnosis
from overlap_check.measure.hiding import Siblings, sibling_finding
from overlap_check.measure.occurrences import PlanStreams
from overlap_check.measure.placement import stayed, stayed_phrases
from overlap_check.measure.runs import spread
from overlap_check.model import (
    FAKE_SHARE,
    BarrierCandidate,
    Evidence,
    ExecutionPath,
    Plan,
    PlanResult,
    PlanRun,
    Thresholds,
    Verdict,
    deciding_occurrence,
)
from overlap_check.model.selection import SIDE_KIND_WORDS, judges_races, module_scope
from overlap_check.model.verdicts import figure_text, label

MAX_BARRIERS = 5


def rank_barriers(instances: pl.DataFrame, stream: int | None) -> tuple[BarrierCandidate, ...]:
    """Candidates by name: most fake occurrences first, then the shortest delay."""
    if instances.is_empty() or stream is None:
        return ()
    ranked = (
        instances.group_by("name", maintain_order=True)
        .agg(
            pl.len().alias("count"),
            pl.col("after_ns").median().alias("delay"),
            pl.all().first(),  # instances come in (run, occurrence) order
        )
        .sort(["count", "delay", "name"], descending=[True, False, False])
        .head(MAX_BARRIERS)
    )
    return tuple(
        BarrierCandidate(
            stream_id=stream,
            **{name: row[name] for name in ("name", "start_ns", "gap_ns", "run", "occurrence")},
            after_side_end_ns=row["after_ns"],
            occurrences=row["count"],
            covers_side_window=row["covers"],
            waited=row.get("waited") or "main",
            chain=row.get("chain") or "",
            lag_ns=row.get("lag_ns") or 0,
        )
        for row in ranked.iter_rows(named=True)
    )


def placement(
    plan: Plan, streams: PlanStreams, matched: Sequence[pl.DataFrame]
) -> tuple[int, tuple[str, ...], bool]:
    """Side ops judged, the ops that stayed (``SwiGlu x20 on stream 2``), and whether the
    split failed (an op the plan names never moved). Stayed: with ``side_stream`` the matches
    off it (all when it is the main stream), else those on the main stream."""
    counts = pl.concat(
        [m.with_columns(pl.lit(i, pl.Int64).alias("capture")) for i, m in enumerate(matched)]
    )
    if plan.side_stream is not None and plan.side_stream == streams.main:
        off: pl.Expr = pl.lit(True)  # the side stream is the dominator's: nothing moved
    elif plan.side_stream is not None:
        off = pl.col("stream_id") != plan.side_stream
    elif streams.main is not None:
        off = pl.col("stream_id") == streams.main
    else:
        off = pl.lit(False)
    off = off.fill_null(False)  # a communication task has no stream: it is a side op
    rows = stayed(counts, off, scoped=module_scope(plan.side) is not None)
    moved = int(counts.filter(~off).get_column("count").sum())
    failed = bool((rows.get_column("moved") == 0).any())
    return moved, tuple(stayed_phrases(rows)), failed


def _no_evidence_reason(
    plan: Plan, streams: PlanStreams, side_total: int, runs: Sequence[PlanRun]
) -> str:
    if side_total == 0:
        what = SIDE_KIND_WORDS[plan.side_kind]
        if plan.side_kind != "compute" and plan.side is not None:
            where = f" on stream {plan.side_stream}" if plan.side_stream is not None else ""
            return f"no {what}{where} matched the side regex {plan.side!r}"
        if plan.side is not None or plan.op_type is not None:
            parts = [f"the side regex {plan.side!r}"] if plan.side is not None else []
            if plan.op_type is not None:
                parts.append(f"the op_type regex {plan.op_type!r}")
            where = f" on side stream {plan.side_stream}" if plan.side_stream is not None else ""
            return f"no compute kernel matched {' and '.join(parts)}{where}"
        if plan.side_stream is not None:
            return f"no {what} ran on side stream {plan.side_stream}"
        return "the plan names no side ops (give side, op_type or side_stream)"
    if streams.main is None:
        return f"no compute kernel matched the dominator regex {plan.dominator!r}"
    if not any(r.judged for r in runs if r.warm):
        where = f"on stream {streams.main}"
        if plan.dominator is not None and not any(r.no_side or r.judged for r in runs):
            return f"no compute kernel {where} matched the dominator regex {plan.dominator!r}"
        return f"no occurrence in a warm run paired side ops with a dominator {where}"
    return "nothing to judge"


def plan_result(
    plan: Plan,
    rank: int | None,
    streams: PlanStreams,
    matched: Sequence[pl.DataFrame],
    samples: Sequence[tuple[PlanRun, pl.DataFrame]],
    thresholds: Thresholds,
    *,
    provisional: bool,
    contention_ns: int = 0,
    fake_share: float = FAKE_SHARE,
    path: ExecutionPath | None = None,
    causes: Sequence[Evidence] = (),
    siblings: Sequence[Siblings | None] = (),
) -> PlanResult:
    """The plan's result for one rank. ``samples``: per sample, in order, its plan_run and
    barrier instances; ``matched``: placement.layered_counts per sample; ``causes``: the
    measured 3c causes; ``siblings``: per sample, the side time only sibling streams covered."""
    runs = [run for run, _ in samples]
    unit = "steps" if runs and runs[0].sample is not None else "runs"
    side_total, stayed_ops, split_failed = placement(plan, streams, matched)
    evidence = stayed_ops if split_failed else ()
    warm = [run.warm for run in runs]
    figure = spread([run.overlap_pct for run in runs], warm)
    busy = spread([run.busy_overlap_pct for run in runs], warm)
    hidden = spread([run.hidden_pct for run in runs], warm)
    warm_counts = [(r.sample or f"run {r.run}", r.hidden_counts) for r in runs if r.warm]
    verdict, decided_by, figure_band, fake_runs = decide(
        hidden.median, warm_counts, thresholds, fake_share
    )
    verdict_counts = band_counts(warm_counts)
    if evidence:
        verdict, decided_by = "not-split", "not-split"
    if streams.main is None or (side_total == 0 and not split_failed):
        verdict, decided_by = "no-evidence", "no-evidence"
    fake_occurrences = sum(run.fake for run in runs if run.warm)
    pool = [s for s, w in zip(siblings, warm, strict=False) if w]
    sibling = sibling_finding(pool, thresholds) if pool else None
    instances = [
        found.with_columns(pl.lit(run.run, pl.Int64).alias("run"))
        for run, found in samples
        if run.warm
    ]
    barriers = rank_barriers(pl.concat(instances), streams.main) if instances else ()
    # the figures are of the side ops that moved; placement names the ones that stayed
    under = "the main path" if plan.side_kind == "compute" else "compute on other streams"
    notes = _band_note(verdict, figure.median, hidden.median, runs, thresholds, under)
    no_evidence = _no_evidence_reason(plan, streams, side_total, runs)
    band = [Evidence("band-mismatch", notes.removeprefix("; "))] if notes else []
    where = f" in {len(runs)} {unit}" if len(runs) > 1 else ""
    stayed_text = f"stayed off the side stream{where}: {', '.join(stayed_ops)}"
    if stayed_ops and verdict not in ("not-split", "no-evidence"):
        notes += f"; {stayed_text}; the figures are of the {side_total} side ops that moved"
    elif verdict == "not-split" and side_total:
        notes += f"; the figures are of the {side_total} side ops that moved"
    return PlanResult(
        name=plan.name,
        rank=rank,
        verdict=verdict,
        overlap_pct=figure.median,
        provisional=provisional,
        side_stream=streams.side,
        main_stream=streams.main,
        busy_overlap_pct=busy.median,
        per_run=tuple(runs),
        runs_used=figure.used,
        overlap_min=figure.minimum,
        overlap_max=figure.maximum,
        barrier_candidates=barriers,
        placement=evidence,
        diagnosis=diagnosis(
            verdict,
            hidden.median,
            thresholds,
            placement=(stayed_text,) if evidence else (),
            barriers=barriers,
            fake_occurrences=fake_occurrences,
            no_evidence=no_evidence,
            contention_ns=contention_ns,
            figure="hidden_pct",
            decided_by=decided_by,
            counts=verdict_counts,
            fake_runs=fake_runs,
            fake_share=fake_share,
        )
        + notes,
        diagnosed=diagnose(
            verdict,
            path,
            barriers=barriers,
            fake_occurrences=fake_occurrences,
            evidence=[*causes, *band],
            placement=evidence,
            no_evidence=no_evidence,
            decided_by=decided_by,
            band=figure_band,
            fake_runs=fake_runs,
        ),
        fake_occurrences=fake_occurrences,
        dominator=plan.dominator,
        side=plan.side,
        config_file=plan.config_file,
        config_line=plan.config_line,
        hidden_pct=hidden.median,
        verdict_counts=verdict_counts,
        findings=(missing_waits([r for r in runs if r.warm], unit) if judges_races(plan) else ())
        + (() if sibling is None else (sibling,)),
        side_kind=plan.side_kind,
        stayed=stayed_ops,
        op_type=plan.op_type,
    )


def missing_waits(warm: Sequence[PlanRun], unit: str) -> tuple[str, ...]:
    """The signs of a missing wait over the warm samples (docs/hidden-fraction.md)."""
    found: list[str] = []
    layers = sum(r.judged + r.no_side for r in warm)
    joins = [(r, o) for r in warm for o in r.layers if o.join_not_waited]
    if joins:  # counted in full, named from the listed layers (MAX_LISTED_LAYERS)
        run, first = joins[0]
        where = run.sample or f"run {run.run}"
        not_waited = sum(r.join_not_waited for r in warm)
        found.append(
            f"join did not wait: in {not_waited} of {layers} warm layers the side work ended "
            f"after the next main-stream op after the dominator had started (first: {where}, "
            f"layer {first.layer}); make that op wait for the side stream"
        )
    lagging = sum(r.lag for r in warm)
    if lagging:
        found.append(
            f"side stream a layer behind in {lagging} of {len(warm)} warm {unit}: the first "
            "dominator has no side work and side work runs after the last one, so each "
            "layer's side work runs under the next layer (a missing wait)"
        )
    return tuple(found)


def _us(ns: int | None) -> str:
    return "n/a" if ns is None else f"{ns / 1000:.0f}"


def _band_note(
    verdict: Verdict,
    overlap: float | None,
    hidden: float | None,
    runs: Sequence[PlanRun],
    thresholds: Thresholds,
    under: str,
) -> str:
    """Why overlap_pct and hidden_pct fall in different bands, on the deciding occurrence."""
    if verdict in ("not-split", "no-evidence") or overlap is None or hidden is None:
        return ""
    window, hid = label(overlap, thresholds), label(hidden, thresholds)
    if window == hid:
        return ""
    text = (
        f"; overlap_pct {figure_text(overlap, thresholds)} says {window} but hidden_pct "
        f"{figure_text(hidden, thresholds)} says {hid}"
    )
    deciding = deciding_occurrence(runs)
    if deciding is None:
        return text
    occ = deciding[1]
    spans = (
        occ.side_start_ns is not None
        and occ.dom_start_ns is not None
        and occ.side_end_ns is not None
        and occ.dom_end_ns is not None
        and occ.side_start_ns <= occ.dom_start_ns
        and occ.side_end_ns >= occ.dom_end_ns
    )
    where = "the side window spans the dominator, but " if spans else ""
    shown, busy = occ.hidden_ns or 0, occ.side_busy_ns or 0
    under_dominator = round((occ.dominator_pct or 0.0) * busy)
    if hid != "real":
        return (
            f"{text}: {where}only {_us(shown)} of {_us(busy)} µs of side work ran under "
            f"{under} (occurrence #{occ.index})"
        )
    if under_dominator >= shown:  # every hidden ns ran under the dominator itself
        return (
            f"{text}: {_us(shown)} of {_us(busy)} µs of side work ran under the named "
            f"dominator itself; the window figure also counts the idle gaps of the side window "
            f"(occurrence #{occ.index})"
        )
    part = "none" if under_dominator == 0 else f"{_us(under_dominator)} µs"
    return (
        f"{text}: {_us(shown)} of {_us(busy)} µs of side work ran under {under}, "
        f"{part} of it under the named dominator (occurrence #{occ.index})"
    )
