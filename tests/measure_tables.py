"""Test helpers: the engine's per-layer rules assembled as one table per capture, for tests
that compare them with a layout's constructed answer, and each kernel's innermost module
call. No engine code needs these shapes (the engine measures layers in
measure/plans.occurrences, and selects by module scope: readers.modules.module_scopes), so
they live with the tests."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.measure.hiding import (
    HELPER_SHARE,
    helper_streams_of,
    hidden_fraction,
    verdict_counts,
)
from overlap_check.measure.layering import assign_layers, join_not_waited, lag
from overlap_check.measure.occurrences import OK, Occurrences, measure_occurrences
from overlap_check.measure.placement import layered_counts, stayed
from overlap_check.model import FAKE_SHARE, Thresholds, Verdict, intervals
from overlap_check.model.intervals import I64
from overlap_check.model.selection import named, restricted_side_expr
from overlap_check.model.table import compute_kernels, i64_column, is_compute
from overlap_check.model.verdicts import bands, capped, label
from overlap_check.readers.calls import innermost_calls
from overlap_check.readers.modules import _launches

# kernel_modules' columns
SCHEMA = {"stream_id": pl.Int64, "start_ns": pl.Int64, "module": pl.String, "instance": pl.Int64}
LAYER_SCHEMA = {
    "layer": pl.Int64,
    "side_ops": pl.Int64,
    "side_start_ns": pl.Int64,
    "side_end_ns": pl.Int64,
    "dominator": pl.String,
    "dom_start_ns": pl.Int64,
    "dom_end_ns": pl.Int64,
    "side_busy_ns": pl.Int64,
    "hidden_ns": pl.Int64,
    "hidden_pct": pl.Float64,
    "dominator_pct": pl.Float64,
    "overlap_pct": pl.Float64,
    "verdict": pl.String,
    "join_not_waited": pl.Boolean,
}


def other_stream_busy(kernels: pl.DataFrame, side_stream: int) -> tuple[I64, I64]:
    """Merged busy time of the compute kernels on every stream but ``side_stream``."""
    other = compute_kernels(kernels, ("stream_id", "start_ns", "end_ns", "is_communication"))
    other = other.filter(pl.col("stream_id") != side_stream)
    return intervals.merge(i64_column(other, "start_ns"), i64_column(other, "end_ns"))


def layer_occurrences(
    side: pl.DataFrame, main: pl.DataFrame, is_dominator: npt.ArrayLike
) -> tuple[Occurrences, I64, I64]:
    """The recipes' window figures per layer (occurrences.measure_occurrences), the layer of
    each side op and the main-kernel row of each layer's dominator.

    ``side``: the plan's side ops (start_ns, end_ns); ``main``: the main stream's other
    compute kernels by start (start_ns, end_ns, name); ``is_dominator``: per main row.
    """
    rows = np.flatnonzero(np.asarray(is_dominator, dtype=bool))
    ms, me = i64_column(main, "start_ns"), i64_column(main, "end_ns")
    ds, de = ms[rows], me[rows]
    ss, se = i64_column(side, "start_ns"), i64_column(side, "end_ns")
    layer = assign_layers(ss, se, ds, de)
    order = np.lexsort((ss, layer))  # measure_occurrences wants each layer's ops together
    measured = measure_occurrences(
        ss[order], se[order], layer[order], rows.size, ds, de, np.ones(rows.size, dtype=bool)
    )
    return replace(measured, dom_row=rows, main_names=main.get_column("name")), layer, rows


def layer_table(
    side: pl.DataFrame,
    main: pl.DataFrame,
    is_dominator: npt.ArrayLike,
    other_busy: tuple[I64, I64],
    thresholds: Thresholds,
) -> pl.DataFrame:
    """One row per layer (LAYER_SCHEMA): windows, overlap_pct, hidden_pct, verdict band
    (of hidden_pct; ``no-evidence`` for a layer without side work) and the join flag.
    ``other_busy``: merged busy time of every stream but the side stream."""
    occ, layer, rows = layer_occurrences(side, main, is_dominator)
    n = rows.size
    hidden = hidden_fraction(
        i64_column(side, "start_ns"),
        i64_column(side, "end_ns"),
        layer,
        n,
        other_busy,
        occ.dom_start,
        occ.dom_end,
    )
    judged = occ.status == OK
    verdicts = np.where(judged, bands(hidden.hidden_pct, thresholds), "no-evidence").tolist()
    has_side = occ.side_count > 0
    return pl.DataFrame(
        {
            "layer": np.arange(1, n + 1, dtype=np.int64),
            "side_ops": occ.side_count,
            "side_start_ns": pl.Series(occ.side_start).set(pl.Series(~has_side), None),
            "side_end_ns": pl.Series(occ.side_end).set(pl.Series(~has_side), None),
            "dominator": main.get_column("name").gather(rows),
            "dom_start_ns": occ.dom_start,
            "dom_end_ns": occ.dom_end,
            "side_busy_ns": hidden.side_busy_ns,
            "hidden_ns": hidden.hidden_ns,
            "hidden_pct": pl.Series(hidden.hidden_pct).fill_nan(None),
            "dominator_pct": pl.Series(hidden.dominator_pct).fill_nan(None),
            "overlap_pct": pl.Series(occ.pct).fill_nan(None),
            "verdict": verdicts,
            "join_not_waited": join_not_waited(
                i64_column(main, "start_ns"),
                i64_column(main, "end_ns"),
                occ.dom_end,
                occ.side_start,
                occ.side_end,
                has_side,
            ),
        },
        schema=LAYER_SCHEMA,
    )


def lag_pattern(table: pl.DataFrame, side_start: npt.ArrayLike) -> bool:
    """layering.lag on a :func:`layer_table`."""
    if table.height == 0:
        return False
    return lag(table.get_column("side_ops"), table.get_column("dom_end_ns"), side_start)


def capped_verdict(
    figures: npt.ArrayLike, thresholds: Thresholds, fake_share: float = FAKE_SHARE
) -> Verdict:
    """The band of the median figure, at best ``partial`` when more than ``fake_share`` of
    the judged occurrences are fake (a median hides fake layers: 3 of 6 fake is 0.5)."""
    values = np.asarray(figures, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return "no-evidence"
    counts = verdict_counts(values, thresholds)
    verdict = label(float(np.median(values)), thresholds)
    return capped(verdict, (counts["real"], counts["partial"], counts["fake"]), fake_share)


def helper_streams(
    kernels: pl.DataFrame, main_stream: int, share: float = HELPER_SHARE
) -> tuple[int, ...]:
    """hiding.helper_streams_of for one main stream."""
    return helper_streams_of(kernels, [main_stream], share=share)[main_stream]


def label_counts(
    kernels: pl.DataFrame,
    side: str | None,
    side_stream: int | None,
    op_type: str | None,
    dominator: str | None = None,
) -> pl.DataFrame:
    """The ops the name / type regexes select on any stream (without either: the kernels
    on ``side_stream``), counted per (``label``, ``stream_id``, ``layer``) in ``count``
    (placement.layered_counts; the layers from the ``dominator`` regex, -1 without one)."""
    by_regex = side is not None or op_type is not None
    chosen = restricted_side_expr(side, None if by_regex else side_stream, op_type, kernels)
    doms = pl.lit(False)
    if dominator is not None:
        doms = is_compute(kernels.columns) & named(kernels, dominator)
    tagged = kernels.with_columns(chosen.alias("_named"), (doms & ~chosen).alias("_dom"))
    return layered_counts(tagged)


def stayed_off_side(
    kernels: pl.DataFrame,
    side: str | None,
    op_type: str | None,
    side_stream: int,
    dominator: str | None = None,
) -> pl.DataFrame:
    """placement.stayed of one kernel table: the ops the name / type regexes select that
    ran off the side stream (layers from the ``dominator`` regex)."""
    counts = label_counts(kernels, side, side_stream, op_type, dominator)
    return stayed(counts, pl.col("stream_id") != side_stream)


def kernel_modules(path: Path) -> pl.DataFrame:
    """``stream_id, start_ns, module, instance`` of the innermost ``nn.Module`` call each
    kernel was launched in (joins the kernel table on stream and start); empty: none."""
    calls, flows = _launches(path)
    if calls.is_empty() or flows.is_empty():
        return pl.DataFrame(schema=SCHEMA)
    call = innermost_calls(calls, flows)
    return (
        flows.select("stream_id", "start_ns")
        .with_columns(
            calls.get_column("module").gather(call), calls.get_column("instance").gather(call)
        )
        .filter(call.is_not_null())
    )
