"""What a rule sees of one module (its Context) and what the linter reports: one finding
per mistake, and the result of a run."""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field, replace

from overlap_check.lint.paths import ExecPath, PathInfo
from overlap_check.lint.project import Project
from overlap_check.lint.source import ApiRef, SourceModule


@dataclass(frozen=True, order=True)
class Finding:
    """One mistake at one place. ``line`` and ``col`` are 1-based (as editors show them)."""

    path: str
    line: int
    col: int
    rule: str
    message: str
    hint: str

    def to_dict(self) -> dict[str, str | int]:
        return {
            key: getattr(self, key) for key in ("rule", "path", "line", "col", "message", "hint")
        }


@dataclass(frozen=True)
class Context:
    """One module under its path; ``spans``: (first, last line, path) of functions judged on
    their own; ``in_wrappers``: nodes in its own wrappers; ``wrapper_calls``: its wrapper calls."""

    module: SourceModule
    path: PathInfo
    project: Project
    spans: tuple[tuple[int, int, ExecPath], ...] = ()
    in_wrappers: frozenset[int] = frozenset()
    wrapper_calls: tuple[ApiRef, ...] = ()
    stream_wrappers: bool = False  # `with` of a project wrapper that may return torch.npu.stream

    def path_at(self, node: ast.AST) -> PathInfo:
        """The path the code at ``node`` runs under: its function's, else the module's."""
        line = getattr(node, "lineno", 0)
        inside = [span for span in self.spans if span[0] <= line <= span[1]]
        return replace(self.path, path=max(inside)[2]) if inside else self.path

    def finding(self, rule: str, node: ast.AST, message: str, hint: str) -> Finding:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1
        return Finding(self.module.path, line, col, rule, message, hint)


@dataclass(frozen=True)
class LintResult:
    """The findings of one `lint` run, sorted; ``files``: every file checked (clean ones
    too, for JUnit); ``paths``: the execution path each was judged under."""

    findings: tuple[Finding, ...]
    files: tuple[str, ...]
    paths: dict[str, PathInfo] = field(default_factory=dict)
    # each with how: "inSource" (a comment) or "external" ([lint] suppress), SARIF's names
    suppressed_findings: tuple[tuple[Finding, str], ...] = ()

    @property
    def suppressed(self) -> int:
        return len(self.suppressed_findings)

    def by_rule(self, *, suppressed: bool = False) -> dict[str, int]:
        found = [f for f, _ in self.suppressed_findings] if suppressed else self.findings
        return dict(sorted(Counter(f.rule for f in found).items()))

    def suppressed_text(self) -> str:
        """``2 suppressed (OC104 x1, OC108 x1)``, or empty when none was."""
        if not self.suppressed:
            return ""
        counts = ", ".join(f"{r} x{n}" for r, n in self.by_rule(suppressed=True).items())
        return f"{self.suppressed} suppressed ({counts})"

    def summary(self) -> dict[str, object]:
        return {
            "files": len(self.files),
            "findings": len(self.findings),
            "suppressed": self.suppressed,
            "by_rule": self.by_rule(),
            "suppressed_by_rule": self.by_rule(suppressed=True),
        }
