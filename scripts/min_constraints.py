"""Print a pip constraints file pinning every dependency to its declared lower bound.

``pip install -c <this output> -e '.[test]'`` then installs the oldest versions
pyproject.toml claims to support, so a too-low floor fails a test instead of a
user's install (``make test-min``). Extras named on the command line are
included (``python scripts/min_constraints.py dev``); only ``>=`` bounds are
pinned, and a dependency whose environment marker does not hold is skipped.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# name, optional [extras], the specifiers, optional "; marker"
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9._-]+)\s*(\[[^\]]*\])?\s*([^;]*)(;.*)?$")
_LOWER = re.compile(r">=\s*([0-9][A-Za-z0-9.]*)")


def lower_bounds(
    pyproject: Path, extras: list[str], python: tuple[int, int] | None = None
) -> dict[str, str]:
    """``{name: lowest version}`` of the dependencies and the named extras, on ``python``
    (major, minor; default: this interpreter's)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = list(project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    for extra in extras:
        if extra not in optional:
            raise SystemExit(f"{pyproject}: no extra named {extra!r}")
        requirements.extend(optional[extra])
    bounds: dict[str, str] = {}
    for requirement in requirements:
        match = _REQUIREMENT.match(requirement)
        if match is None:
            raise SystemExit(f"{pyproject}: cannot read the requirement {requirement!r}")
        name, _, specifiers, marker = match.groups()
        if marker and not _marker_holds(marker[1:], python or sys.version_info[:2]):
            continue
        lower = _LOWER.search(specifiers)
        if lower is not None and not name.startswith("overlap-check"):
            bounds[name.lower()] = lower.group(1)
    return bounds


def _marker_holds(marker: str, python: tuple[int, int]) -> bool:
    """The one kind of marker pyproject uses: ``python_version < 'X.Y'``."""
    match = re.fullmatch(r"\s*python_version\s*(<|>=)\s*['\"](\d+)\.(\d+)['\"]\s*", marker)
    if match is None:
        raise SystemExit(f"cannot evaluate the marker {marker!r}")
    wanted = (int(match.group(2)), int(match.group(3)))
    return python < wanted if match.group(1) == "<" else python >= wanted


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parents[1]
    for name, version in sorted(lower_bounds(root / "pyproject.toml", argv).items()):
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
