"""Which kernels a plan names: its side operators and its dominator.

One definition, used by the overlap engine and the core-limit checks alike.
Regexes are searched (not anchored) in the kernel name, as the config says
(config/checks.validate_regex checks that they compile, without polars).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from overlap_check.model import MODULE_SCOPE, Plan
from overlap_check.model.table import is_compute


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
    any stream (the engine then leaves out the main stream's, see plans.tag). A
    communication or copy plan (``side_kind``) selects communication tasks or copy tasks
    instead, by ``side`` and, when given, ``side_stream`` both.
    """
    if plan.side_kind != "compute":
        return _task_side_expr(plan, kernels)
    return restricted_side_expr(plan.side, plan.side_stream, plan.op_type, kernels)


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


def plan_columns(plans: Sequence[Plan], kernels: pl.DataFrame) -> tuple[str, ...]:
    """The kernel columns the plans' selections read beyond the analysis columns (which
    hold op_type): the module-scope columns of ``module:`` plans."""
    if not plans:
        return ()
    return tuple(c for c in kernels.columns if c.startswith(MODULE_SCOPE))


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
    # without the table, assume it carries is_copy (reader and conform() tables do)
    expr = is_compute(("is_copy",) if kernels is None else kernels.columns)
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
