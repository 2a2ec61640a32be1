"""The stage order of docs/architecture.md: no module of an earlier stage imports a later one.

Every import counts, lazy ones inside functions included (``ast.walk``), since a lazy
import is still a dependency of the code that runs it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "overlap_check"

# docs/architecture.md's arrows, in order; modules not named are the shared foundation
# (model, table, intervals, the engine's pure functions), stage 0, which imports no stage.
STAGES = {
    "discover": 1,
    "readers": 1,
    "figures": 2,
    "decide": 3,
    "judge": 4,
    "workers": 5,
    "pipeline": 5,
    "report": 6,
    "lint": 6,  # a front end of its own; it shares the report writers (junit, escaping)
    "runner": 7,
    "cli": 7,
}

# Allowed on purpose: the package facade re-exports the entry points; ``Report.from_json``
# is a lazy delegation to the JSON renderer's inverse, which lives beside the renderer.
FACADES = {"overlap_check", "overlap_check.__main__"}
DELEGATIONS = {("overlap_check.model", "overlap_check.report.json_read")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "overlap_check"}


def _stage(module: str) -> int:
    parts = module.split(".")
    return STAGES.get(parts[1], 0) if len(parts) > 1 else 0


def test_the_stage_table_names_real_modules() -> None:
    names = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if p.is_dir()
    }
    assert set(STAGES) <= names


def test_no_module_imports_a_later_stage() -> None:
    backward = sorted(
        f"{module} (stage {_stage(module)}) imports {target} (stage {_stage(target)})"
        for path in PACKAGE.rglob("*.py")
        if (module := _module_name(path)) not in FACADES
        for target in _imports(path)
        if _stage(target) > _stage(module) and (module, target) not in DELEGATIONS
    )
    assert backward == []


def test_the_check_sees_a_backward_import(tmp_path: Path) -> None:
    # the rule is not vacuous: a figures module importing judge is caught
    module = tmp_path / "figures.py"
    module.write_text(
        "def f():\n    from overlap_check.judge.judgement import judge\n", encoding="utf-8"
    )
    assert _imports(module) == {"overlap_check.judge.judgement"}
    assert _stage("overlap_check.judge.judgement") > _stage("overlap_check.measure.figures")
