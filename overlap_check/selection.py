"""Which kernels a plan names: its side operators and its dominator.

One definition, used by the overlap engine and the core-limit checks alike.
Regexes are searched (not anchored) in the kernel name, as the config says.
"""

from __future__ import annotations

import re

import polars as pl

from overlap_check.errors import ConfigError
from overlap_check.model import Plan

_COMPUTE = ~pl.col("is_communication") & pl.col("stream_id").is_not_null()


def validate_regex(pattern: str, *, key: str, path: str | None = None) -> str:
    """Return the pattern, or raise ConfigError naming the key when it does not compile."""
    try:
        re.compile(pattern)
    except re.error as err:
        raise ConfigError(f"bad regular expression {pattern!r}: {err}", path=path, key=key) from err
    return pattern


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
    """
    if plan.side is not None:
        return _COMPUTE & named(kernels, plan.side)
    if plan.side_stream is not None:
        return _COMPUTE & (pl.col("stream_id") == plan.side_stream)
    return pl.lit(False)


def dominator_expr(plan: Plan, kernels: pl.DataFrame) -> pl.Expr:
    """Boolean expression on ``kernels``: a compute kernel, on any stream, whose name
    matches the plan's dominator regex (none without one: the engine then takes the
    longest main-stream kernel of each occurrence)."""
    if plan.dominator is None:
        return pl.lit(False)
    return _COMPUTE & named(kernels, plan.dominator)
