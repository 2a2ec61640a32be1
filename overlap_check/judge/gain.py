"""Did it get faster? The reference comparison (docs/gain.md), its gates, and the evidence
summary. The pipeline judges the reference through the same path (no gates of its own);
:func:`apply_reference` compares each plan of each rank with it, refusing (InputError)
when the layers or steps per sample differ."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from overlap_check.judge.verdict import with_cause
from overlap_check.measure.shapes import shape_changes
from overlap_check.model import (
    Evidence,
    Options,
    PlanResult,
    ReferenceDelta,
    ReferenceResult,
    Report,
    StepWall,
    StepWallDelta,
    Thresholds,
    rank_text,
)
from overlap_check.model.errors import InputError
from overlap_check.model.verdicts import decided_text


def delta_pct(before: float | None, after: float | None) -> float | None:
    """(after - before) / before in percent: positive = slower (None: no figure to divide)."""
    if before is None or after is None or before <= 0:
        return None
    return (after - before) / before * 100


def _us(ns: float | None) -> str:
    return "n/a" if ns is None else f"{ns / 1000:.3f}"


def _refuse(head: str, reference: str, why: str) -> InputError:
    return InputError(
        f"{head} and reference {reference} cannot be matched: {why}",
        hint="the reference must be the same workload (same layers and steps), "
        "captured without the multi-stream change",
    )


def warm_steps(plan: PlanResult) -> tuple[StepWall, ...]:
    """Every warm step of the plan's samples, in run order then Step Id order."""
    return tuple(
        StepWall(run.run, step, wall)
        for run in plan.per_run
        if run.warm and run.walls is not None
        for step, wall in run.walls.step_walls
    )


def step_deltas(before: Sequence[StepWall], after: Sequence[StepWall]) -> StepFigures:
    """The n-th warm step after against the n-th before, their median Δ% and the worst step."""
    steps = tuple(
        StepWallDelta(b, a, delta_pct(b.wall_ns, a.wall_ns))
        for b, a in zip(before, after, strict=False)
    )
    known = [(d.delta_pct, n) for n, d in enumerate(steps, start=1) if d.delta_pct is not None]
    worst = max(known, key=lambda item: item[0])[1] if known else None
    median = float(statistics.median(v for v, _ in known)) if known else None
    return StepFigures(steps, len(before), len(after), median, worst)


class StepFigures(NamedTuple):
    """ReferenceDelta's step-by-step fields, in its order."""

    steps: tuple[StepWallDelta, ...]
    steps_before: int
    steps_after: int
    step_delta_median_pct: float | None
    worst_step: int | None


def compare(head: Report, ref: Report, head_path: str, ref_path: str) -> ReferenceResult:
    by_key = {(p.name, p.rank): p for p in ref.plans}
    deltas: list[ReferenceDelta] = []
    for plan in head.plans:
        where = f"plan {plan.name}, rank {rank_text(plan.rank)}"
        other = by_key.get((plan.name, plan.rank))
        if other is None:
            raise _refuse(head_path, ref_path, f"{where} is not in the reference")
        after, before = plan.walls, other.walls
        if after is None or before is None or not after.layers or not before.layers:
            raise _refuse(head_path, ref_path, f"{where}: no layer (dominator) on one side")
        for what, ours, theirs in (
            ("layers", after.layers, before.layers),
            ("steps", after.steps, before.steps),
        ):
            if ours != theirs:
                why = f"{where}: {ours} {what} per sample vs {theirs} in the reference"
                raise _refuse(head_path, ref_path, why)
        # a reference whose layers had no side work to join (its selection found none,
        # a single stream) waited for none: all of the wait after is new
        new_wait = (
            None if after.join_wait_ns is None else after.join_wait_ns - (before.join_wait_ns or 0)
        )
        changes = shape_changes(plan.shapes, other.shapes)
        deltas.append(
            ReferenceDelta(
                plan=plan.name,
                rank=plan.rank,
                layers=after.layers,
                before=before,
                after=after,
                layer_wall_delta_pct=delta_pct(before.layer_wall_ns, after.layer_wall_ns),
                step_wall_delta_pct=delta_pct(before.step_wall_ns, after.step_wall_ns),
                new_join_wait_ns=new_wait,
                shape_changes=changes or (),
                shapes_available=changes is not None,
                **step_deltas(warm_steps(other), warm_steps(plan))._asdict(),
            )
        )
    extra = sorted(
        {(p.name, rank_text(p.rank)) for p in ref.plans}
        - {(p.name, rank_text(p.rank)) for p in head.plans}
    )
    if extra:
        name, rank = extra[0]
        raise _refuse(head_path, ref_path, f"plan {name}, rank {rank} is only in the reference")
    matched = "; ".join(
        f"plan {d.plan}, rank {rank_text(d.rank)}: {d.layers} layer(s) per sample "
        f"in {d.after.steps} step(s), matched by order, and {d.steps_after} warm step(s) vs "
        f"{d.steps_before} in the reference ({len(d.steps)} matched by order)"
        f"{_like_for_like(d)}"
        for d in deltas
    )
    return ReferenceResult(path=ref_path, matched=matched, plans=tuple(deltas))


def _like_for_like(delta: ReferenceDelta) -> str:
    if not delta.shapes_available:
        return "; input shapes not available (no Input Shapes on one side)"
    if delta.shape_changes:
        return "; not like-for-like: " + "; ".join(delta.shape_changes)
    return ""  # the same shapes: nothing to add


def shape_change_cause(delta: ReferenceDelta) -> Evidence | None:
    """Input Shapes that differ from the reference's as a cause (docs/gain.md); not a time."""
    if not delta.shape_changes:
        return None
    return Evidence(
        "shape-change",
        "; ".join(delta.shape_changes) + ": the gain against the reference is not like-for-like",
    )


def _deltas(reference: ReferenceResult | None) -> dict[tuple[str, int | None], ReferenceDelta]:
    return {(d.plan, d.rank): d for d in (reference.plans if reference is not None else ())}


def apply_gates(report: Report, options: Options) -> Report:
    """The ``require_gain`` and ``max_join_wait_us`` gates (docs/gain.md)."""
    deltas = _deltas(report.reference)
    plans: list[PlanResult] = []
    reasons: list[str] = []
    for plan in report.plans:
        delta = deltas.get((plan.name, plan.rank))
        whys = []
        if options.require_gain is not None and delta is not None:
            step = delta.step_wall_delta_pct
            if step is None or -step < options.require_gain:
                shown = "n/a" if step is None else f"{step:+.2f}%"
                whys.append(
                    f"step wall {shown} against the reference, not at least "
                    f"{options.require_gain:g}% faster (--require-gain)"
                )
        limit = options.max_join_wait_us
        wait = plan.walls.join_wait_ns if plan.walls is not None else None
        if delta is not None:
            wait = delta.new_join_wait_ns
        if limit is not None and wait is not None and wait > limit * 1000:
            what = "new join wait against the reference" if delta is not None else "join wait"
            whys.append(
                f"{what} {_us(wait)} µs per layer (median) above {limit:g} µs (--max-join-wait-us)"
            )
        plans.append(replace(plan, gate_failures=plan.gate_failures + tuple(whys)))
        reasons += [f"plan {plan.name}, rank {rank_text(plan.rank)}: {why}" for why in whys]
    return replace(report, plans=tuple(plans)).failing(*reasons) if reasons else report


def dominator_stretch(delta: ReferenceDelta) -> Evidence | None:
    """The dominator got longer than in the reference (median per layer): a 3c cause."""
    before, after = delta.before.dominator_ns, delta.after.dominator_ns
    if not before or not after or after <= before:
        return None
    return Evidence(
        "dominator-stretched",
        f"dominator stretched {_us(before)} -> {_us(after)} µs ({delta_pct(before, after):+.1f}%)"
        f" against the reference: {_us(after - before)} µs longer per layer (median)",
        round(after - before),
    )


def _with_stretch(plan: PlanResult, delta: ReferenceDelta | None) -> PlanResult:
    if delta is None or plan.diagnosed is None:
        return plan
    found = plan.diagnosed
    for cause in (dominator_stretch(delta), shape_change_cause(delta)):
        if cause is not None:
            found = with_cause(found, cause)
    return replace(plan, diagnosed=found)


def apply_reference(head: Report, ref: Report, head_path: str, ref_path: str) -> Report:
    """The head report with its reference comparison, a note, and the causes it measured."""
    result = compare(head, ref, head_path, ref_path)
    note = (f"reference {ref_path}: {result.matched}",) if result.matched else ()
    deltas = _deltas(result)
    plans = tuple(_with_stretch(p, deltas.get((p.name, p.rank))) for p in head.plans)
    return replace(head, plans=plans, reference=result, notes=head.notes + note)


def _side_effect(plan: PlanResult, delta: ReferenceDelta | None, contention_ns: int) -> str:
    effects: list[str] = []
    walls = plan.walls
    stretch = None if delta is None else dominator_stretch(delta)
    if stretch is not None:
        effects.append(stretch.text.partition(" against the reference")[0])
    if contention_ns:
        effects.append(f"contention {_us(contention_ns)} µs over the device's cores")
    if walls is not None and walls.join_wait_ns:
        effect = f"the main stream waited {_us(walls.join_wait_ns)} µs per layer for the side tail"
        if delta is not None:  # the hole before, and what is new against the reference
            effect += (
                f" ({_us(delta.before.join_wait_ns)} µs in the reference: "
                f"{_us(delta.new_join_wait_ns)} µs new)"
            )
        effects.append(effect)
    if walls is not None and walls.side_tail_ns:
        effects.append(f"side tail {_us(walls.side_tail_ns)} µs not covered by main work")
    if walls is not None and walls.tail_ops:
        ops = ", ".join(t.name for t in walls.tail_ops)
        effects.append(
            f"tail ops {ops} {_us(sum(t.ns for t in walls.tail_ops))} µs per layer after the join"
        )
    return "; ".join(effects)


def evidence_line(
    plan: PlanResult, delta: ReferenceDelta | None, contention_ns: int, thresholds: Thresholds
) -> str:
    """verdict, what decided it, overlap_pct (wall Δ% with a reference), side effect."""
    decided = decided_text(plan, thresholds)
    overlap = "n/a" if plan.overlap_pct is None else f"{plan.overlap_pct:.3f}"
    text = (
        f"plan {plan.name}, rank {rank_text(plan.rank)}: {plan.verdict}"
        f"{f' ({decided})' if decided else ''}, overlap_pct {overlap}"
    )
    if delta is not None:
        layer, step = delta.layer_wall_delta_pct, delta.step_wall_delta_pct
        text += (
            f", layer wall {_us(delta.before.layer_wall_ns)} -> {_us(delta.after.layer_wall_ns)} "
            f"µs ({'n/a' if layer is None else f'{layer:+.2f}%'}), step wall "
            f"{_us(delta.before.step_wall_ns)} -> {_us(delta.after.step_wall_ns)} µs "
            f"({'n/a' if step is None else f'{step:+.2f}%'})"
        )
        if delta.shape_changes:
            text += " (not like-for-like: input shapes differ)"
    effect = _side_effect(plan, delta, contention_ns)
    return text + (f"; {effect}" if effect else "")


def with_summary(report: Report) -> Report:
    deltas = _deltas(report.reference)
    over = dict(report.cores.over_limit_by_rank) if report.cores is not None else {}
    lines = tuple(
        evidence_line(p, deltas.get((p.name, p.rank)), over.get(p.rank, 0), report.thresholds)
        for p in report.plans
    )
    return replace(report, evidence_summary=lines)
