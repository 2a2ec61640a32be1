"""Barriers both ways: what one stream waited for (docs/hidden-fraction.md).

(a) The main stream waited for the side stream: after side work ends, the main
    stream idles, then runs a chain of small ops ahead of the dominator. The
    first op of the chain is the search of :func:`plans.barrier_instances`
    (reused, on the hidden fraction); the whole chain up to the dominator is
    named (``Cast -> Swish``).
(b) The side stream waited for the main stream: the side window starts right
    after a main-stream op ends while the side stream idled. That op is what
    the side work waits for (GE placed its producer late).

Neither search can name a layer's join consumer (the main op after the
dominator that consumes the side result): (a) only looks ahead of the
dominator, (b) only at ops that ended before the side work started.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt
import polars as pl

from overlap_check import intervals
from overlap_check.hiding import i64_column
from overlap_check.model import Thresholds
from overlap_check.plans import Occurrences, barrier_instances

CHAIN = " -> "
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
    first op), ``chain`` (every main op from it up to the dominator) and ``start_ns``."""
    found = barrier_instances(main, replace(occ, pct=np.asarray(hidden_pct)), thresholds, 0)
    ms = i64_column(main, "start_ns")
    labels = _labels(main)
    k = found.get_column("occurrence").to_numpy() - 1
    first = np.searchsorted(ms, found.get_column("start_ns").to_numpy(), side="left")
    last = np.searchsorted(ms, occ.dom_start[k], side="left")  # ops starting before the dominator
    chains = [
        CHAIN.join(labels[int(a) : int(b)].to_list()) for a, b in zip(first, last, strict=True)
    ]
    return pl.DataFrame(
        {
            "occurrence": found.get_column("occurrence"),
            "barrier": labels.gather(first),
            "chain": pl.Series(chains, dtype=pl.String),
            "start_ns": found.get_column("start_ns"),
        },
        schema={
            "occurrence": pl.Int64,
            "barrier": pl.String,
            "chain": pl.String,
            "start_ns": pl.Int64,
        },
    )


def side_waited(
    main: pl.DataFrame,
    side_stream_kernels: pl.DataFrame,
    side_window_start: npt.ArrayLike,
    max_lag_ns: int = MAX_LAG_NS,
    has_side: npt.ArrayLike | None = None,
) -> pl.DataFrame:
    """(b) per side window start: the main op it waited for, when the window starts at most
    ``max_lag_ns`` after that op ended and the side stream was idle from then on.

    ``side_stream_kernels``: every compute kernel of the side stream (start_ns, end_ns);
    ``side_window_start``: one start per occurrence (``has_side``: False where the
    occurrence has no side work, its start is then ignored). Columns: ``occurrence`` (1-based),
    ``producer``, ``end_ns`` (when it ended), ``lag_ns``.
    """
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
        },
        schema={
            "occurrence": pl.Int64,
            "producer": pl.String,
            "end_ns": pl.Int64,
            "lag_ns": pl.Int64,
        },
    )
