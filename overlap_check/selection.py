"""Which kernels a plan names: its side operators and its dominator.

One definition, used by the overlap engine and the core-limit checks alike.
Regexes are searched (not anchored) in the kernel name, as the config says
(config/checks.validate_regex checks that they compile, without polars).
"""

from __future__ import annotations

import polars as pl

from overlap_check.model import Plan
from overlap_check.table import is_compute


def named(kernels: pl.DataFrame, pattern: str) -> pl.Expr:
    """Boolean expression on ``kernels``: the name contains ``pattern`` (searched, not
    anchored). Names repeat layer after layer: the regex runs once per distinct name and
    each row is a hash lookup."""
    names = kernels.get_column("name").unique()
    return pl.col("name").is_in(names.filter(names.str.contains(pattern)).implode())


def side_expr(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """Boolean expression on ``kernels``: the kernel is one of the plan's side operators.

    With ``side`` given: every compute kernel whose name matches, on ANY stream
    (placement is checked separately, so side ops left on the main stream are
    still found). Without ``side``: every compute kernel on ``side_stream``.
    A communication or copy plan (``side_kind``) selects communication tasks or copy
    tasks instead, by ``side`` and, when given, ``side_stream`` both.
    """
    if plan.side_kind != "compute":
        return _task_side_expr(plan, kernels)
    if plan.side is not None:
        return is_compute(kernels.columns) & named(kernels, plan.side)
    if plan.side_stream is not None:
        return is_compute(kernels.columns) & (pl.col("stream_id") == plan.side_stream)
    return pl.lit(False)


SIDE_KIND_WORDS = {
    "compute": "compute kernel",
    "communication": "communication task",
    "copy": "copy task",
}  # how messages name one side op of each kind


def _task_side_expr(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """The communication or copy tasks a plan names (communication rows carry no Stream
    ID in the readers, so ``side_stream`` matches none of them)."""
    if plan.side_kind == "copy":
        expr = pl.col("is_copy") if "is_copy" in kernels.columns else pl.lit(False)
    else:
        expr = pl.col("is_communication")
    if plan.side is not None:
        expr = expr & named(kernels, plan.side)
    if plan.side_stream is not None:
        expr = expr & (pl.col("stream_id") == plan.side_stream)
    return expr.fill_null(False)


def dominator_expr(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """Boolean expression on ``kernels``: a compute kernel, on any stream, whose name
    matches the plan's dominator regex (none without one: the engine then takes the
    longest main-stream kernel of each occurrence)."""
    if plan.dominator is None:
        return pl.lit(False)
    return is_compute(kernels.columns) & named(kernels, plan.dominator)


MODULE_SCOPE = "module:"


def module_scope(side: str | None) -> str | None:
    """The module name of a ``module:Name`` selection, else None."""
    if side is not None and side.startswith(MODULE_SCOPE):
        return side[len(MODULE_SCOPE) :].strip()
    return None


def restricted_side_expr(side: str | None, side_stream: int | None, op_type: str | None) -> pl.Expr:
    """Boolean expression: a side op when every given criterion holds (docs/hidden-fraction.md).

    ``side`` (name regex), ``side_stream`` and ``op_type`` (regex on the operator type)
    all restrict the selection: real kernel names (``aclnnMatmul_MatMulV3Common_MatMulV3``)
    run on both streams, so a name regex alone also picks main-stream work. Nothing
    given selects nothing. ``side = "module:SharedExpert"`` selects the kernels launched
    inside that module (column ``module``, from readers.modules).
    """
    if side is None and side_stream is None and op_type is None:
        return pl.lit(False)
    expr = is_compute(("is_copy",))  # reader and conform() tables carry is_copy
    module = module_scope(side)
    if module is not None:  # needs readers.modules.with_modules' column
        expr = expr & (pl.col("module") == module)
    elif side is not None:
        expr = expr & pl.col("name").str.contains(side)
    if op_type is not None:
        expr = expr & pl.col("op_type").fill_null("").str.contains(op_type)
    if side_stream is not None:
        expr = expr & (pl.col("stream_id") == side_stream)
    return expr.fill_null(False)


def stayed_off_side(
    kernels: pl.DataFrame, side: str | None, op_type: str | None, side_stream: int
) -> pl.DataFrame:
    """Placement (3a): the ops the name / type regexes select that ran off the side stream.

    One row per (label, stream) with ``count``, and ``moved``: how many of that label did
    run on the side stream (0: none of them left the main stream). The label is the op
    type where known, else the kernel name. Sorted by count, most first.
    """
    matches = kernels.filter(restricted_side_expr(side, None, op_type)).with_columns(
        pl.col("op_type").fill_null(pl.col("name")).alias("label")
    )
    moved = (
        matches.filter(pl.col("stream_id") == side_stream)
        .group_by("label")
        .agg(pl.len().cast(pl.Int64).alias("moved"))
    )
    return (
        matches.filter(pl.col("stream_id") != side_stream)
        .group_by("label", "stream_id")
        .agg(pl.len().cast(pl.Int64).alias("count"))
        .join(moved, on="label", how="left")
        .with_columns(pl.col("moved").fill_null(0))
        .sort(["count", "label", "stream_id"], descending=[True, False, False])
        .select("label", "stream_id", "count", "moved")
    )


def stayed_phrases(stayed: pl.DataFrame) -> list[str]:
    """``SwiGlu x20 on stream 2`` per row of :func:`stayed_off_side`."""
    return [
        f"{label} x{count} on stream {stream}"
        for label, stream, count in stayed.select("label", "stream_id", "count").iter_rows()
    ]
