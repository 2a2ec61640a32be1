"""A missing optional dependency is the error naming the extra to install (exit 2), no traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.model.errors import MissingDependencyError, UsageError
from overlap_check.readers import load

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fake-dual-stream"
PLAN = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]


def without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import MODULE`` fail, as when it is not installed (None in sys.modules)."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


@pytest.mark.parametrize(
    "argv",
    [
        ["plot", str(FIXTURE), *PLAN, "-o", "{tmp}/t.png"],
        ["analyze", str(FIXTURE), *PLAN, "--plot", "{tmp}/t.png"],
    ],
)
def test_pictures_without_matplotlib(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str]
) -> None:
    without(monkeypatch, "matplotlib")
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "needs matplotlib, which is not installed; pip install 'overlap-check[plot]'" in (
        result.output
    )
    assert not (tmp_path / "t.png").exists()
    assert "overlap-check 0.1.0" not in result.output  # it failed before any report


@pytest.mark.parametrize("missing", ["pandas", "pyarrow"])
def test_to_pandas_without_its_extra(monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    (capture, *_) = load(FIXTURE)
    without(monkeypatch, missing)
    with pytest.raises(MissingDependencyError) as err:
        capture.to_pandas()
    assert isinstance(err.value, UsageError) and err.value.exit_code == 2
    assert str(err.value) == (
        f"Capture.to_pandas() needs {missing}, which is not installed; "
        "pip install 'overlap-check[pandas]'"
    )
