"""What the linted files know of each other: calls resolved to the repository's functions
(parsed, never run), and the project's wrappers of stream contexts, judged at their
callers. The rules: docs/lint-rules.md, "Your own wrappers are your API"."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from overlap_check.lint import apis
from overlap_check.lint.source import Aliases, ApiRef, SourceModule, collect_aliases, dotted_name

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_MAX_UP = 8  # folders searched above a file for an absolutely imported module


@dataclass(frozen=True)
class Callee:
    path: str
    node: FunctionNode
    offset: int  # positional arguments of the call start at this parameter (1 for self)


@dataclass
class _Parsed:
    tree: ast.Module
    aliases: Aliases
    functions: dict[str, list[FunctionNode]]  # top-level functions, by name
    methods: dict[str, list[FunctionNode]]  # methods of the module's classes, by name
    imported: dict[str, tuple[str, int, str]]  # local name -> (module, level, name there)


def _parse(tree: ast.Module, aliases: Aliases | None = None) -> _Parsed:
    functions: dict[str, list[FunctionNode]] = {}
    methods: dict[str, list[FunctionNode]] = {}
    imported: dict[str, tuple[str, int, str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(stmt.name, []).append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods.setdefault(item.name, []).append(item)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module or "", node.level, alias.name)
    return _Parsed(tree, aliases or collect_aliases(tree), functions, methods, imported)


def _is_static(node: FunctionNode) -> bool:
    return any(dotted_name(d) == "staticmethod" for d in node.decorator_list)


class Project:
    """The linted modules, and the same repository's other files as calls need them."""

    def __init__(self, modules: Sequence[SourceModule]) -> None:
        self._parsed: dict[str, _Parsed | None] = {
            m.path: _parse(m.tree, m.aliases) for m in modules
        }
        self._wrappers: dict[int, frozenset[str]] = {}
        self._files: dict[tuple[str, str, int], str | None] = {}
        # (file, function, parameter) -> whether it reads only the parameter's metadata
        self.metadata_memo: dict[tuple[str, int, str], bool] = {}

    def parsed(self, path: str) -> _Parsed | None:
        if path not in self._parsed:
            self._parsed[path] = None  # a cycle of imports ends here
            with contextlib.suppress(OSError, SyntaxError, ValueError, RecursionError):
                self._parsed[path] = _parse(ast.parse(Path(path).read_bytes(), filename=path))
        return self._parsed[path]

    def _module_file(self, importer: str, module: str, level: int) -> str | None:
        """The file of ``from module import ...`` (``level``: relative) seen from ``importer``."""
        key = (str(Path(importer).parent), module, level)
        if key not in self._files:
            parents = Path(importer).parents
            bases = list(parents)[level - 1 : level] if level else list(parents)[:_MAX_UP]
            stems = [base.joinpath(*(p for p in module.split(".") if p)) for base in bases]
            found = [
                candidate
                for stem in stems
                for candidate in (stem.with_suffix(".py") if module else None, stem / "__init__.py")
                if candidate is not None and candidate.is_file()
            ]
            self._files[key] = str(found[0]) if found else None
        return self._files[key]

    def _function(self, path: str, name: str, hops: int = 3) -> tuple[str, list[FunctionNode]]:
        """The top-level functions ``name`` stands for in ``path``, through its imports."""
        parsed = self.parsed(path)
        if parsed is None:
            return path, []
        if name in parsed.functions:
            return path, parsed.functions[name]
        origin = parsed.imported.get(name)
        if origin is None or hops == 0:
            return path, []
        module, level, there = origin
        file = self._module_file(path, module, level)
        return self._function(file, there, hops - 1) if file else (path, [])

    def callees(self, path: str, call: ast.Call) -> list[Callee]:
        """The project functions a call runs (empty when it cannot be told)."""
        func = call.func
        parsed = self.parsed(path)
        if parsed is None:
            return []
        if isinstance(func, ast.Attribute) and dotted_name(func.value) in ("self", "cls"):
            return [
                Callee(path, node, 0 if _is_static(node) else 1)
                for node in parsed.methods.get(func.attr, [])
            ]
        if isinstance(func, ast.Name):
            where, nodes = self._function(path, func.id)
            return [Callee(where, node, 0) for node in nodes]
        return []

    def _wrappers_called(
        self, path: str, call: ast.Call
    ) -> Iterator[tuple[Callee, Aliases, frozenset[str]]]:
        """The project functions a call runs, their file's aliases and what each wraps."""
        for callee in self.callees(path, call):
            parsed = self.parsed(callee.path)
            if parsed is not None:
                yield callee, parsed.aliases, self.wrapper_apis(callee.node, parsed.aliases)

    def stream_argument(self, path: str, call: ast.Call) -> ast.expr | None:
        """The caller's argument that a project wrapper hands to ``torch.npu/cuda.stream``."""
        for callee, aliases, wrapped in self._wrappers_called(path, call):
            if not wrapped or not wrapped <= apis.STREAM_CONTEXTS:
                continue  # not a wrapper, or one that may pick a graph-mode switch instead
            params = [a.arg for a in [*callee.node.args.posonlyargs, *callee.node.args.args]]
            for ret in ast.walk(callee.node):
                if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call)):
                    continue
                if aliases.qualify(ret.value.func) not in apis.STREAM_CONTEXTS:
                    continue
                first = ret.value.args[0] if ret.value.args else None
                if not isinstance(first, ast.Name) or first.id not in params:
                    continue
                index = params.index(first.id) - callee.offset
                given = [k.value for k in call.keywords if k.arg == first.id]
                given += call.args[index : index + 1] if index >= 0 else []
                if given:
                    return given[0]
        return None

    def wrapper_apis(self, node: FunctionNode, aliases: Aliases) -> frozenset[str]:
        """What a wrapper function returns (empty when ``node`` is no wrapper)."""
        if id(node) in self._wrappers:
            return self._wrappers[id(node)]
        found: set[str] = set()
        todo: list[ast.stmt] = list(node.body)
        while todo:
            stmt = todo.pop()
            if isinstance(stmt, ast.If):
                todo += stmt.body + stmt.orelse
            elif isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
                qualname = aliases.qualify(stmt.value.func)
                if qualname is not None and (
                    qualname in apis.STREAM_CONTEXTS
                    or apis.split(qualname)[1] in (apis.SWITCH, apis.LIMIT)
                ):
                    found.add(qualname)
            elif not isinstance(stmt, (ast.Pass, ast.Return)) and not (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            ):
                todo, found = [], set()  # more than choosing a context: not a wrapper
        self._wrappers[id(node)] = frozenset(found)
        return self._wrappers[id(node)]

    def wrappers_in(self, module: SourceModule) -> tuple[frozenset[int], tuple[ApiRef, ...], bool]:
        """The nodes inside the module's own wrappers; the contexts its ``with`` statements
        take from project wrappers, as references to the API each wraps (a wrapper of both
        families, which picks one at run time, as none); whether one may be a stream."""
        inside: set[int] = set()
        calls: list[ApiRef] = []
        streams = False
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if self.wrapper_apis(node, module.aliases):
                    inside |= {id(child) for child in ast.walk(node)}
            elif isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call):
                call = node.context_expr
                if module.aliases.qualify(call.func):
                    continue
                called = self._wrappers_called(module.path, call)
                wrapped = frozenset[str]().union(*(returned for _, _, returned in called))
                streams |= bool(wrapped) and wrapped <= apis.STREAM_CONTEXTS
                if len({apis.family(q) for q in wrapped}) == 1:
                    calls.append(ApiRef(min(wrapped), call.func, call))
        calls = [ref for ref in calls if id(ref.node) not in inside]
        calls.sort(key=lambda ref: (ref.line, ref.col))
        return frozenset(inside), tuple(calls), streams
