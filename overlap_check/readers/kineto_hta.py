"""HolisticTraceAnalysis' communication/compute overlap of one Kineto trace, reproduced.

HTA's rules, and how they differ from ours: docs/formats.md, "PyTorch profiler (Kineto) traces",
communication/compute overlap. Its float64 rounding is done on purpose, so the figure is HTA's
own."""

from __future__ import annotations

import polars as pl

from overlap_check.model.intervals import intersection_length, union_length


def _float(text: pl.Expr) -> pl.Expr:
    """``float(text.strip('"'))`` of a raw JSON value, null where that fails."""
    return text.str.strip_chars('"').str.strip_chars().cast(pl.Float64, strict=False)


def hta_comm_overlap(frame: pl.DataFrame) -> float | None:
    """HTA's ``comp_comm_overlap_pctg`` of one rank's trace (module docstring), from
    :func:`readers.kineto_events.event_frame`'s columns."""
    rounded = not frame.get_column("ts").str.contains(r"^-?[0-9]+$").all()
    ts, dur = _float(pl.col("ts")), _float(pl.col("dur"))
    host = pl.col("stream").fill_null(-1) == -1
    timed = frame.filter(
        pl.col("x") & ~pl.col("cat_null") & (pl.col("cat") != "Trace").fill_null(True)
    ).with_columns(ts.alias("at"), dur.alias("length"), pl.col("correlation").fill_null(-1))
    timed = timed.drop_nulls(["at", "length"]).with_columns(
        (pl.col("at").ceil() if rounded else pl.col("at")).alias("order")
    )
    steps = timed.filter(pl.col("name").str.starts_with("ProfilerStep") & host)
    if steps.get_column("name").n_unique() > 1:
        last = steps.get_column("order").max()
        kept = timed.filter(host & (pl.col("order") < last)).get_column("correlation")
        timed = timed.filter(pl.col("correlation").is_in(kept.implode()))
    name = pl.col("name").fill_null("")
    start, end = pl.col("at"), pl.col("at") + pl.col("length")
    if rounded:
        start, end = start.ceil(), end.floor()
    spans = timed.filter(
        ~host
        & ~name.str.contains("Memcpy", literal=True)
        & ~name.str.contains("Memset", literal=True)
    ).select(
        start.cast(pl.Int64).alias("start"),
        end.cast(pl.Int64).alias("end"),
        name.str.contains("ncclKernel", literal=True).alias("comm"),
    )
    comm, comp = spans.filter("comm"), spans.filter(~pl.col("comm"))
    if comm.is_empty():
        return None
    if comp.is_empty():  # HTA's empty frame: one (0, 0) span
        comp = pl.DataFrame({"start": [0], "end": [0], "comm": [False]})
    busy = union_length(comm["start"], comm["end"])
    if busy <= 0:
        return None
    return round(
        100 * intersection_length(comm["start"], comm["end"], comp["start"], comp["end"]) / busy, 2
    )
