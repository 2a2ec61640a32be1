"""Which kernels a plan names: its side operators and its dominator, one definition for the
overlap engine and the core-limit checks alike (docs/method.md, "Which kernels a plan
names"). Regexes are searched, not anchored."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from overlap_check.model import MODULE_SCOPE, Plan
from overlap_check.model.table import is_compute


def named(kernels: pl.DataFrame, pattern: str) -> pl.Expr:
    """The name contains ``pattern``. Names repeat layer after layer: the regex runs once per
    distinct name and each row is a hash lookup."""
    names = kernels.get_column("name").unique()
    return pl.col("name").is_in(names.filter(names.str.contains(pattern)).implode())


def side_expr(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """The plan's side operators: :func:`restricted_side_expr`, or for a communication or
    copy plan its tasks by ``side`` and ``side_stream``. Without ``side_stream``, matches
    on any stream (plans.on_main leaves out the main stream's)."""
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
    """A compute kernel, on any stream, that the dominator regex names (none without one)."""
    if plan.dominator is None:
        return pl.lit(False)
    return is_compute(kernels.columns) & named(kernels, plan.dominator)


def plan_columns(plans: Sequence[Plan], kernels: pl.DataFrame) -> tuple[str, ...]:
    """The kernel columns the plans' selections read beyond the analysis columns (which
    hold op_type): the module-scope columns of ``module:`` plans."""
    if not plans:
        return ()
    return tuple(c for c in kernels.columns if c.startswith(MODULE_SCOPE))


def judges_races(plan: Plan) -> bool:
    """Whether a plan's joins and lag are judged as races: a compute plan with a named dominator
    (a communication or copy task running on is the pipelining such plans want; a dominator
    that is only the longest main kernel is a guess: docs/hidden-fraction.md)."""
    return plan.side_kind == "compute" and plan.dominator is not None


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
    """A compute side op: every criterion given holds, nothing given selects nothing
    (docs/hidden-fraction.md, "Selection with real kernel names"). ``kernels``: the table
    the expression is for, when known (the name regex then runs once per distinct name)."""
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
