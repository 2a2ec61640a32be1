"""What a rule sees of one module: the module, the execution path of each of its
functions, the project around it (wrappers, helpers that read only metadata).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from overlap_check.lint.findings import Finding
from overlap_check.lint.paths import ExecPath, PathInfo
from overlap_check.lint.project import Project
from overlap_check.lint.source import ApiRef, SourceModule


@dataclass(frozen=True)
class Context:
    """One module under its path; ``spans``: (first line, last line, path) of functions
    judged on their own (a module compiled both ways); ``in_wrappers``: the nodes inside
    the module's own wrapper functions; ``wrapper_calls``: its calls of project wrappers."""

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
