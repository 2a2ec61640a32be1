"""Core-limit rules: each kernel's Block Num against the limit that governs it, per run
(:func:`run_rules`, small pieces a worker returns instead of its kernel table), and the
runs added up (:func:`combine_cores`).

The rules, which limit governs a kernel, and the npugraph_ex Ascend C case: docs/method.md,
"Core limits and block counts"; the contention sweep is :mod:`.contention`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import polars as pl

from overlap_check.measure.cores.contention import MAX_CONTENTION, RunContention
from overlap_check.measure.cores.device import device_notes
from overlap_check.model import (
    AppliedLimit,
    ContentionInterval,
    CoresResult,
    CoreViolation,
    DeviceCores,
    Options,
    Plan,
    RunInfo,
    rank_text,
)
from overlap_check.model.core_kinds import (
    AI_CORE,
    AI_VECTOR_CORE,
    AIC_BLOCKS,
    AIV_BLOCKS,
    EXEMPT_CORE,
    MIX_AIC,
    MIX_AIV,
    C,
    core_code,
    core_label,
)
from overlap_check.model.selection import named, side_expr
from overlap_check.model.table import is_compute
from overlap_check.readers.graph_dump import (
    GraphDumpLimits,
    operator_limits_for,
    parse_aicore_num,
    read_graph_dump,
)

# Operators known to be written in Ascend C (CANN's ops-transformer kernels), searched in
# kernel names: npugraph_ex's stream core limit applies to them, so exceeding it fails.
# docs/advice.md lists them; `[cores] ascend_c` in the config adds more.
ASCEND_C_OPERATORS = (
    "GroupedMatmul",
    "FusedInferAttentionScore",
    "PromptFlashAttention",
    "IncreFlashAttention",
    "FlashAttentionScore",
    "MoeInitRouting",
    "MoeFinalizeRouting",
    "MoeGatingTopK",
    "MoeDistributeDispatch",
    "MoeDistributeCombine",
    "MatmulAllReduce",
)
MAX_LISTED = 10_000  # violations / warnings kept in the result (all are counted)


@dataclass(frozen=True)
class Limits:
    """The configured limits: plans with a limit_core, GE's global value, a graph dump."""

    plans: tuple[Plan, ...]
    ge_global: tuple[int, int | None] | None
    dump: GraphDumpLimits | None
    ascend_c: tuple[str, ...] = ASCEND_C_OPERATORS  # kernel-name regexes of Ascend C operators

    @property
    def any(self) -> bool:
        return bool(self.plans) or self.ge_global is not None or self.dump is not None


# Where a kernel's limit comes from, as a small code (strings for 1M rows are costly):
# 0 = GE global, 1 = graph dump, 2 + i = the i-th plan with a limit_core.
_GLOBAL, _DUMP, _PLAN0 = 0, 1, 2


def _source_labels(limits: Limits) -> list[str]:
    return ["ge-global", "graph-dump", *(f"plan:{p.name}" for p in limits.plans)]


def _governed(kernels: pl.DataFrame, limits: Limits) -> pl.DataFrame:
    """Kernels with, per core kind, the limit governing them and its source code."""
    frame = kernels
    if limits.dump is not None:
        frame = operator_limits_for(frame, limits.dump)
    # Each plan's side-operator regex is evaluated once, into a column; an npugraph_ex
    # limit governs its whole stream (limited_stream)
    hits = [_limit_hit(plan, kernels).alias(f"_hit{i}") for i, plan in enumerate(limits.plans)]
    frame = frame.with_columns(core_code(frame), *hits)
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
    blocks = [AIC_BLOCKS.alias("aic_blocks"), AIV_BLOCKS.alias("aiv_blocks")]
    return frame.with_columns(cols + blocks)


def limited_stream(plan: Plan, kernels: pl.DataFrame) -> int | None:
    """The stream an npugraph_ex ``limit_core_num`` governs in this capture (docs/method.md,
    "Core limits and block counts"); None: no op of the plan ran."""
    if plan.side_stream is not None:
        return plan.side_stream
    compute = kernels.filter(is_compute(kernels.columns))

    def by_time(rows: pl.DataFrame) -> pl.DataFrame:  # most kernel time first (ties: lowest ID)
        t = (pl.col("end_ns") - pl.col("start_ns")).sum().alias("t")
        return rows.group_by("stream_id").agg(t).sort(["t", "stream_id"], descending=[True, False])

    spent = by_time(compute.filter(side_expr(plan, compute)))
    if not plan.name.endswith(MAIN_SUFFIX) and spent.height > 1:
        spent = spent.filter(pl.col("stream_id") != by_time(compute).item(0, "stream_id"))
    return None if spent.is_empty() else int(spent.item(0, "stream_id"))


def _limit_hit(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """The kernels a plan's limit governs: its side ops (GE: per operator), or with
    npugraph_ex every kernel on its limited stream."""
    if plan.limit_core is None or plan.limit_core.mode != "npugraph_ex":
        return side_expr(plan, kernels).fill_null(False)
    stream = limited_stream(plan, kernels)
    if stream is None:
        return pl.lit(False)
    return (is_compute(kernels.columns) & (pl.col("stream_id") == stream)).fill_null(False)


def _counts(frame: pl.DataFrame) -> tuple[int, int, int]:
    """(checked, exempt, unchecked) among kernels governed by a limit ("core" is never null)."""
    governed = pl.col("aic_limit").is_not_null() | pl.col("aiv_limit").is_not_null()
    exempt = governed & (pl.col("is_communication").fill_null(False) | (C == EXEMPT_CORE))
    aic_applies = pl.col("aic_limit").is_not_null() & C.is_in([AI_CORE, MIX_AIC, MIX_AIV])
    aiv_applies = pl.col("aiv_limit").is_not_null() & C.is_in([AI_VECTOR_CORE, MIX_AIC, MIX_AIV])
    checked = (aic_applies & pl.col("aic_blocks").is_not_null()) | (
        aiv_applies & pl.col("aiv_blocks").is_not_null()
    )
    unknown_core = governed & ~exempt & ~C.is_in([AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV])
    unchecked = unknown_core | (~checked & (aic_applies | aiv_applies))
    row = frame.select(
        checked.sum().alias("checked"),
        exempt.sum().alias("exempt"),
        unchecked.sum().alias("unchecked"),
    ).row(0)
    return int(row[0]), int(row[1]), int(row[2])


def _over(frame: pl.DataFrame, kind: str, limits: Limits) -> pl.DataFrame:
    """Kernels whose blocks exceed their limit of one kind (a small frame), labelled."""
    k = "aic" if kind == "aicore" else "aiv"
    over = frame.filter(pl.col(f"{k}_blocks") > pl.col(f"{k}_limit"))
    labels = _source_labels(limits)
    codes = range(len(labels))
    modes = ["ge", "ge", *(p.limit_core.mode if p.limit_core else "ge" for p in limits.plans)]
    plans = [None, None, *(p.name for p in limits.plans)]
    source = pl.col(f"{k}_source")
    mix_core = MIX_AIV if kind == "aicore" else MIX_AIC
    return (
        over.select(
            pl.col(
                "stream_id", "name", "start_ns", "block_num", "mix_block_num", "accelerator_core"
            ),
            core_label().alias("core"),
            pl.col(f"{k}_blocks").alias("blocks"),
            pl.col(f"{k}_limit").alias("limit"),
            source.replace_strict(codes, labels, return_dtype=pl.String).alias("source"),
            source.replace_strict(codes, modes, return_dtype=pl.String).alias("mode"),
            source.replace_strict(codes, plans, return_dtype=pl.String).alias("plan"),
            pl.when(pl.col("core") == mix_core)
            .then(pl.lit("mix_block_num"))
            .otherwise(pl.lit("block_num"))
            .alias("field"),
            pl.lit(kind).alias("kind"),
        )
        .with_columns(named(over, "|".join(f"(?:{p})" for p in limits.ascend_c)).alias("ascend_c"))
        .with_columns(
            (
                (pl.col("core") == "MIX_AIV")
                | ((pl.col("mode") == "npugraph_ex") & ~pl.col("ascend_c"))
            ).alias("warning")
        )
    )


def _message(row: dict[str, object], run: RunInfo) -> str:
    what = "Mix Block Num" if row["field"] == "mix_block_num" else "Block Num"
    text = (
        f"run {run.index}, rank {rank_text(run.rank)}, stream {row['stream_id']}: {row['name']} "
        f"({row['core']}) {what} {row['blocks']} > {row['kind']} limit {row['limit']} "
        f"({row['source']})"
    )
    if row["core"] == "MIX_AIV":
        return text + "; MIX_AIV block semantics are undocumented: reported, not failed"
    if row["mode"] == "npugraph_ex" and row["ascend_c"]:
        return text + "; an Ascend C operator, which npugraph_ex's stream limit governs"
    if row["mode"] == "npugraph_ex":
        return text + "; not limited: may not be an Ascend C operator (npugraph_ex)"
    return text


_AS_READ = ("stream_id", "name", "accelerator_core", "block_num", "mix_block_num", "limit",
            "kind", "start_ns", "plan")  # fmt: skip  # CoreViolation fields named as the rows'


def _violations(over: pl.DataFrame, run: RunInfo, room: int) -> list[CoreViolation]:
    """The first ``room`` rows of a frame of violations (already in start order)."""
    if room <= 0 or over.height == 0:
        return []
    return [
        CoreViolation(
            run=run.index,
            rank=run.rank,
            **{name: row[name] for name in _AS_READ},
            message=_message(row, run),
            limit_source=row["source"],
            blocks_field=row["field"],
        )
        for row in over.head(room).iter_rows(named=True)
    ]


@dataclass(frozen=True)
class RunRules:
    """The limit checks of one run: counts, and the first violations / warnings by start."""

    counts: tuple[int, int, int]  # checked, exempt, unchecked
    governed_by: dict[str, int]  # source label -> kernels it governs
    failing: pl.DataFrame  # over the limit: violations (the first MAX_LISTED by start)
    noted: pl.DataFrame  # over the limit: warnings (MIX_AIV, npugraph_ex), the first MAX_LISTED
    failing_count: int
    noted_count: int


def run_rules(kernels: pl.DataFrame, limits: Limits) -> RunRules:
    """Every kernel of one run against the limit that governs it."""
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
    # Only the first MAX_LISTED of a run can be listed: the rest is counted, not kept.
    first = over.sort("start_ns", nulls_last=True, maintain_order=True)
    failing = first.filter(~pl.col("warning"))
    noted = first.filter(pl.col("warning"))
    return RunRules(
        counts=_counts(frame),
        governed_by={label: int(n) for label, n in zip(labels, counted, strict=True)},
        failing=failing.head(MAX_LISTED),
        noted=noted.head(MAX_LISTED),
        failing_count=failing.height,
        noted_count=noted.height,
    )


MAIN_SUFFIX = ":main"  # the name of a plan's main-path limit: "plan:<name>:main" in reports


def main_path_limit(plan: Plan) -> Plan:
    """A plan's ``main_limit_core`` as a limit of its own, after every side limit (first
    wins): it governs the kernels on ``main_stream``, else those the dominator regex names."""
    return Plan(
        name=plan.name + MAIN_SUFFIX,
        side=None if plan.main_stream is not None else plan.dominator,
        side_stream=plan.main_stream,
        limit_core=plan.main_limit_core,
    )


def configured_limits(options: Options) -> Limits:
    """The limits the options configure (reads the graph dump, when one is given)."""
    plans = tuple(
        p
        for p in options.plans
        if p.limit_core is not None
        and (p.limit_core.aicore is not None or p.limit_core.vectorcore is not None)
    ) + tuple(main_path_limit(p) for p in options.plans if p.main_limit_core is not None)
    ge_global = None
    if options.device.ge_aicore_num is not None:
        ge_global = parse_aicore_num(options.device.ge_aicore_num, key="device.ge_aicore_num")
    dump = read_graph_dump(options.graph_dump) if options.graph_dump is not None else None
    return Limits(plans, ge_global, dump, ASCEND_C_OPERATORS + options.ascend_c)


def _applied(limits: Limits, governed_by: dict[str, int]) -> tuple[AppliedLimit, ...]:
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


def combine_cores(
    device: DeviceCores,
    limits: Limits,
    runs: Sequence[RunInfo],
    rules: Sequence[RunRules | None],
    contention: Sequence[RunContention | None],
    options: Options,
) -> CoresResult:
    """The CoresResult of all runs from their pieces (``rules[i]``, ``contention[i]`` belong
    to ``runs[i]``; rules None: no limit; the contention of cold runs is left out)."""
    violations: list[CoreViolation] = []
    warnings: list[CoreViolation] = []
    n_violations = n_warnings = checked = exempt = unchecked = 0
    governed_by: Counter[str] = Counter()
    intervals: list[ContentionInterval] = []
    n_contention = any_over = warm_runs = 0
    over_kind: Counter[str] = Counter()
    by_rank: Counter[int | None] = Counter()
    for run, checks, found in zip(runs, rules, contention, strict=True):
        if limits.any and checks is not None:
            c, e, u = checks.counts
            checked, exempt, unchecked = checked + c, exempt + e, unchecked + u
            governed_by.update(checks.governed_by)
            n_violations += checks.failing_count
            n_warnings += checks.noted_count
            violations += _violations(checks.failing, run, MAX_LISTED - len(violations))
            warnings += _violations(checks.noted, run, MAX_LISTED - len(warnings))
        if run.warm:
            if found is None:
                raise ValueError(f"run {run.index} of rank {run.rank} is warm but was not swept")
            warm_runs += 1
            intervals += [replace(i, run=run.index, rank=run.rank) for i in found.intervals]
            n_contention += found.count
            any_over += found.any_over_ns
            by_rank[run.rank] += found.any_over_ns
            over_kind.update(found.over_ns)
    intervals.sort(key=lambda c: (-c.excess_block_ns, -c.demand, c.run, c.start_ns))
    notes = device_notes(device, options)
    if limits.dump is not None:
        notes += limits.dump.notes
    for plan in limits.plans:
        if governed_by.get(f"plan:{plan.name}", 0) == 0:
            what = (
                "main_limit_core governs no kernel (nothing on the main stream or dominator)"
                if plan.name.endswith(MAIN_SUFFIX)
                else "limit_core governs no kernel (no side operators found)"
            )
            notes.append(f"plan {plan.name.removesuffix(MAIN_SUFFIX)}: {what}")
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
        contention=tuple(intervals[:MAX_CONTENTION]),
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
