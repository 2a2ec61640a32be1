"""`overlap-check lint`: a static checker of multi-stream API routing in model source, which
it parses and never runs. The rules: docs/lint-rules.md.

    result = lint_paths(["models/"], ignore=["OC105"])"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath
from typing import cast

from overlap_check.lint.findings import Context, Finding, LintResult
from overlap_check.lint.paths import ExecPath, PathInfo, function_paths, resolve_paths
from overlap_check.lint.project import Project
from overlap_check.lint.rules import RULES
from overlap_check.lint.source import read_module
from overlap_check.model import ExecutionPath
from overlap_check.model.errors import InputError, UsageError

__all__ = [
    "RULES",
    "ExecPath",
    "Finding",
    "LintResult",
    "PathInfo",
    "discover",
    "lint_paths",
    "parse_rule_list",
    "source_path",
]

# Directories never searched when a folder is given (virtualenvs, caches, VCS).
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "build", "dist"})


def discover(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, directories searched for ``*.py`` (sorted, without duplicates)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for candidate in sorted(path.rglob("*.py")):
                relative = candidate.relative_to(path).parts[:-1]
                if any(part.startswith(".") or part in _SKIP_DIRS for part in relative):
                    continue
                if candidate.is_file():
                    found.append(candidate)
        elif path.exists():
            found.append(path)
        else:
            raise InputError("no such file or directory", path=path)
    return list(dict.fromkeys(found))


def parse_rule_list(
    rules: Iterable[str] | str | None, *, option: str = "select"
) -> frozenset[str] | None:
    """``"OC101,OC103"`` or ``["OC1"]`` -> upper-cased codes or prefixes (else UsageError)."""
    if rules is None:
        return None
    items = ",".join([rules] if isinstance(rules, str) else rules).split(",")
    codes = frozenset(item.strip().upper() for item in items if item.strip())
    unknown = sorted(code for code in codes if not any(rule.startswith(code) for rule in RULES))
    if unknown:
        raise UsageError(
            f"unknown rule {', '.join(unknown)} in {option}",
            hint=f"known rules: {', '.join(RULES)}",
        )
    return codes


def _config_suppressed(finding: Finding, suppress: Sequence[str]) -> bool:
    """Whether a ``PATH[:LINE]:RULE`` entry names the finding (the path pattern matches
    from the right, as ``PurePath.match``: ``glm.py`` or ``models/*/glm.py``)."""
    for entry in suppress:
        parts = entry.split(":")
        rule = parts.pop()
        line = parts.pop() if len(parts) > 1 and parts[-1].isdigit() else ""
        pattern = ":".join(parts)
        if not finding.rule.startswith(rule.upper()) or (line and int(line) != finding.line):
            continue
        if PurePath(finding.path).match(pattern):
            return True
    return False


def lint_paths(
    paths: Iterable[str | Path],
    select: Iterable[str] | str | None = None,
    ignore: Iterable[str] | str | None = None,
    suppress: Sequence[str] = (),
) -> LintResult:
    """Lint files and directories together (the execution path is resolved across them).
    ``suppress``: the config's ``PATH[:LINE]:RULE`` entries, counted as suppressed."""
    selected = parse_rule_list(select, option="select")  # bad codes fail before any parsing
    ignored = parse_rule_list(ignore, option="ignore")
    checks = [
        check
        for rule, (check, _) in RULES.items()
        if (selected is None or any(rule.startswith(code) for code in selected))
        and not (ignored is not None and any(rule.startswith(code) for code in ignored))
    ]
    modules = [read_module(path) for path in discover(paths)]
    resolved = resolve_paths(modules)
    project = Project(modules)
    findings: set[Finding] = set()
    suppressed: dict[Finding, str] = {}
    for module in modules:
        info = resolved[module.path]
        both = info.path is ExecPath.ANY and info.source == "compile"  # compiled both ways here
        spans = function_paths(module) if both else ()
        ctx = Context(module, info, project, spans, *project.wrappers_in(module))
        for check in checks:
            try:
                produced = list(check(ctx))
            except RecursionError as err:
                raise InputError("source nested too deeply to analyse", path=module.path) from err
            for finding in produced:
                if module.suppressed(finding.line, finding.rule):
                    suppressed[finding] = "inSource"
                elif _config_suppressed(finding, suppress):
                    suppressed[finding] = "external"
                else:
                    findings.add(finding)
    return LintResult(
        findings=tuple(sorted(findings)),
        files=tuple(module.path for module in modules),
        paths=resolved,
        suppressed_findings=tuple(sorted(suppressed.items())),
    )


def source_path(folder: str | Path) -> tuple[ExecutionPath | None, str]:
    """``--source DIR``: its model code's execution path and the evidence, else None and why
    (several paths, or TorchAir's aclgraph mode, which takes both APIs)."""
    modules = [read_module(path) for path in discover([folder])]
    if not modules:
        raise InputError("no Python file to detect the execution path from", path=folder)
    infos = resolve_paths(modules).values()
    found = {info.path for info in infos}
    evidence = min(infos, key=lambda info: (info.source != "compile", info.where))
    if len(found) != 1 or evidence.path in (ExecPath.ACLGRAPH, ExecPath.ANY):
        names = ", ".join(sorted(p.value for p in found))
        return None, f"{folder}: the model code gives no single path ({names})"
    # ge, npugraph_ex and eager: the analysis's names too (model.ExecutionPath)
    return cast("ExecutionPath", evidence.path.value), f"--source {folder}: {evidence.describe()}"
