"""Which kernels a plan names: its side operators and its dominator.

One definition, used by the overlap engine and the core-limit checks alike.
Regexes are searched (not anchored) in the kernel name, as the config says
(config/checks.validate_regex checks that they compile, without polars).
"""

from __future__ import annotations

import polars as pl

from overlap_check.model import Plan

_COMPUTE = ~pl.col("is_communication") & pl.col("stream_id").is_not_null()


def side_expr(plan: Plan) -> pl.Expr:
    """Boolean expression: the kernel is one of the plan's side operators.

    With ``side`` given: every compute kernel whose name matches, on ANY stream
    (placement is checked separately, so side ops left on the main stream are
    still found). Without ``side``: every compute kernel on ``side_stream``.
    """
    if plan.side is not None:
        return _COMPUTE & pl.col("name").str.contains(plan.side)
    if plan.side_stream is not None:
        return _COMPUTE & (pl.col("stream_id") == plan.side_stream)
    return pl.lit(False)


def dominator_expr(plan: Plan, main_stream: int | None) -> pl.Expr:
    """Boolean expression: the kernel is a dominator candidate of the plan.

    With ``dominator`` given: compute kernels whose name matches (on the main
    stream when one is known). Without it: every kernel on the main stream (the
    engine then takes the longest one per occurrence).
    """
    on_main = (pl.col("stream_id") == main_stream) if main_stream is not None else pl.lit(True)
    if plan.dominator is not None:
        return _COMPUTE & on_main & pl.col("name").str.contains(plan.dominator)
    if main_stream is None:
        return pl.lit(False)
    return _COMPUTE & on_main
