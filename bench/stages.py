"""Where an ``analyze`` run spends its time, stage by stage, in one process.

``python bench/stages.py [--side RE --dominator RE] [--profile OUT.txt] PATH...``
prints one JSON object: seconds spent importing, reading (``load_paths``),
analysing (``analyze_captures``) and rendering the JSON report, in one process
through the library's public functions (the CLI may spread runs over worker
processes; the work per run is the same), plus the time inside a few named inner
functions (``detail``; a name that no longer exists is simply not reported).
With ``--profile`` (and pyinstrument installed) the read + analyse stages are
also profiled to a text file.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
import time
from collections.abc import Callable
from typing import Any

# (module, attribute, label): functions timed where they are looked up
TIMED = (
    ("overlap_check.readers.capture", "read_kernel_csv", "read kernel_details.csv"),
    ("overlap_check.readers.capture", "read_trace", "read trace_view.json"),
    ("overlap_check.readers.trace", "load_events", "of which decoding the JSON (load_events)"),
    ("overlap_check.readers.capture", "attach_streams", "attach streams to kernels"),
    ("overlap_check.readers.capture", "conform", "conform the kernel table"),
    # the per-capture figures module (runs may be reduced in worker processes by the CLI)
    ("overlap_check.measure.figures", "stream_sets", "stream busy sets"),
    ("overlap_check.measure.figures", "run_rules", "core limit rules"),
    ("overlap_check.measure.figures", "contention_evidence", "core contention"),
    ("overlap_check.judge.judgement", "contention_at", "of which contention for the decided cores"),
    ("overlap_check.measure.figures", "helper_streams_of", "helper streams"),
    (
        "overlap_check.measure.figures",
        "_plan_figures",
        "plan figures (for the main streams a capture chooses)",
    ),
    ("overlap_check.measure.figures", "occurrences", "of which plan occurrences"),
    ("overlap_check.measure.figures", "plan_run", "of which plan runs (their occurrence tables)"),
    ("overlap_check.measure.barriers", "instances", "of which barrier search"),
    ("overlap_check.judge.pipeline", "judge", "judge (medians, verdicts, gate)"),
    ("overlap_check.judge.judgement", "plan_result", "of which plan verdicts"),
    ("overlap_check.judge.judgement", "pair_results", "of which stream pairs"),
    ("overlap_check.judge.pipeline", "check_report", "sanity check of every figure"),
    ("overlap_check.report.json", "to_dict", "render: the report as JSON data"),
)


def _instrument(spent: dict[str, float]) -> None:
    for module_name, attribute, label in TIMED:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        original = getattr(module, attribute, None)
        if not callable(original):
            continue

        def timed(
            *args: Any, _f: Callable[..., Any] = original, _label: str = label, **kwargs: Any
        ) -> Any:
            start = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - start

        setattr(module, attribute, functools.wraps(original)(timed))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--side")
    parser.add_argument("--dominator")
    parser.add_argument("--profile")
    args = parser.parse_args(argv[1:])

    t0 = time.perf_counter()
    from overlap_check.judge.pipeline import analyze_captures
    from overlap_check.model import Options, Plan
    from overlap_check.readers import load_paths
    from overlap_check.report.json import render

    t1 = time.perf_counter()
    spent: dict[str, float] = {}
    _instrument(spent)
    plans = (Plan(name="bench", side=args.side, dominator=args.dominator),) if args.side else ()
    options = Options(plans=plans)
    profiler = None
    if args.profile:
        try:
            from pyinstrument import Profiler
        except ModuleNotFoundError:
            profiler = None
        else:
            profiler = Profiler(interval=0.005)
            profiler.start()
    captures = load_paths(args.paths)
    t2 = time.perf_counter()
    report = analyze_captures(captures, options)
    t3 = time.perf_counter()
    if profiler is not None:
        profiler.stop()
        with open(args.profile, "w", encoding="utf-8") as out:
            out.write(profiler.output_text(unicode=False, color=False, show_all=False))
    text = render(report)
    t4 = time.perf_counter()
    print(
        json.dumps(
            {
                "import_s": t1 - t0,
                "read_s": t2 - t1,
                "analyze_s": t3 - t2,
                "render_s": t4 - t3,
                "report_bytes": len(text),
                "captures": len(captures),
                "profiled": profiler is not None,
                "detail": {label: spent[label] for _, _, label in TIMED if label in spent},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
