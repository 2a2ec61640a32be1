"""Holistic Trace Analysis as a peer: load a Kineto trace dir, derive stream overlap.

Runs INSIDE the HTA venv (bench/.cache/hta-venv), as its own process:
``hta-venv/bin/python bench/peers/hta_peer.py TRACE_DIR`` prints one JSON object.
It must not import overlap_check or polars (neither is installed there).

HTA has no stream-pair overlap analysis; the closest is
``TraceAnalysis.get_temporal_breakdown``, whose ``compute_time(us)`` is the
union of every computation kernel over all streams (``merge_kernel_intervals``).
With each stream's own busy time from the same HTA-loaded frame and the same
HTA merge function, inclusion-exclusion gives the two-stream overlap:
``overlap = busy(a) + busy(b) - busy(a ∪ b)``.

HTA rounds float µs timestamps on load (``round_down_time_stamps``: ``ts`` is
ceiled and ``ts + dur`` floored to whole µs), so its figures are whole µs.
"""

from __future__ import annotations

import json
import logging
import sys
import time


def main(argv: list[str]) -> int:
    trace_dir = argv[1]
    t0 = time.perf_counter()
    from hta.trace_analysis import TraceAnalysis  # type: ignore[import-not-found]
    from hta.utils.utils import merge_kernel_intervals  # type: ignore[import-not-found]

    logging.getLogger("hta").setLevel(logging.ERROR)
    t1 = time.perf_counter()
    analyzer = TraceAnalysis(trace_dir=trace_dir)
    t2 = time.perf_counter()
    breakdown = analyzer.get_temporal_breakdown(visualize=False)
    t3 = time.perf_counter()
    trace = analyzer.t.get_trace(0)
    kernels = trace[trace["stream"].ge(0)]
    busy = {
        int(stream): float(
            (lambda merged: merged["end"].sum() - merged["ts"].sum())(
                merge_kernel_intervals(group[["ts", "dur"]].copy())
            )
        )
        for stream, group in kernels.groupby("stream")
    }
    union_us = float(breakdown["compute_time(us)"].iloc[0])
    t4 = time.perf_counter()
    result = {
        "kernels": len(kernels),
        "busy_us": {str(k): v for k, v in sorted(busy.items())},
        "union_us": union_us,
        "overlap_us": sum(busy.values()) - union_us,
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "breakdown_s": t3 - t2,
        "streams_s": t4 - t3,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
