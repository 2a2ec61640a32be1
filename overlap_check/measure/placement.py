"""Placement (3a): which of a plan's side operators stayed off the side stream, per layer, with
the evidence that they are side work (docs/method.md)."""

from __future__ import annotations

import numpy as np
import polars as pl

from overlap_check.measure.layering import assign_layers


def layered_counts(tagged: pl.DataFrame) -> pl.DataFrame:
    """The ops selected in ``_named`` (plans.tag) counted per (``label``, ``stream_id``,
    ``layer``) in ``count``; the layer is the dominator instance (``_dom``, on the stream
    where they spent the most time) each op belongs to, -1 without one."""
    ops = tagged.filter("_named")
    layer = np.full(ops.height, -1, dtype=np.int64)
    doms = tagged.filter("_dom")
    if doms.height and ops.height:  # the stream where they spent the most time, by start
        time = (pl.col("end_ns") - pl.col("start_ns")).sum().alias("t")
        spent = doms.group_by("stream_id").agg(time)
        top = spent.sort(["t", "stream_id"], descending=[True, False]).item(0, "stream_id")
        doms = doms.filter(pl.col("stream_id") == top).sort("start_ns")
        layer = assign_layers(
            ops.get_column("start_ns").to_numpy(),
            ops.get_column("end_ns").to_numpy(),
            doms.get_column("start_ns").to_numpy(),
            doms.get_column("end_ns").to_numpy(),
        )
    return counted_by_label(ops.with_columns(pl.Series("layer", layer, dtype=pl.Int64)))


def counted_by_label(ops: pl.DataFrame) -> pl.DataFrame:
    """``ops`` counted per (``label``, ``stream_id``, ``layer``: -1 where the ops have no
    layer column) in ``count``; the label is the op type where known, else the name."""
    name = pl.col("name")
    label = pl.col("op_type").fill_null(name) if "op_type" in ops.columns else name
    layer = pl.col("layer") if "layer" in ops.columns else pl.lit(-1, pl.Int64).alias("layer")
    return ops.group_by(label.alias("label"), "stream_id", layer).agg(
        pl.len().cast(pl.Int64).alias("count")
    )


def stayed(counts: pl.DataFrame, off_side: pl.Expr, scoped: bool = False) -> pl.DataFrame:
    """Placement (3a) from :func:`layered_counts` (of one sample or several, told apart by
    optional ``capture`` and ``sample`` columns): the ops named as not moved (``off_side``)
    per (label, stream) in ``count``, most first, with ``moved``: how many of that label
    did move. Which are named: docs/hidden-fraction.md, "Selection with real kernel names";
    ``scoped`` (a ``module:`` selection): all of them."""
    keys = [c for c in ("capture", "sample", "layer") if c in counts.columns]
    tagged = counts.with_columns(off_side.fill_null(False).alias("_off"))
    on_side = tagged.filter(~pl.col("_off"))
    moved = on_side.group_by("label").agg(pl.col("count").sum().alias("moved"))
    per_layer = on_side.group_by(*keys, "label").agg(pl.col("count").sum().alias("_side"))
    most = per_layer.group_by("label").agg(pl.col("_side").max().alias("_most"))
    off = (
        tagged.filter(pl.col("_off"))
        .join(moved, on="label", how="left")
        .join(per_layer, on=[*keys, "label"], how="left")
        .join(most, on="label", how="left")
        .with_columns(
            pl.col("moved").fill_null(0).cast(pl.Int64),
            pl.col("_side").fill_null(0),
            pl.col("_most").fill_null(0),
        )
    )
    has_layer = pl.col("layer") >= 0 if "layer" in off.columns else pl.lit(False)
    short = (pl.col("_most") - pl.col("_side")).clip(lower_bound=0)
    claimed = (
        pl.when((pl.col("moved") == 0) | scoped)
        .then(pl.col("count"))
        .when(has_layer)
        .then(pl.min_horizontal(pl.col("count"), short))
        .otherwise(0)
    )
    return (
        off.with_columns(claimed.cast(pl.Int64).alias("count"))
        .group_by("label", "stream_id")
        .agg(pl.col("count").sum(), pl.col("moved").first())
        .filter(pl.col("count") > 0)
        .sort(["count", "label", "stream_id"], descending=[True, False, False])
        .select("label", "stream_id", "count", "moved")
    )


def stayed_phrases(rows: pl.DataFrame) -> list[str]:
    """``SwiGlu x20 on stream 2`` per row of :func:`stayed`."""
    return [
        f"{label} x{count} on stream {stream}"
        for label, stream, count in rows.select("label", "stream_id", "count").iter_rows()
    ]
