"""Core-limit checks: per-kernel Block Num against configured limits, and contention.

Rules per kernel (METHOD.md "Core limits and block counts"):

| Accelerator Core | compared                        | against          | outcome          |
|------------------|---------------------------------|------------------|------------------|
| AI_CORE          | Block Num                       | aicore limit     | violation        |
| MIX_AIC          | Block Num                       | aicore limit     | violation        |
| MIX_AIC          | Mix Block Num                   | vectorcore limit | violation        |
| AI_VECTOR_CORE   | Block Num                       | vectorcore limit | violation        |
| MIX_AIV          | Block Num                       | vectorcore limit | warning only     |
| MIX_AIV          | Mix Block Num                   | aicore limit     | warning only     |
| AI_CPU, DSA_SQE, HCCL, COMMUNICATION, communication rows: exempt (counted)               |

MIX_AIV is reported, never failed: its Block Num / Mix Block Num semantics are
undocumented (a 40/80 MIX_AIV on a 20/40 device is real).

Which limit governs a kernel, per core kind, first found wins: a plan's
``limit_core`` (its side operators, plans in config order), then the operator's
``_op_aicore_num`` / ``_op_vectorcore_num`` from a graph dump, then GE's global
``aicore_num``. A plan in ``npugraph_ex`` mode limits Ascend C operators only,
which a kernel table cannot tell apart: a kernel above such a limit is a warning.

Contention (failure mode 3c), warm runs only: wherever at least two compute
streams are busy, the blocks demanded per core kind by all kernels running then
are summed: aicore = AI_CORE + MIX_AIC Block Num; vectorcore = AI_VECTOR_CORE
Block Num + MIX_AIC Mix Block Num + MIX_AIV Block Num. Each kernel's demand is
capped at the device's cores (Block Num is a logical count; 256 blocks on 48 cores
run in waves), so only kernels of different streams together can exceed it.
Contiguous over-limit time becomes one interval, ranked by ``excess_block_ns``
(sum of (demand - cores) x time): how far and how long together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from overlap_check.devices import device_notes, resolve_device_cores
from overlap_check.intervals import I64, merge, sweep
from overlap_check.limits import (
    GraphDumpLimits,
    operator_limits_for,
    parse_aicore_num,
    read_graph_dump,
)
from overlap_check.model import (
    AppliedLimit,
    Capture,
    ContentionInterval,
    CoresResult,
    CoreViolation,
    DeviceCores,
    Options,
    Plan,
    RunInfo,
)
from overlap_check.selection import side_expr

__all__ = ["check_cores", "resolve_device_cores"]

LIMITED = ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV")
EXEMPT = ("AI_CPU", "DSA_SQE", "HCCL", "COMMUNICATION")
MAX_LISTED = 10_000  # violations / warnings kept in the result (all are counted)
MAX_CONTENTION = 100  # contention intervals kept, worst first (all are counted)
MAX_NAMES = 20  # kernel names listed per contention interval

# "core": the Accelerator Core, upper case, "" when unknown; computed once per table.
_CORE = pl.col("accelerator_core").str.strip_chars().str.to_uppercase().fill_null("").alias("core")
_C = pl.col("core")
# Blocks compared with each kind's limit, and the column they come from.
_AIC_BLOCKS = (
    pl.when(_C.is_in(["AI_CORE", "MIX_AIC"]))
    .then(pl.col("block_num"))
    .when(_C == "MIX_AIV")
    .then(pl.col("mix_block_num"))
)
_AIV_BLOCKS = (
    pl.when(_C.is_in(["AI_VECTOR_CORE", "MIX_AIV"]))
    .then(pl.col("block_num"))
    .when(_C == "MIX_AIC")
    .then(pl.col("mix_block_num"))
)
# Contention demand: MIX_AIV's Mix Block Num is left out (its meaning is undocumented).
_AIC_DEMAND = pl.when(_C.is_in(["AI_CORE", "MIX_AIC"])).then(pl.col("block_num"))
_AIV_DEMAND = _AIV_BLOCKS


@dataclass(frozen=True)
class _Limits:
    plans: tuple[Plan, ...]
    ge_global: tuple[int, int | None] | None
    dump: GraphDumpLimits | None


# Where a kernel's limit comes from, as a small code (strings for 1M rows are costly):
# 0 = GE global, 1 = graph dump, 2 + i = the i-th plan with a limit_core.
_GLOBAL, _DUMP, _PLAN0 = 0, 1, 2


def _source_labels(limits: _Limits) -> list[str]:
    return ["ge-global", "graph-dump", *(f"plan:{p.name}" for p in limits.plans)]


def _governed(kernels: pl.DataFrame, limits: _Limits) -> pl.DataFrame:
    """Kernels with, per core kind, the limit governing them and its source code."""
    frame = kernels
    if limits.dump is not None:
        frame = operator_limits_for(frame, limits.dump)
    # Each plan's side-operator regex is evaluated once, into a column.
    hits = [
        side_expr(plan).fill_null(False).alias(f"_hit{i}") for i, plan in enumerate(limits.plans)
    ]
    frame = frame.with_columns(_CORE, *hits)
    cols: list[pl.Expr] = []
    for kind, index, dump_col in (("aic", 0, "op_aicore"), ("aiv", 1, "op_vectorcore")):
        limit: pl.Expr = pl.lit(None, pl.Int64)
        source: pl.Expr = pl.lit(None, pl.Int16)
        if limits.ge_global is not None and limits.ge_global[index] is not None:
            limit = pl.lit(limits.ge_global[index], pl.Int64)
            source = pl.lit(_GLOBAL, pl.Int16)
        if limits.dump is not None:
            has = pl.col(dump_col).is_not_null()
            limit = pl.when(has).then(pl.col(dump_col)).otherwise(limit)
            source = pl.when(has).then(pl.lit(_DUMP, pl.Int16)).otherwise(source)
        # reversed: the first plan is applied last, so it wins
        for i, plan in reversed(list(enumerate(limits.plans))):
            assert plan.limit_core is not None
            value = (plan.limit_core.aicore, plan.limit_core.vectorcore)[index]
            if value is None:
                continue
            hit = pl.col(f"_hit{i}")
            limit = pl.when(hit).then(pl.lit(value, pl.Int64)).otherwise(limit)
            source = pl.when(hit).then(pl.lit(_PLAN0 + i, pl.Int16)).otherwise(source)
        cols += [limit.alias(f"{kind}_limit"), source.alias(f"{kind}_source")]
    blocks = [_AIC_BLOCKS.alias("aic_blocks"), _AIV_BLOCKS.alias("aiv_blocks")]
    return frame.with_columns(cols + blocks)


def _counts(frame: pl.DataFrame) -> tuple[int, int, int]:
    """(checked, exempt, unchecked) among kernels governed by a limit ("core" is never null)."""
    core = pl.col("core")
    governed = pl.col("aic_limit").is_not_null() | pl.col("aiv_limit").is_not_null()
    exempt = governed & (pl.col("is_communication").fill_null(False) | core.is_in(EXEMPT))
    aic_applies = pl.col("aic_limit").is_not_null() & core.is_in(["AI_CORE", "MIX_AIC", "MIX_AIV"])
    aiv_applies = pl.col("aiv_limit").is_not_null() & core.is_in(
        ["AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV"]
    )
    checked = (aic_applies & pl.col("aic_blocks").is_not_null()) | (
        aiv_applies & pl.col("aiv_blocks").is_not_null()
    )
    unknown_core = governed & ~exempt & ~core.is_in(LIMITED)
    unchecked = unknown_core | (~checked & (aic_applies | aiv_applies))
    row = frame.select(
        checked.sum().alias("checked"),
        exempt.sum().alias("exempt"),
        unchecked.sum().alias("unchecked"),
    ).row(0)
    return int(row[0]), int(row[1]), int(row[2])


def _over(frame: pl.DataFrame, kind: str, limits: _Limits) -> pl.DataFrame:
    """Kernels whose blocks exceed their limit of one kind (a small frame), labelled."""
    k = "aic" if kind == "aicore" else "aiv"
    over = frame.filter(pl.col(f"{k}_blocks") > pl.col(f"{k}_limit"))
    codes = range(len(_source_labels(limits)))
    modes = ["ge", "ge", *(p.limit_core.mode if p.limit_core else "ge" for p in limits.plans)]
    plans = [None, None, *(p.name for p in limits.plans)]
    source = pl.col(f"{k}_source")
    mix_core = "MIX_AIV" if kind == "aicore" else "MIX_AIC"
    return over.select(
        "stream_id",
        "name",
        "start_ns",
        "block_num",
        "mix_block_num",
        "accelerator_core",
        "core",
        pl.col(f"{k}_blocks").alias("blocks"),
        pl.col(f"{k}_limit").alias("limit"),
        source.replace_strict(codes, _source_labels(limits), return_dtype=pl.String).alias(
            "source"
        ),
        source.replace_strict(codes, modes, return_dtype=pl.String).alias("mode"),
        source.replace_strict(codes, plans, return_dtype=pl.String).alias("plan"),
        pl.when(pl.col("core") == mix_core)
        .then(pl.lit("mix_block_num"))
        .otherwise(pl.lit("block_num"))
        .alias("field"),
        pl.lit(kind).alias("kind"),
    ).with_columns(
        ((pl.col("core") == "MIX_AIV") | (pl.col("mode") == "npugraph_ex")).alias("warning")
    )


def _message(row: dict[str, object], run: RunInfo) -> str:
    what = "Mix Block Num" if row["field"] == "mix_block_num" else "Block Num"
    text = (
        f"run {run.index}, rank {run.rank}, stream {row['stream_id']}: {row['name']} "
        f"({row['core']}) {what} {row['blocks']} > {row['kind']} limit {row['limit']} "
        f"({row['source']})"
    )
    if row["core"] == "MIX_AIV":
        return text + "; MIX_AIV block semantics are undocumented: reported, not failed"
    if row["mode"] == "npugraph_ex":
        return text + "; not limited: may not be an Ascend C operator (npugraph_ex)"
    return text


def _violations(over: pl.DataFrame, run: RunInfo, room: int) -> list[CoreViolation]:
    """The first ``room`` rows (by start) of the small filtered frame, as CoreViolation."""
    if room <= 0 or over.height == 0:
        return []
    first = over.bottom_k(room, by="start_ns").sort("start_ns")
    return [
        CoreViolation(
            run=run.index,
            rank=run.rank,
            stream_id=row["stream_id"],
            name=row["name"],
            accelerator_core=row["accelerator_core"],
            block_num=row["block_num"],
            mix_block_num=row["mix_block_num"],
            limit=row["limit"],
            kind=row["kind"],
            start_ns=row["start_ns"],
            plan=row["plan"],
            message=_message(row, run),
            limit_source=row["source"],
            blocks_field=row["field"],
        )
        for row in first.to_dicts()
    ]


@dataclass(frozen=True)
class _RunRules:
    counts: tuple[int, int, int]  # checked, exempt, unchecked
    governed_by: dict[str, int]  # source label -> kernels it governs
    failing: pl.DataFrame  # over the limit: violations
    noted: pl.DataFrame  # over the limit: warnings (MIX_AIV, npugraph_ex)


def _check_rules(kernels: pl.DataFrame, limits: _Limits, run: RunInfo) -> _RunRules:
    frame = _governed(kernels, limits)
    labels = _source_labels(limits)
    counted = frame.select(
        ((pl.col("aic_source") == code) | (pl.col("aiv_source") == code))
        .fill_null(False)
        .sum()
        .alias(str(code))
        for code in range(len(labels))
    ).row(0)
    over = pl.concat([_over(frame, "aicore", limits), _over(frame, "vectorcore", limits)])
    return _RunRules(
        counts=_counts(frame),
        governed_by={label: int(n) for label, n in zip(labels, counted, strict=True)},
        failing=over.filter(~pl.col("warning")),
        noted=over.filter(pl.col("warning")),
    )


# --------------------------------------------------------------------------- contention


def _values_on(grid: I64, seg_s: I64, seg_e: I64, value: I64) -> I64:
    """A piecewise-constant function (sweep output) evaluated on grid segment starts."""
    if seg_s.size == 0:
        return np.zeros(grid.size, dtype=np.int64)
    idx = np.searchsorted(seg_s, grid, side="right") - 1
    safe = np.clip(idx, 0, None)
    inside = (idx >= 0) & (grid < seg_e[safe])
    return np.where(inside, value[safe], 0).astype(np.int64)


def _distinct(values: I64) -> I64:
    """Sorted distinct values (np.unique's hashing path is slow on large int64 arrays)."""
    ordered = np.sort(values)
    if ordered.size == 0:
        return ordered
    first: I64 = ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])]
    return first


@dataclass(frozen=True)
class _RunContention:
    intervals: list[ContentionInterval]
    count: int
    over_ns: dict[str, int]
    any_over_ns: int


def _names_of(names: pl.Series, selections: list[I64]) -> list[tuple[str, ...]]:
    """Distinct kernel names (first MAX_NAMES, in start order) of each selection, in one pass."""
    if not selections:
        return []
    group = np.repeat(np.arange(len(selections)), [s.size for s in selections])
    picked = pl.DataFrame({"g": group, "name": names.gather(np.concatenate(selections))})
    listed = (
        picked.unique(maintain_order=True)
        .group_by("g", maintain_order=True)
        .agg(pl.col("name").head(MAX_NAMES))
    )
    found = dict(
        zip(listed.get_column("g").to_list(), listed.get_column("name").to_list(), strict=True)
    )
    return [tuple(found.get(i, ())) for i in range(len(selections))]


def _contention(kernels: pl.DataFrame, device: DeviceCores, run: RunInfo) -> _RunContention:
    maxima = {"aicore": device.aicore, "vectorcore": device.vectorcore}
    k = (
        kernels.filter(
            ~pl.col("is_communication").fill_null(False)
            & pl.col("stream_id").is_not_null()
            & pl.col("start_ns").is_not_null()
            & pl.col("end_ns").is_not_null()
        )
        .with_columns(_CORE)
        .select(
            "name",
            "stream_id",
            "start_ns",
            "end_ns",
            pl.min_horizontal(_AIC_DEMAND.fill_null(0), pl.lit(max(device.aicore, 0))).alias(
                "aicore"
            ),
            pl.min_horizontal(_AIV_DEMAND.fill_null(0), pl.lit(max(device.vectorcore, 0))).alias(
                "vectorcore"
            ),
        )
        .sort("start_ns")
    )
    empty = _RunContention([], 0, {"aicore": 0, "vectorcore": 0}, 0)
    if k.height == 0:
        return empty
    starts = k.get_column("start_ns").to_numpy().astype(np.int64)
    ends = k.get_column("end_ns").to_numpy().astype(np.int64)
    streams = k.get_column("stream_id").to_numpy().astype(np.int64)
    weights = {kind: k.get_column(kind).to_numpy().astype(np.int64) for kind in maxima}
    # Busy streams: each stream's kernels merged first, so one stream counts once.
    merged = [merge(starts[streams == s], ends[streams == s]) for s in _distinct(streams)]
    if len(merged) < 2:
        return empty
    busy = sweep(np.concatenate([m[0] for m in merged]), np.concatenate([m[1] for m in merged]))
    # The demand sweeps' segments (between consecutive kernel starts / ends) are the
    # grid: merged stream bounds are kernel bounds, so the busy count is constant on each.
    sweeps = {kind: sweep(starts, ends, weights[kind]) for kind in maxima}
    seg_s, seg_e, _ = sweeps["aicore"]  # same times, so the same segments for both kinds
    length = seg_e - seg_s
    two_busy = _values_on(seg_s, *busy) >= 2
    over_any = np.zeros(seg_s.size, dtype=bool)
    intervals: list[ContentionInterval] = []
    count = 0
    over_ns: dict[str, int] = {}
    max_dur = int((ends - starts).max())
    for kind, maximum in maxima.items():
        demand = sweeps[kind][2]
        over = two_busy & (demand > maximum) if maximum > 0 else np.zeros(seg_s.size, dtype=bool)
        over_any |= over
        over_ns[kind] = int(length[over].sum())
        idx = np.flatnonzero(over)
        if idx.size == 0:
            continue
        first = np.flatnonzero(np.concatenate([[True], np.diff(idx) != 1]))
        last = np.concatenate([first[1:], [idx.size]]) - 1
        peak = np.maximum.reduceat(demand[idx], first)
        excess = np.add.reduceat((demand[idx] - maximum) * length[idx], first)
        count += first.size
        worst = np.argsort(-excess, kind="stable")[:MAX_CONTENTION]
        spans: list[tuple[int, int, int, int, I64]] = []
        for g in worst:  # at most MAX_CONTENTION intervals per run and kind
            a = int(seg_s[idx[first[g]]])
            b = int(seg_e[idx[last[g]]])
            lo = int(np.searchsorted(starts, a - max_dur, side="left"))
            hi = int(np.searchsorted(starts, b, side="left"))
            sel = lo + np.flatnonzero((ends[lo:hi] > a) & (weights[kind][lo:hi] > 0))
            spans.append((a, b, int(peak[g]), int(excess[g]), sel))
        names = _names_of(k.get_column("name"), [s[4] for s in spans])
        intervals += [
            ContentionInterval(
                run=run.index,
                rank=run.rank,
                start_ns=a,
                duration_ns=b - a,
                kind=kind,  # type: ignore[arg-type]
                demand=demand_peak,
                maximum=maximum,
                kernels=kernel_names,
                streams=tuple(int(s) for s in _distinct(streams[sel])),
                excess_block_ns=block_ns,
            )
            for (a, b, demand_peak, block_ns, sel), kernel_names in zip(spans, names, strict=True)
        ]
    return _RunContention(intervals, count, over_ns, int(length[over_any].sum()))


# --------------------------------------------------------------------------- entry point


def _configured(options: Options) -> _Limits:
    plans = tuple(
        p
        for p in options.plans
        if p.limit_core is not None
        and (p.limit_core.aicore is not None or p.limit_core.vectorcore is not None)
    )
    ge_global = None
    if options.device.ge_aicore_num is not None:
        ge_global = parse_aicore_num(options.device.ge_aicore_num, key="device.ge_aicore_num")
    dump = read_graph_dump(options.graph_dump) if options.graph_dump is not None else None
    return _Limits(plans, ge_global, dump)


def _applied(limits: _Limits, governed_by: dict[str, int]) -> tuple[AppliedLimit, ...]:
    out = [
        AppliedLimit(
            source="plan",
            aicore=p.limit_core.aicore,
            vectorcore=p.limit_core.vectorcore,
            mode=p.limit_core.mode,
            plan=p.name,
            kernels=governed_by.get(f"plan:{p.name}", 0),
        )
        for p in limits.plans
        if p.limit_core is not None  # always: _configured keeps only plans with one
    ]
    if limits.dump is not None:
        out.append(
            AppliedLimit(
                source="graph-dump",
                aicore=None,
                vectorcore=None,
                detail=f"{limits.dump.table.height} operator limit(s) from "
                + ", ".join(limits.dump.files[:3])
                + (f" (+{len(limits.dump.files) - 3} files)" if len(limits.dump.files) > 3 else ""),
                kernels=governed_by.get("graph-dump", 0),
            )
        )
    if limits.ge_global is not None:
        aic, aiv = limits.ge_global
        out.append(
            AppliedLimit(
                source="ge-global",
                aicore=aic,
                vectorcore=aiv,
                detail=f'aicore_num "{aic}|{aiv if aiv is not None else ""}"',
                kernels=governed_by.get("ge-global", 0),
            )
        )
    return tuple(out)


def check_cores(
    captures: Sequence[Capture], runs: Sequence[RunInfo], options: Options
) -> CoresResult:
    """Limit violations (all runs) and contention (warm runs); ``captures[i]`` is ``runs[i]``."""
    if len(captures) != len(runs):
        raise ValueError(f"{len(captures)} captures but {len(runs)} runs")
    device = resolve_device_cores(captures, options)
    limits = _configured(options)
    any_limit = bool(limits.plans) or limits.ge_global is not None or limits.dump is not None
    violations: list[CoreViolation] = []
    warnings: list[CoreViolation] = []
    n_violations = n_warnings = checked = exempt = unchecked = 0
    governed_by: dict[str, int] = {}
    contention: list[ContentionInterval] = []
    n_contention = any_over = warm_runs = 0
    over_kind = {"aicore": 0, "vectorcore": 0}
    by_rank: dict[int | None, int] = {}
    for capture, run in zip(captures, runs, strict=True):
        if any_limit:
            rules = _check_rules(capture.kernels, limits, run)
            c, e, u = rules.counts
            checked, exempt, unchecked = checked + c, exempt + e, unchecked + u
            for label, n in rules.governed_by.items():
                governed_by[label] = governed_by.get(label, 0) + n
            n_violations += rules.failing.height
            n_warnings += rules.noted.height
            violations += _violations(rules.failing, run, MAX_LISTED - len(violations))
            warnings += _violations(rules.noted, run, MAX_LISTED - len(warnings))
        if run.warm:
            warm_runs += 1
            found = _contention(capture.kernels, device, run)
            contention += found.intervals
            n_contention += found.count
            any_over += found.any_over_ns
            by_rank[run.rank] = by_rank.get(run.rank, 0) + found.any_over_ns
            for kind, ns in found.over_ns.items():
                over_kind[kind] += ns
    contention.sort(key=lambda c: (-c.excess_block_ns, -c.demand, c.run, c.start_ns))
    notes = device_notes(device, options)
    if limits.dump is not None:
        notes += limits.dump.notes
    for plan in limits.plans:
        if governed_by.get(f"plan:{plan.name}", 0) == 0:
            notes.append(
                f"plan {plan.name}: limit_core governs no kernel (no side operators found)"
            )
    if unchecked:
        notes.append(
            f"{unchecked} kernel(s) under a limit have no Accelerator Core or Block Num "
            "(Level0 capture?) and were not checked"
        )
    if warm_runs == 0:
        notes.append("no warm run: contention not swept")
    return CoresResult(
        device=device,
        violations=tuple(violations),
        warnings=tuple(warnings),
        contention=tuple(contention[:MAX_CONTENTION]),
        over_limit_ns=any_over,
        checked_kernels=checked,
        exempt_kernels=exempt,
        limits=_applied(limits, governed_by),
        unchecked_kernels=unchecked,
        violation_count=n_violations,
        warning_count=n_warnings,
        contention_count=n_contention,
        aicore_over_limit_ns=over_kind["aicore"],
        vectorcore_over_limit_ns=over_kind["vectorcore"],
        contention_runs=warm_runs,
        over_limit_by_rank=tuple(by_rank.items()),
        notes=tuple(notes),
    )
