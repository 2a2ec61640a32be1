"""The JSON report (docs/contract.md, schema_version 1), and extra keys that help.

Times are microseconds as numbers, rounded to 3 decimals from exact integer
nanoseconds. Points in time (``*_start_us``, ``*_end_us``) are relative to the
run's first compute kernel (``runs[].origin_ns``): an epoch in µs with 3
decimals does not fit in a JSON (float64) number. Each such point also comes
as ``*_ns``, the exact absolute local-epoch integer, to find the kernel in the
profiler's own files, and as ``*_ns_str``, the same integer as a decimal string:
these integers exceed 2**53, so a float64 JSON reader (JavaScript's JSON.parse,
jq arithmetic) rounds the number but keeps the string exact. docs/report.schema.json
is the JSON Schema of this document.
"""

from __future__ import annotations

import json
from typing import Any

from overlap_check.model import (
    BarrierCandidate,
    CommunicationStep,
    CoresResult,
    Diagnosis,
    LayerFigures,
    Occurrence,
    PlanResult,
    PlanRun,
    PlanWalls,
    ProfilerStepTime,
    RankCommunication,
    RankStreamSummary,
    ReferenceResult,
    Report,
    RunInfo,
    ShapeCount,
    StepWall,
    StreamPair,
)

JSON = dict[str, Any]
Origins = dict[tuple[int | None, int], int | None]


def us(ns: float | None) -> float | None:
    """Microseconds rounded to 3 decimals (ns resolution)."""
    return None if ns is None else round(ns / 1000, 3)


def exact(name: str, ns: int | None) -> JSON:
    """``{name: ns, name_str: "ns"}``: an absolute ns integer, and as text for float64 readers."""
    return {name: ns, f"{name}_str": None if ns is None else str(ns)}


def _rel(ns: int | None, origin: int | None) -> float | None:
    if ns is None or origin is None:
        return None
    return us(ns - origin)


def _run(run: RunInfo) -> JSON:
    return {
        "index": run.index,
        "path": run.path,
        "rank": run.rank,
        "warm": run.warm,
        "source": run.source,
        "streams": [
            {"stream_id": s.stream_id, "kernels": s.kernels, "busy_us": us(s.busy_ns)}
            for s in run.streams
        ],
        "skipped_rows": run.skipped_rows,
        "skipped_lines": list(run.skipped_lines),
        "device": run.device,
        "level": run.level,
        **exact("capture_time_ns", run.capture_time_ns),
        "communication_rows": run.communication,
        "stream_source": run.stream_source,
        "unplaced_rows": run.unplaced_rows,
        **exact("origin_ns", run.origin_ns),
        "notes": list(run.notes),
    }


def _pair(pair: StreamPair) -> JSON:
    return {
        "rank": pair.rank,
        "main": pair.main,
        "side": pair.side,
        "method": "busy",
        "overlap_us": us(pair.overlap_ns),
        "overlap_pct": pair.overlap_pct,
        "verdict": pair.verdict,
        "gate_failures": list(pair.gate_failures),
        "provisional": pair.provisional,
        "per_run": [
            {
                "run": r.run,
                "sample": r.sample,
                "warm": r.warm,
                "overlap_us": us(r.overlap_ns),
                "overlap_pct": r.overlap_pct,
                "main_busy_us": us(r.main_busy_ns),
                "side_busy_us": us(r.side_busy_ns),
            }
            for r in pair.per_run
        ],
    }


def _rank(summary: RankStreamSummary) -> JSON:
    return {
        "rank": summary.rank,
        "main_stream": summary.main_stream,
        "parallelism": summary.parallelism,
        "concurrent_us": us(summary.concurrent_ns),
        "wall_us": us(summary.wall_ns),
        "helper_streams": list(summary.helper_streams),
    }


def _profiler(row: ProfilerStepTime) -> JSON:
    return {
        "step": row.step,
        "device": row.device,
        "computing_us": us(row.computing_ns),
        "not_overlapped_us": us(row.not_overlapped_ns),
        "overlapped_us": us(row.overlapped_ns),
        "communication_us": us(row.communication_ns),
        "free_us": us(row.free_ns),
    }


def _communication_step(step: CommunicationStep) -> JSON:
    return {
        "run": step.run,
        "warm": step.warm,
        "step": step.step,
        "busy_us": us(step.busy_ns),
        "hidden_us": us(step.hidden_ns),
        "exposed_us": us(step.exposed_ns),
        "compute_us": us(step.compute_ns),
        "profiler": None if step.profiler is None else _profiler(step.profiler),
        "profiler_difference": step.profiler_difference,
    }


def _communication(rank: RankCommunication) -> JSON:
    return {
        "rank": rank.rank,
        "busy_us": us(rank.busy_ns),
        "hidden_us": us(rank.hidden_ns),
        "exposed_us": us(rank.exposed_ns),
        "hidden_pct": rank.hidden_pct,
        "provisional": rank.provisional,
        "steps": [_communication_step(s) for s in rank.steps],
    }


def _occurrence(occ: Occurrence, origin: int | None) -> JSON:
    return {
        "index": occ.index,
        "status": occ.status,
        "side_ops": occ.side_ops,
        "side_start_us": _rel(occ.side_start_ns, origin),
        "side_end_us": _rel(occ.side_end_ns, origin),
        "dominator": occ.dominator,
        "dom_start_us": _rel(occ.dom_start_ns, origin),
        "dom_end_us": _rel(occ.dom_end_ns, origin),
        "overlap_us": us(occ.overlap_ns),
        "overlap_pct": occ.overlap_pct,
        "busy_overlap_pct": occ.busy_overlap_pct,
        "layer": occ.layer,
        "hidden_pct": occ.hidden_pct,
        "dominator_pct": occ.dominator_pct,
        "side_busy_us": us(occ.side_busy_ns),
        "hidden_us": us(occ.hidden_ns),
        "verdict": occ.verdict,
        "join_not_waited": occ.join_not_waited,
        **exact("side_start_ns", occ.side_start_ns),
        **exact("dom_start_ns", occ.dom_start_ns),
    }


def _counts(counts: tuple[int, int, int]) -> JSON:
    real, partial, fake = counts
    return {"real": real, "partial": partial, "fake": fake}


def _plan_run(run: PlanRun, origin: int | None) -> JSON:
    return {
        "run": run.run,
        "sample": run.sample,
        "step": run.step,
        "warm": run.warm,
        "overlap_pct": run.overlap_pct,
        "busy_overlap_pct": run.busy_overlap_pct,
        "hidden_pct": run.hidden_pct,
        "verdict_counts": _counts(run.hidden_counts),
        "occurrences": run.occurrences,
        "judged": run.judged,
        "side_ops": run.side_ops,
        "no_side": run.no_side,
        "no_dominator": run.no_dominator,
        "zero_length": run.zero_length,
        "fake_occurrences": run.fake,
        "worst": [_occurrence(o, origin) for o in run.worst],
        "unpaired": [_occurrence(o, origin) for o in run.unpaired],
        "layers": [_occurrence(o, origin) for o in run.layers],
        "join_not_waited": run.join_not_waited,
        "lag": run.lag,
        "walls": None if run.walls is None else _layer_figures(run.walls),
    }


def _medians(w: LayerFigures | PlanWalls) -> JSON:
    """The layer figures a sample's LayerFigures and a plan's PlanWalls (their warm medians)
    both have."""
    return {
        "layers": w.layers,
        "steps": w.steps,
        "layer_wall_us": us(w.layer_wall_ns),
        "dominator_us": us(w.dominator_ns),
        "side_total_us": us(w.side_total_ns),
        "join_wait_us": us(w.join_wait_ns),
        "side_tail_us": us(w.side_tail_ns),
        "step_wall_us": us(w.step_wall_ns),
        "tail_ops": [{"name": t.name, "count": t.count, "us": us(t.ns)} for t in w.tail_ops],
    }


def _shape(c: ShapeCount) -> JSON:
    return {"role": c.role, "label": c.label, "shapes": c.shapes, "count": c.count}


def _layer_figures(f: LayerFigures) -> JSON:
    return {
        **_medians(f),
        "join_wait_max_us": us(f.join_wait_max_ns),
        "join_wait_layer": f.join_wait_layer,
        "step_walls": [{"step": step, "wall_us": us(wall)} for step, wall in f.step_walls],
    }


def _barrier(candidate: BarrierCandidate, origin: int | None) -> JSON:
    return {
        "name": candidate.name,
        "stream_id": candidate.stream_id,
        "start_us": _rel(candidate.start_ns, origin),
        "gap_us": us(candidate.gap_ns),
        "after_side_end_us": us(candidate.after_side_end_ns),
        "run": candidate.run,
        "occurrence": candidate.occurrence,
        "occurrences": candidate.occurrences,
        "covers_side_window": candidate.covers_side_window,
        "waited": candidate.waited,
        "chain": candidate.chain,
        "lag_us": us(candidate.lag_ns),
        **exact("start_ns", candidate.start_ns),
    }


def _plan(plan: PlanResult, origins: Origins) -> JSON:
    return {
        "name": plan.name,
        "rank": plan.rank,
        "method": plan.method,
        "overlap_pct": plan.overlap_pct,
        "busy_overlap_pct": plan.busy_overlap_pct,
        "hidden_pct": plan.hidden_pct,
        "decided_by": plan.decided_by,
        "verdict_counts": _counts(plan.verdict_counts),
        "provisional": plan.provisional,
        "verdict": plan.verdict,
        "gate_failures": list(plan.gate_failures),
        "side_stream": plan.side_stream,
        "main_stream": plan.main_stream,
        "side": plan.side,
        "op_type": plan.op_type,
        "dominator": plan.dominator,
        "runs_used": plan.runs_used,
        "overlap_min": plan.overlap_min,
        "overlap_max": plan.overlap_max,
        "per_run": [_plan_run(r, origins.get((plan.rank, r.run))) for r in plan.per_run],
        "barrier_candidates": [
            _barrier(b, origins.get((plan.rank, b.run))) for b in plan.barrier_candidates
        ],
        "fake_occurrences": plan.fake_occurrences,
        "placement": list(plan.placement),
        "stayed": list(plan.stayed),
        "diagnosis": plan.diagnosis,
        "diagnosed": None if plan.diagnosed is None else _diagnosed(plan.diagnosed),
        "findings": list(plan.findings),
        "config_file": plan.config_file,
        "config_line": plan.config_line,
        "walls": None if plan.walls is None else _walls(plan.walls),
        # only with a reference (shapes.wants_shapes): reports without one stay as they were
        **({} if plan.shapes is None else {"input_shapes": [_shape(c) for c in plan.shapes]}),
        # only a communication or copy plan says so (compute plans' reports stay as they were)
        **({} if plan.side_kind == "compute" else {"side_kind": plan.side_kind}),
    }


def _walls(w: PlanWalls) -> JSON:
    return {
        **_medians(w),
        "join_wait_worst_us": us(w.join_wait_worst_ns),
        "join_wait_worst_layer": w.join_wait_worst_layer,
        "join_wait_worst_run": w.join_wait_worst_run,
    }


def _step_wall(step: StepWall) -> JSON:
    return {"run": step.run, "step": step.step, "wall_us": us(step.wall_ns)}


def _reference(ref: ReferenceResult) -> JSON:
    return {
        "path": ref.path,
        "matched": ref.matched,
        "plans": [
            {
                "plan": d.plan,
                "rank": d.rank,
                "layers": d.layers,
                "before": _walls(d.before),
                "after": _walls(d.after),
                "layer_wall_delta_pct": d.layer_wall_delta_pct,
                "step_wall_delta_pct": d.step_wall_delta_pct,
                "new_join_wait_us": us(d.new_join_wait_ns),
                "shapes_available": d.shapes_available,
                "shape_changes": list(d.shape_changes),
                "warm_steps_before": d.steps_before,
                "warm_steps_after": d.steps_after,
                "steps": [
                    {
                        "before": _step_wall(s.before),
                        "after": _step_wall(s.after),
                        "delta_pct": s.delta_pct,
                    }
                    for s in d.steps
                ],
                "step_delta_median_pct": d.step_delta_median_pct,
                "worst_step": d.worst_step,
            }
            for d in ref.plans
        ],
    }


def _diagnosed(found: Diagnosis) -> JSON:
    return {
        "stage": found.stage,
        "cause": found.cause,
        "path": found.path,
        "evidence": [
            {
                "kind": e.kind,
                "text": e.text,
                "size_us": us(e.size_ns),
            }
            for e in found.evidence
        ],
        "fix": list(found.fix),
    }


def _cores(cores: CoresResult, origins: dict[tuple[int | None, int], int | None]) -> JSON:
    device = cores.device
    return {
        "device": None
        if device is None
        else {
            "aicore": device.aicore or None,  # 0: no source gives it (null, never 0)
            "vectorcore": device.vectorcore or None,
            "source": device.source,
            "guessed": device.source == "observed",
            "detail": device.detail,
        },
        "violations": [
            {
                "run": v.run,
                "rank": v.rank,
                "stream_id": v.stream_id,
                "name": v.name,
                "accelerator_core": v.accelerator_core,
                "block_num": v.block_num,
                "mix_block_num": v.mix_block_num,
                "limit": v.limit,
                "kind": v.kind,
                "plan": v.plan,
                "limit_source": v.limit_source,
                "blocks_field": v.blocks_field,
                "start_us": _rel(v.start_ns, origins.get((v.rank, v.run))),
                **exact("start_ns", v.start_ns),
                "message": v.message,
            }
            for v in cores.violations
        ],
        "warnings": [
            {
                "run": w.run,
                "rank": w.rank,
                "stream_id": w.stream_id,
                "name": w.name,
                "accelerator_core": w.accelerator_core,
                "block_num": w.block_num,
                "mix_block_num": w.mix_block_num,
                "limit": w.limit,
                "kind": w.kind,
                "plan": w.plan,
                "limit_source": w.limit_source,
                "blocks_field": w.blocks_field,
                "start_us": _rel(w.start_ns, origins.get((w.rank, w.run))),
                **exact("start_ns", w.start_ns),
                "message": w.message,
            }
            for w in cores.warnings
        ],
        "contention": [
            {
                "run": c.run,
                "rank": c.rank,
                "kind": c.kind,
                "start_us": _rel(c.start_ns, origins.get((c.rank, c.run))),
                "duration_us": us(c.duration_ns),
                f"{c.kind}_demand": c.demand,
                f"{c.kind}_max": c.maximum,
                "kernels": list(c.kernels),
                "streams": list(c.streams),
                "excess_block_us": us(c.excess_block_ns),
                **exact("start_ns", c.start_ns),
            }
            for c in cores.contention
        ],
        "limits": [
            {
                "source": lim.source,
                "aicore": lim.aicore,
                "vectorcore": lim.vectorcore,
                "mode": lim.mode,
                "plan": lim.plan,
                "detail": lim.detail,
                "kernels": lim.kernels,
            }
            for lim in cores.limits
        ],
        "over_limit_us": us(cores.over_limit_ns),
        "aicore_over_limit_us": us(cores.aicore_over_limit_ns),
        "vectorcore_over_limit_us": us(cores.vectorcore_over_limit_ns),
        "violation_count": max(cores.violation_count, len(cores.violations)),
        "warning_count": max(cores.warning_count, len(cores.warnings)),
        "contention_count": max(cores.contention_count, len(cores.contention)),
        "contention_runs": cores.contention_runs,
        "over_limit_by_rank": [
            {"rank": rank, "over_limit_us": us(ns)} for rank, ns in cores.over_limit_by_rank
        ],
        "checked_kernels": cores.checked_kernels,
        "exempt_kernels": cores.exempt_kernels,
        "unchecked_kernels": cores.unchecked_kernels,
        "notes": list(cores.notes),
    }


def to_dict(report: Report) -> JSON:
    """The report as plain JSON-ready data (schema_version 1)."""
    origins: Origins = {(r.rank, r.index): r.origin_ns for r in report.runs}
    return {
        "schema_version": report.schema_version,
        "tool_version": report.tool_version,
        "config_path": report.config_path,  # the config file used; null: none
        "verdict": report.verdict,
        "exit_code": report.exit_code,
        "thresholds": {
            "real": report.thresholds.real,
            "fake": report.thresholds.fake,
            "fake_share": report.fake_share,
        },
        "warmup": report.warmup,
        "min_runs": report.min_runs,
        "per": report.per,
        "fail_on": report.fail_on,
        "strict": report.strict,
        "gate_reasons": list(report.gate_reasons),
        "evidence_summary": list(report.evidence_summary),
        "notes": list(report.notes),
        "worst_rank": report.worst_rank,
        "runs": [_run(r) for r in report.runs],
        "stream_pairs": [_pair(p) for p in report.stream_pairs],
        "ranks": [_rank(r) for r in report.ranks],
        "communication": [_communication(c) for c in report.communication],
        "plans": [_plan(p, origins) for p in report.plans],
        "cores": None if report.cores is None else _cores(report.cores, origins),
        "baseline": None
        if report.baseline is None
        else [
            {
                "plan": d.plan,
                "rank": d.rank,
                "base": d.base,
                "head": d.head,
                "delta": d.delta,
                "status": d.status,
                "figure": d.figure,
            }
            for d in report.baseline
        ],
        "baseline_tolerance": report.baseline_tolerance,
        "reference": None if report.reference is None else _reference(report.reference),
    }


def render(report: Report) -> str:
    """The JSON text, indented, ending with a newline."""
    return indented(to_dict(report)) + "\n"


def indented(data: JSON) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)``, byte for byte, 3-4x faster: an
    indent makes json.dumps take its pure-Python encoder (seconds for a report listing
    100k layers), so the C encoder writes compact text and msgspec re-indents it,
    copying every number and string as written."""
    import msgspec

    compact = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        return msgspec.json.format(compact.encode(), indent=2).decode()
    except (msgspec.DecodeError, UnicodeEncodeError):  # NaN or Infinity (json.dumps' own
        # tokens, not JSON), or a lone surrogate (a report read back from \ud800 in JSON)
        return json.dumps(data, indent=2, ensure_ascii=False)
