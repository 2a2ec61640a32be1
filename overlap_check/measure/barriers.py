"""Barriers both ways on the fake occurrences (by hidden_pct) of one sample: (a) the main
stream waited for the side stream (the chain from :func:`plans.barrier_instances`'s first
op up to the dominator), (b) the side stream waited for a main op placed late.

The rules: docs/hidden-fraction.md, "Barriers both ways"; judge/ ranks what
:func:`instances` finds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check.measure.occurrences import OK, Occurrences
from overlap_check.measure.plans import BARRIER_SCHEMA, barrier_instances
from overlap_check.model import Thresholds, intervals
from overlap_check.model.table import i64_column

CHAIN = " -> "
MAX_CHAIN = 8  # ops named in a chain; a longer one keeps its first ones and the last
MAX_LAG_NS = 10_000  # "right after": the side window starts at most this long after the op


def _labels(main: pl.DataFrame) -> pl.Series:
    """The op type where the table has one (Cast, Swish), else the kernel name."""
    if "op_type" in main.columns:
        return main.get_column("op_type").fill_null(main.get_column("name"))
    return main.get_column("name")


def main_waited(
    main: pl.DataFrame, occ: Occurrences, hidden_pct: np.ndarray, thresholds: Thresholds
) -> pl.DataFrame:
    """(a) per fake occurrence (by hidden_pct): ``occurrence`` (1-based), ``barrier`` (its
    first op), ``chain`` (every main op from it up to the dominator) and ``start_ns``, with
    the other columns of plans.barrier_instances (``name``, ``gap_ns``, ``after_ns``...)."""
    found = barrier_instances(main, replace(occ, pct=np.asarray(hidden_pct)), thresholds, 0)
    ms = i64_column(main, "start_ns")
    labels = _labels(main)
    k = found.get_column("occurrence").to_numpy() - 1
    first = np.searchsorted(ms, found.get_column("start_ns").to_numpy(), side="left")
    # ops starting before the dominator (the dominator itself when it is the one that waited)
    last = np.maximum(np.searchsorted(ms, occ.dom_start[k], side="left"), first + 1)
    chains = [_chain(labels[int(a) : int(b)].to_list()) for a, b in zip(first, last, strict=True)]
    return found.with_columns(
        labels.gather(first).alias("barrier"), pl.Series("chain", chains, dtype=pl.String)
    )


def _chain(ops: list[str]) -> str:
    if len(ops) > MAX_CHAIN:
        ops = [*ops[: MAX_CHAIN - 1], f"... ({len(ops) - MAX_CHAIN} more)", ops[-1]]
    return CHAIN.join(ops)


def side_waited(
    main: pl.DataFrame,
    side_stream_kernels: pl.DataFrame,
    side_window_start: npt.ArrayLike,
    max_lag_ns: int = MAX_LAG_NS,
    has_side: npt.ArrayLike | None = None,
) -> pl.DataFrame:
    """(b) per side window start (one per occurrence; ignored where not ``has_side``): the
    main op it waited for, when it starts at most ``max_lag_ns`` after that op ended and
    the side stream (``side_stream_kernels``) idled from then on. Columns: ``occurrence``
    (1-based), ``producer``, ``end_ns`` (when it ended), ``lag_ns``."""
    ws = np.asarray(side_window_start, dtype=np.int64)
    me = i64_column(main, "end_ns")
    by_end = np.argsort(me, kind="stable")
    ends = me[by_end]
    # The main op that ended last at or before each window start.
    at = np.searchsorted(ends, ws, side="right") - 1
    has = at >= 0
    row = by_end[np.maximum(at, 0)] if me.size else np.zeros(ws.size, dtype=np.int64)
    ended = np.where(has, me[row] if me.size else 0, 0)
    lag = ws - ended
    # The side stream's busy time before the window: it must have stopped by then.
    bs, be = intervals.merge(
        i64_column(side_stream_kernels, "start_ns"), i64_column(side_stream_kernels, "end_ns")
    )
    busy_between = intervals.covered_length(bs, be, ended, ws)
    if has_side is not None:
        has = has & np.asarray(has_side, dtype=bool)
    keep = has & (lag >= 0) & (lag <= max_lag_ns) & (busy_between == 0)
    idx = np.flatnonzero(keep)
    return pl.DataFrame(
        {
            "occurrence": idx + 1,
            "producer": _labels(main).gather(row[idx]),
            "end_ns": ended[idx],
            "lag_ns": lag[idx],
            "row": row[idx],
        },
        schema={
            "occurrence": pl.Int64,
            "producer": pl.String,
            "end_ns": pl.Int64,
            "lag_ns": pl.Int64,
            "row": pl.Int64,  # the producer's row in ``main``
        },
    )


def instances(
    main: pl.DataFrame, side_stream_kernels: pl.DataFrame, occ: Occurrences, thresholds: Thresholds
) -> pl.DataFrame:
    """Both searches on the fake occurrences (by hidden_pct) of one sample, as rows of
    plans.BARRIER_SCHEMA, run 0: (a) ``waited`` "main" with its chain, then (b) "side",
    the producer (``start_ns``: its start; ``chain``: its op type; ``lag_ns``), kept
    only when it ended after the dominator started (the two never meet in one
    occurrence: (a) needs the side work to end before the dominator starts)."""
    hidden = occ.hidden_pct()
    a = main_waited(main, occ, hidden, thresholds).select(
        *(c for c in BARRIER_SCHEMA if c not in ("waited", "lag_ns")),
        pl.lit("main").alias("waited"),
        pl.lit(0, pl.Int64).alias("lag_ns"),
    )
    fake = (occ.status == OK) & (occ.side_count > 0) & (hidden <= thresholds.fake)
    b = side_waited(main, side_stream_kernels, occ.side_start, has_side=fake)
    # A fork right after a main op is normal; it is the cause only when that op ended
    # after the dominator had started, so the side work could not run under it.
    k = b.get_column("occurrence").to_numpy() - 1
    b = b.filter(pl.Series(b.get_column("end_ns").to_numpy() >= occ.dom_start[k]))
    if b.is_empty():
        return a
    rows = b.get_column("row")
    side = pl.DataFrame(
        {
            "name": main.get_column("name").gather(rows),
            "start_ns": main.get_column("start_ns").gather(rows),
            "gap_ns": 0,
            "after_ns": 0,
            "covers": False,
            "run": 0,
            "occurrence": b.get_column("occurrence"),
            "chain": b.get_column("producer"),
            "waited": "side",
            "lag_ns": b.get_column("lag_ns"),
        },
        schema=BARRIER_SCHEMA,
    )
    return pl.concat([a, side])
