"""The straightforward pandas approach to stream overlap, as a peer.

What an engineer writes first: read kernel_details.csv with pandas (float µs
columns), merge each stream's intervals with a groupby, then sweep the two
merged sets for the time both streams are busy. Everything in float64 µs.

The float figures are wrong in the low digits: a 16-digit epoch µs value with
three decimals (1736408883704645.540) does not fit in a float64 (spacing 0.25 µs
at that magnitude), so every start is off by up to 125 ns before any arithmetic.
The benchmark reports the discrepancy in ns against overlap-check's exact
integer figures.

Run as a process: ``python bench/peers/naive_pandas.py kernel_details.csv``
prints one JSON object (uses only pandas and numpy).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import pandas as pd

COLUMNS = ["Stream ID", "Name", "Start Time(us)", "Duration(us)"]


def read_kernels(path: str) -> pd.DataFrame:
    """The four columns the analysis needs; float µs start and end."""
    frame = pd.read_csv(path, usecols=COLUMNS)
    frame = frame[pd.to_numeric(frame["Stream ID"], errors="coerce").notna()].copy()
    frame["stream"] = frame["Stream ID"].astype("int64")
    frame["start"] = frame["Start Time(us)"].astype("float64")
    frame["end"] = frame["start"] + frame["Duration(us)"].astype("float64")
    return frame[["stream", "Name", "start", "end"]]


def merged_intervals(group: pd.DataFrame) -> pd.DataFrame:
    """One stream's busy set: sorted, overlapping kernels merged."""
    group = group.sort_values("start")
    new_block = group["start"] > group["end"].cummax().shift(fill_value=-np.inf)
    block = new_block.cumsum()
    return group.groupby(block).agg(start=("start", "min"), end=("end", "max"))


def overlap_us(a: pd.DataFrame, b: pd.DataFrame) -> float:
    """Time both merged sets are busy: a sweep over +1/-1 edges."""
    times = np.concatenate([a["start"], a["end"], b["start"], b["end"]])
    delta = np.concatenate([np.ones(len(a)), -np.ones(len(a)), np.ones(len(b)), -np.ones(len(b))])
    order = np.lexsort((delta, times))  # at a tie, ends (-1) before starts
    times, level = times[order], np.cumsum(delta[order])
    both = level[:-1] >= 2
    return float(np.sum(np.diff(times)[both]))


def analyze(path: str) -> dict[str, object]:
    frame = read_kernels(path)
    busy = {int(str(s)): merged_intervals(g) for s, g in frame.groupby("stream")}
    streams = sorted(busy, key=lambda s: -(busy[s]["end"] - busy[s]["start"]).sum())
    main, side = streams[0], streams[1] if len(streams) > 1 else None
    overlap = overlap_us(busy[main], busy[side]) if side is not None else 0.0
    return {
        "kernels": len(frame),
        "busy_us": {str(s): float((m["end"] - m["start"]).sum()) for s, m in sorted(busy.items())},
        "main": main,
        "side": side,
        "overlap_us": overlap,
    }


def main(argv: list[str]) -> int:
    t0 = time.perf_counter()
    result = analyze(argv[1])
    result["analyze_s"] = time.perf_counter() - t0
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
