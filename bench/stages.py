"""Where an ``analyze`` run spends its time, stage by stage, in one process.

``python bench/stages.py [--side RE --dominator RE] [--profile OUT.txt] PATH...``
prints one JSON object: seconds spent importing, reading (``load_paths``),
analysing (``analyze_captures``) and rendering the JSON report, through the
same public functions the CLI calls. With ``--profile`` (and pyinstrument
installed) the read + analyse stages are also profiled to a text file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--side")
    parser.add_argument("--dominator")
    parser.add_argument("--profile")
    args = parser.parse_args(argv[1:])

    t0 = time.perf_counter()
    from overlap_check.model import Options, Plan
    from overlap_check.pipeline import analyze_captures
    from overlap_check.readers import load_paths
    from overlap_check.report.json import render

    t1 = time.perf_counter()
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
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
