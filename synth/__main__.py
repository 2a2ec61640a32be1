"""``python -m synth DIR [FOLDER ...]``: regenerate the repository's fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

from synth.fixtures import FIXTURES, write_fixtures


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        names = ", ".join(f.folder for f in FIXTURES)
        print(f"usage: python -m synth DIR [FOLDER ...]\nfolders: {names}")
        return 0 if args else 2
    only = tuple(args[1:])
    unknown = set(only) - {f.folder for f in FIXTURES}
    if unknown:
        print(f"unknown fixture folder(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    for path in write_fixtures(Path(args[0]), only):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
