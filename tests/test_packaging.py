"""The package as a user gets it: declared lower bounds, the sdist's contents, the licence."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from min_constraints import lower_bounds  # noqa: E402

# What the sdist must carry so that its own tests run (tests/ as a whole is
# checked file by file against git below).
SHIPPED_TREES = ("tests", "fixtures", "docs", "examples")


def test_min_constraints_pin_each_lower_bound() -> None:
    bounds = lower_bounds(REPO / "pyproject.toml", [])
    # polars 1.39 is the first with scan_csv(missing_columns=...), which the CSV reader passes.
    assert bounds["polars"] == "1.39"
    assert set(bounds) >= {"polars", "numpy", "click", "msgspec"}
    with_extras = lower_bounds(REPO / "pyproject.toml", ["pandas", "plot"])
    assert with_extras["pandas"] == "2.0"
    assert with_extras["matplotlib"] == "3.7"


def test_all_extra_names_every_user_extra() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    assert extras["all"] == ["overlap-check[pandas,plot]"]


def test_licence_is_the_apache_2_text() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def _tracked(tree: str) -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--", tree], cwd=REPO, capture_output=True, text=True, check=True
    )
    return {line for line in listed.stdout.splitlines() if line}


@pytest.mark.slow
def test_sdist_ships_the_tests_their_data_and_the_docs(tmp_path: Path) -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout (this is an sdist)")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (archive,) = tmp_path.glob("overlap_check-*.tar.gz")
    with tarfile.open(archive) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        names = {name.removeprefix(top + "/") for name in sdist.getnames()}
    wanted = {"LICENSE", "README.md", "pyproject.toml", "tests/conftest.py"}
    for tree in SHIPPED_TREES:
        wanted |= _tracked(tree)
    missing = sorted(wanted - names)
    assert not missing, f"the sdist lacks {len(missing)} file(s): {missing[:20]}"
    assert not any("real-profiles" in name for name in names)
