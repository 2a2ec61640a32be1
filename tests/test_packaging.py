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
    assert with_extras["pandas"] == "2.2.3"
    assert with_extras["matplotlib"] == "3.9.2"


# A version of each declared dependency checked to have binary wheels (manylinux x86_64)
# for each CPython, with
# `pip download --no-deps --only-binary=:all: --python-version 3.13 numpy==2.1.0 -d /tmp/x`.
# The ones before them lack some: numpy 1.24 has none for 3.12 and 1.26 none for 3.13;
# msgspec 0.18.0 none for 3.12 and 0.18.6 none for 3.13; pandas 2.2.2, pyarrow 17 and
# matplotlib 3.9.0/3.9.1 none for 3.13. A floor below these may have no wheel there.
_ALL = ((3, 10), (3, 11), (3, 12))
FIRST_WHEELS = {
    "numpy": {(3, 10): "1.24.0", (3, 11): "1.24.0", (3, 12): "1.26.0", (3, 13): "2.1.0"},
    "msgspec": {(3, 10): "0.18.0", (3, 11): "0.18.0", (3, 12): "0.18.6", (3, 13): "0.19.0"},
    "polars": {python: "1.39.0" for python in (*_ALL, (3, 13))},
    "pandas": {**{python: "2.2.2" for python in _ALL}, (3, 13): "2.2.3"},
    "pyarrow": {**{python: "17.0.0" for python in _ALL}, (3, 13): "18.0.0"},
    "matplotlib": {**{python: "3.9.0" for python in _ALL}, (3, 13): "3.9.2"},
}


def _version(text: str) -> tuple[int, ...]:
    parts = tuple(int(part) for part in text.split("."))
    return parts + (0,) * (3 - len(parts))


def _classifier_pythons() -> list[tuple[int, int]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    prefix = "Programming Language :: Python :: 3."
    found = [c.removeprefix(prefix) for c in project["classifiers"] if c.startswith(prefix)]
    return [(3, int(minor)) for minor in found if minor.isdigit()]


def test_every_floor_has_wheels_for_every_listed_python() -> None:
    pythons = _classifier_pythons()
    assert pythons == [(3, 10), (3, 11), (3, 12), (3, 13)]
    for python in pythons:
        bounds = lower_bounds(REPO / "pyproject.toml", ["pandas", "plot"], python)
        for name, first in FIRST_WHEELS.items():
            floor = bounds[name]
            assert _version(floor) >= _version(first[python]), (name, floor, python)


def test_no_extra_installs_torch() -> None:
    """torch and torch_npu must match the machine's CANN (docs/run.md): no extra may pull
    them (an `npu` extra pulled 15 CUDA wheels that replaced a CANN-matched torch)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    every = [*project["dependencies"]]
    every += [r for extra in project["optional-dependencies"].values() for r in extra]
    assert [
        r for r in every if r.lower().replace("_", "-").startswith(("torch", "torch-npu"))
    ] == []


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
