"""The folders are the stages (docs/architecture.md): which folder may import which.

model/ (nouns) -> readers/ (file formats) -> measure/ (one capture -> its evidence)
-> judge/ (all evidence -> the Report) -> report/ (formats only) -> cli/ (thin).
report/ formats a Report and never measures or judges again, so it imports model/ alone.

Every import counts, lazy ones inside functions included (``ast.walk``), since a lazy
import is still a dependency of the code that runs it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "overlap_check"
REPO = PACKAGE.parent

# folder -> the folders its modules may import (itself included)
ALLOWED = {
    "model": {"model"},
    "readers": {"model", "readers"},
    "measure": {"model", "readers", "measure"},
    "judge": {"model", "readers", "measure", "judge"},
    "report": {"model", "report"},
    "lint": {"model", "report", "lint"},
    "runner": {"model", "report", "runner"},  # it writes its manifest with report.output_file
    "cli": {"model", "readers", "measure", "judge", "report", "lint", "runner", "cli"},
}
# the package facade (``overlap_check.check``, ``load``, ``run``) and ``python -m``
FACADES = {"overlap_check", "overlap_check.__main__"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            # ``from overlap_check.model import intervals`` imports a module too
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "overlap_check"}


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ALLOWED else None


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        module: {target for target in _imports(path) if target in modules and target != module}
        for module, path in modules.items()
    }


def test_every_module_lives_in_a_stage_folder() -> None:
    loose = sorted(
        module for module in _modules() if module not in FACADES and _folder(module) is None
    )
    assert loose == []


def test_no_folder_imports_one_it_may_not() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, path in _modules().items()
        if module not in FACADES and (folder := _folder(module))
        for target in _imports(path)
        if (to := _folder(target)) is not None and to not in ALLOWED[folder]
    )
    assert wrong == []


def test_no_import_cycles() -> None:
    graph = _graph()
    # a package's __init__ importing its own children is how a package re-exports; the
    # children importing the package name is the cycle that matters, so drop the former
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not t.startswith(module + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert cycles == []


def test_the_generator_is_not_shipped() -> None:
    # synth/ serves tests, fixtures and benchmarks; the wheel ships overlap_check alone
    assert not (PACKAGE / "synth").exists()
    assert (REPO / "synth" / "__init__.py").is_file()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            assert not any(name.split(".")[0] == "synth" for name in names), path


def test_modules_fit_in_a_head() -> None:
    long = sorted(
        f"{module} ({n} lines)"
        for module, path in _modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600
    )
    assert long == []


def test_the_check_sees_a_wrong_import(tmp_path: Path) -> None:
    # the rule is not vacuous: a renderer importing the judge is caught
    module = tmp_path / "text.py"
    module.write_text("def f():\n    from overlap_check.judge import verdict\n", encoding="utf-8")
    targets = _imports(module)
    assert "overlap_check.judge.verdict" in targets
    assert _folder("overlap_check.judge.verdict") not in ALLOWED["report"]


# The shipped package stays small enough to read: issue #22 capped it at 21,000 lines
# (it had grown to 26.5k in one round). A feature that needs more pays for it elsewhere.
PACKAGE_LINES_CAP = 21_000


def test_the_package_fits_its_line_budget() -> None:
    lines = sum(
        len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.rglob("*.py")
    )
    assert lines <= PACKAGE_LINES_CAP, f"overlap_check/ is {lines:,} lines"
