"""Run the benchmarks and write docs/benchmarks.md (``make bench``).

    .venv/bin/python bench/run.py            # every case, full sizes -> docs/benchmarks.md
    .venv/bin/python bench/run.py --quick    # smaller inputs (100k kernels), printed only
    .venv/bin/python bench/run.py --case 1 --case 6   # some cases, printed only

Only a full run of every case rewrites docs/benchmarks.md (or ``--output``);
other runs print the generated markdown. Inputs are cached in bench/.cache.
Exit code 1 when a case failed to run (a missed goal is not a failure).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
import traceback
from dataclasses import asdict, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: make `bench` importable
    sys.path.insert(0, str(REPO))

from bench import inputs  # noqa: E402
from bench.cases import CASES, FULL, QUICK, TINY, CaseResult, Context, Sizes, prepare  # noqa: E402
from bench.measure import BenchError  # noqa: E402
from bench.report import render_generated, write_document  # noqa: E402

DOC = REPO / "docs" / "benchmarks.md"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller inputs (100k kernels)")
    size.add_argument("--tiny", action="store_true", help="toy inputs for the smoke test")
    parser.add_argument(
        "--case", type=int, action="append", choices=sorted(CASES), help="run only this case"
    )
    parser.add_argument(
        "--prepare", action="store_true", help="only generate the inputs (and the HTA venv)"
    )
    parser.add_argument("--no-hta", action="store_true", help="skip Holistic Trace Analysis")
    parser.add_argument("--repeat", type=int, help="best of N (cases 1, 2, 7)")
    parser.add_argument("--hta-kernels", type=int, help="kernels of case 7's timeline")
    parser.add_argument("--cache", type=Path, default=inputs.DEFAULT_CACHE)
    parser.add_argument("--output", type=Path, help="write the markdown here")
    parser.add_argument(
        "--profile", action="store_true", help="also write pyinstrument profiles to CACHE/profiles"
    )
    return parser.parse_args(argv)


def choose_sizes(args: argparse.Namespace) -> Sizes:
    sizes = QUICK if args.quick else TINY if args.tiny else FULL
    if args.no_hta:
        sizes = replace(sizes, hta=False)
    if args.repeat:
        sizes = replace(sizes, repeat=args.repeat)
    if args.hta_kernels:
        sizes = replace(sizes, hta_kernels=args.hta_kernels)
    return sizes


def run_cases(ctx: Context, numbers: list[int]) -> list[CaseResult]:
    results = []
    for number in numbers:
        _log(f"case {number}")
        before = os.getloadavg()[0]
        try:
            result = CASES[number](ctx)
        except (BenchError, OSError, ValueError, KeyError, RuntimeError) as err:
            detail = str(err) if isinstance(err, BenchError) else traceback.format_exc()
            _log(f"case {number} failed: {detail}")
            result = CaseResult(number, f"case {number}", error=detail)
        result.load = (before, os.getloadavg()[0])
        results.append(result)
    return results


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = choose_sizes(args)
    numbers = sorted(set(args.case or CASES))
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    args.cache.mkdir(parents=True, exist_ok=True)
    ctx = Context(
        sizes=sizes,
        cache=args.cache.resolve(),
        profile_dir=args.cache.resolve() / "profiles" if args.profile else None,
        log=_log,
    )
    if args.prepare:
        prepare(ctx, numbers)
        _log(f"inputs ready in {time.perf_counter() - t0:.0f} s")
        return 0
    results = run_cases(ctx, numbers)
    elapsed = time.perf_counter() - t0
    setup = sum(inputs.GENERATION_S) + sum(
        float(r.data.get("hta_venv", {}).get("install_s", 0.0)) for r in results
    )
    text = render_generated(results, sizes, started, elapsed, setup, os.getloadavg())
    output = args.output
    if output is None and sizes is not QUICK and sizes.name == "full" and numbers == sorted(CASES):
        output = DOC
    if output is not None:
        write_document(output, text)
        _log(f"wrote {output}")
    else:
        print(text)
    dump = args.cache / f"results-{sizes.name}.json"
    dump.write_text(json.dumps([asdict(r) for r in results], indent=1, default=str))
    _log(f"done in {elapsed:.0f} s")
    return 1 if any(r.error for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
