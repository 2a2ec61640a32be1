"""The innermost host call that holds each point in time: a kernel's launching runtime call
within its operator, an operator within its nn.Module (Ascend trace_view flows and Kineto traces
alike). Calls nest properly, so each thread's sorted call bounds and a running depth cut time
into stretches owned by one innermost call: after a start, that call; after an end at depth d,
the last call that started at depth d (an as-of join by depth). Each point then finds its
stretch by an as-of join on time."""

from __future__ import annotations

import polars as pl


def innermost_calls(calls: pl.DataFrame, points: pl.DataFrame) -> pl.Series:
    """Per point (``thread``, ``launch_ns``), the index in ``calls`` of the innermost call
    holding it (null: none); properly nested calls."""
    indexed = calls.with_row_index("call").with_columns(pl.col("call").cast(pl.Int64))
    bounds = pl.concat(
        [
            indexed.select(
                "thread", "call", t="start_ns", step=pl.lit(1), order=-pl.col("end_ns"), tie="call"
            ),
            indexed.select(
                "thread",
                "call",
                t="end_ns",
                step=pl.lit(-1),
                order=-pl.col("start_ns"),
                tie=-pl.col("call"),
            ),
        ]
    )
    # at one time: ends first (a call does not hold its end), outer starts before inner;
    # calls with the same bounds nest in file order (the later one is inside)
    bounds = (
        bounds.sort(["thread", "t", "step", "order", "tie"])
        .with_row_index("pos")
        .with_columns(
            pl.col("step").cum_sum().over("thread").alias("depth"),
            pl.col("pos").cast(pl.Int64),
        )
    )
    opened = bounds.filter(pl.col("step") == 1).select("thread", "depth", "pos", "call")
    closed = (
        bounds.filter(pl.col("step") == -1)
        .drop("call")
        .sort("pos")
        .join_asof(
            opened.sort("pos"),
            on="pos",
            by=["thread", "depth"],
            strategy="backward",
            check_sortedness=False,
        )
    )
    cuts = (
        pl.concat(
            [
                bounds.filter(pl.col("step") == 1).select("thread", "t", "pos", "call"),
                closed.select("thread", "t", "pos", "call"),
            ]
        )
        .sort("pos")
        .unique(["thread", "t"], keep="last", maintain_order=True)  # the state after them all
        .sort("t")
    )
    found = (
        points.with_row_index("point")
        .sort("launch_ns")
        .join_asof(
            cuts.select("thread", "t", "call"),
            left_on="launch_ns",
            right_on="t",
            by="thread",
            strategy="backward",
            check_sortedness=False,  # sorted by time; the by-groups keep that order
        )
        .sort("point")
    )
    return found.get_column("call")
