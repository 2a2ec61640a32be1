"""Which kernels a plan names: its side operators and its dominator.

One definition, used by the overlap engine and the core-limit checks alike.
Regexes are searched (not anchored) in the kernel name, as the config says
(config/checks.validate_regex checks that they compile, without polars).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from overlap_check.model import MODULE_SCOPE, Plan

_COMPUTE = ~pl.col("is_communication") & pl.col("stream_id").is_not_null()


def named(kernels: pl.DataFrame, pattern: str) -> pl.Expr:
    """Boolean expression on ``kernels``: the name contains ``pattern`` (searched, not
    anchored). Names repeat layer after layer: the regex runs once per distinct name and
    each row is a hash lookup."""
    names = kernels.get_column("name").unique()
    return pl.col("name").is_in(names.filter(names.str.contains(pattern)).implode())


def side_expr(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """Boolean expression on ``kernels``: the kernel is one of the plan's side operators.

    :func:`restricted_side_expr` of the plan's ``side``, ``side_stream`` and ``op_type``:
    every criterion given restricts the selection. Without ``side_stream``, matches on
    any stream (the engine then leaves out the main stream's, see plans.tag).
    """
    return restricted_side_expr(plan.side, plan.side_stream, plan.op_type, kernels)


def dominator_expr(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """Boolean expression on ``kernels``: a compute kernel, on any stream, whose name
    matches the plan's dominator regex (none without one: the engine then takes the
    longest main-stream kernel of each occurrence)."""
    if plan.dominator is None:
        return pl.lit(False)
    return _COMPUTE & named(kernels, plan.dominator)


def plan_columns(plans: Sequence[Plan], kernels: pl.DataFrame) -> tuple[str, ...]:
    """The kernel columns the plans' selections read beyond the analysis columns."""
    if not plans:
        return ()
    return ("op_type", *(c for c in kernels.columns if c.startswith(MODULE_SCOPE)))


def module_scope(side: str | None) -> str | None:
    """The module name of a ``module:Name`` selection, else None."""
    if side is not None and side.startswith(MODULE_SCOPE):
        return side[len(MODULE_SCOPE) :].strip()
    return None


def restricted_side_expr(
    side: str | None,
    side_stream: int | None,
    op_type: str | None,
    kernels: pl.DataFrame | None = None,
) -> pl.Expr:
    """Boolean expression: a side op when every given criterion holds (docs/hidden-fraction.md).

    ``side`` (name regex), ``side_stream`` and ``op_type`` (regex on the operator type)
    all restrict the selection: real kernel names (``aclnnMatmul_MatMulV3Common_MatMulV3``)
    run on both streams, so a name regex alone also picks main-stream work. Nothing
    given selects nothing. ``side = "module:SharedExpert"`` selects the kernels launched
    inside that module, at any depth (column ``module:SharedExpert``, from
    readers.modules.module_scopes). ``kernels``: the table
    the expression is for, when known (the name regex then runs once per distinct name).
    """
    if side is None and side_stream is None and op_type is None:
        return pl.lit(False)
    expr = _COMPUTE
    module = module_scope(side)
    if module is not None:  # needs the column readers.modules.module_scopes adds
        column = f"{MODULE_SCOPE}{module}"
        if kernels is not None and column not in kernels.columns:
            return pl.lit(False)  # the capture recorded no module scope
        expr = expr & pl.col(column).is_not_null()
    elif side is not None:
        expr = expr & (
            pl.col("name").str.contains(side) if kernels is None else named(kernels, side)
        )
    if op_type is not None:
        expr = expr & pl.col("op_type").fill_null("").str.contains(op_type)
    if side_stream is not None:
        expr = expr & (pl.col("stream_id") == side_stream)
    return expr.fill_null(False)


def label_counts(
    kernels: pl.DataFrame, side: str | None, side_stream: int | None, op_type: str | None
) -> pl.DataFrame:
    """The ops the name / type regexes select on any stream (without either: the kernels
    on ``side_stream``), counted per (``label``, ``stream_id``) in ``count``. The label is
    the op type where known, else the kernel name."""
    by_regex = side is not None or op_type is not None
    chosen = restricted_side_expr(side, None if by_regex else side_stream, op_type, kernels)
    return (
        kernels.filter(chosen)
        .group_by(pl.col("op_type").fill_null(pl.col("name")).alias("label"), "stream_id")
        .agg(pl.len().cast(pl.Int64).alias("count"))
    )


def stayed(counts: pl.DataFrame, off_side: pl.Expr) -> pl.DataFrame:
    """Placement (3a) from :func:`label_counts` (of one capture or several, concatenated):
    the rows where ``off_side`` holds (the ops that did not move), summed per (label,
    stream) in ``count``, with ``moved``: how many of that label did move (0: none of
    them left the main stream). Sorted by count, most first."""
    counts = counts.group_by("label", "stream_id").agg(pl.col("count").sum())
    moved = counts.filter(~off_side).group_by("label").agg(pl.col("count").sum().alias("moved"))
    return (
        counts.filter(off_side)
        .join(moved, on="label", how="left")
        .with_columns(pl.col("moved").fill_null(0).cast(pl.Int64))
        .sort(["count", "label", "stream_id"], descending=[True, False, False])
        .select("label", "stream_id", "count", "moved")
    )


def stayed_off_side(
    kernels: pl.DataFrame, side: str | None, op_type: str | None, side_stream: int
) -> pl.DataFrame:
    """:func:`stayed` of one kernel table: the ops the name / type regexes select that ran
    off the side stream."""
    counts = label_counts(kernels, side, side_stream, op_type)
    return stayed(counts, pl.col("stream_id") != side_stream)


def stayed_phrases(rows: pl.DataFrame) -> list[str]:
    """``SwiGlu x20 on stream 2`` per row of :func:`stayed`."""
    return [
        f"{label} x{count} on stream {stream}"
        for label, stream, count in rows.select("label", "stream_id", "count").iter_rows()
    ]
