"""Overlap Analysis: msprof's compute-vs-communication intervals for the whole device.

Computing = union of compute kernels, Communication = union of communication ops,
Communication(Not Overlapped) = Communication minus Computing, Free = gaps between
busy time. Written as trace events and summed into step_trace_time.csv.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import polars as pl

from overlap_check.model.intervals import merge
from synth import fmt
from synth.rows import Frames
from synth.trace_style import Style, json_object


def subtract(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Merged intervals of a minus merged intervals of b."""
    if a[0].size == 0 or b[0].size == 0:
        return a
    times = np.concatenate([a[0], a[1], b[0], b[1]])
    delta_a = np.concatenate(
        [np.ones_like(a[0]), -np.ones_like(a[1]), np.zeros_like(b[0]), np.zeros_like(b[1])]
    )
    delta_b = np.concatenate(
        [np.zeros_like(a[0]), np.zeros_like(a[1]), np.ones_like(b[0]), -np.ones_like(b[1])]
    )
    order = np.argsort(times, kind="stable")
    times = times[order]
    in_a = np.cumsum(delta_a[order])
    in_b = np.cumsum(delta_b[order])
    keep = (in_a[:-1] > 0) & (in_b[:-1] == 0) & (times[1:] > times[:-1])
    return merge(times[:-1][keep], times[1:][keep])


@dataclass(frozen=True)
class OverlapSets:
    computing: tuple[np.ndarray, np.ndarray]
    communication: tuple[np.ndarray, np.ndarray]
    not_overlapped: tuple[np.ndarray, np.ndarray]
    free: tuple[np.ndarray, np.ndarray]


def overlap_sets(frames: Frames) -> OverlapSets:
    """What msprof's Overlap Analysis shows: compute vs communication for the device."""
    k = frames.kernels
    comp = k.filter(~pl.col("is_comm"))
    comm = k.filter(pl.col("is_comm"))
    cs = comp["start_ns"].to_numpy()
    computing = merge(cs, cs + comp["dur_ns"].to_numpy())
    ms = comm["start_ns"].to_numpy()
    communication = merge(ms, ms + comm["dur_ns"].to_numpy())
    busy = merge(
        np.concatenate([computing[0], communication[0]]),
        np.concatenate([computing[1], communication[1]]),
    )
    free = (busy[1][:-1], busy[0][1:])
    return OverlapSets(computing, communication, subtract(communication, computing), free)


def overlap_lines(frames: Frames, style: Style) -> list[str]:
    sets = overlap_sets(frames)
    tids = dict(style.overlap_tids)
    pieces = []
    for name, (starts, ends) in (
        ("Computing", sets.computing),
        ("Communication", sets.communication),
        ("Communication(Not Overlapped)", sets.not_overlapped),
        ("Free", sets.free),
    ):
        if starts.size == 0:
            continue
        frame = pl.DataFrame(
            {"start_ns": starts.astype(np.int64), "dur_ns": (ends - starts).astype(np.int64)}
        )
        ts = fmt.json_str_expr(fmt.us3_expr(pl.col("start_ns")))
        pairs = [
            ("name", pl.lit(json.dumps(name))),
            ("pid", pl.lit(str(style.overlap_pid))),
            ("tid", pl.lit(str(tids[name]))),
            ("ts", ts),
            ("dur", fmt.us_repr_expr(pl.col("dur_ns"))),
        ]
        pairs += [("ph", pl.lit('"X"'))] + (
            [("args", pl.lit("{}"))] if style.version == "2026" else []
        )
        pieces.append(frame.select(json_object(pairs, style).alias("e")))
    if not pieces:
        return []
    return pl.concat(pieces).to_series().to_list()
