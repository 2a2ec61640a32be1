"""Every notebook runs top to bottom against the bundled fixtures, and is stored without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS][:1] == ["01-analyze-a-capture.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert code, "a notebook without code"
    assert all(c.outputs == [] and c.execution_count is None for c in code), (
        f"{path.name}: strip the outputs before committing"
    )


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, notebook_root: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    # kernel "python3" resolves to this interpreter (the venv); cwd = the repository root.
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=300,
        resources={"metadata": {"path": str(notebook_root)}},
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 4  # the fake timeline and runs chart, real, warm-cold, streams
    text = "".join(o.get("text", "") for o in outputs)
    assert "verdict fake, hidden_pct 0.0" in text and "decided by band" in text


@pytest.fixture(scope="module")
def notebook_root() -> Path:
    if not (REPO / "fixtures" / "fake-dual-stream").is_dir():
        pytest.fail("fixtures/ is missing: run `make fixtures` (the notebooks read it)")
    return REPO
