"""Regenerate the README pictures (docs/images/*.png) from the bundled fixtures.

    python scripts/make_docs_images.py [--fixtures DIR] [--out DIR]

Writes timeline-fake.png and timeline-real.png: the timeline of the worst warm
occurrence of the `moe-shared-expert` plan in fixtures/fake-dual-stream and
fixtures/real-dual-stream. The files are byte-identical on every run (Agg, no
dates in the metadata), so `git diff` shows only real changes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PICTURES = {  # file in docs/images -> fixture folder
    "timeline-fake.png": "fake-dual-stream",
    "timeline-real.png": "real-dual-stream",
}


def make_images(fixtures: Path, out: Path) -> list[Path]:
    import overlap_check
    from overlap_check.model import Options, Plan
    from overlap_check.report.plots import write_plots

    plan = Plan(
        "moe-shared-expert",
        side="SharedExpert",
        dominator="GroupedMatmul",
        side_stream=3,
        main_stream=2,
    )
    written: list[Path] = []
    for name, folder in PICTURES.items():
        source = fixtures / folder
        if not source.is_dir():
            raise SystemExit(f"make_docs_images: {source} is missing; run `make fixtures` first")
        captures = overlap_check.load(source)
        report = overlap_check.check(captures, Options(plans=(plan,)))
        written += write_plots(report, captures, out / name, kinds=("timeline",))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=REPO / "fixtures")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    args = parser.parse_args(argv)
    for path in make_images(args.fixtures, args.out):
        print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
