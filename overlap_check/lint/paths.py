"""The execution path a module runs under, from its compile calls (or its path pragma),
else from the other linted files', else eager; per function in a module compiled both
ways. The rules: docs/lint-rules.md, "How the execution path of a module is decided"."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from enum import Enum

from overlap_check.lint.apis import GE_MARKERS
from overlap_check.lint.source import SourceModule, dotted_name, keyword_true
from overlap_check.model.errors import InputError

NGX_CACHE = "torch.npu.npugraph_ex.inference.cache_compile"
GE_CACHE = "torchair.inference.cache_compile"


class ExecPath(str, Enum):
    GE = "ge"
    NPUGRAPH_EX = "npugraph_ex"
    ACLGRAPH = "aclgraph"  # TorchAir backend in reduce-overhead (aclgraph) mode
    EAGER = "eager"
    ANY = "any"  # compiled both ways, or declared a shared helper: path rules do not apply


_LABELS = {
    ExecPath.GE: "GE graph (TorchAir backend)",
    ExecPath.NPUGRAPH_EX: 'npugraph_ex (backend="npugraph_ex")',
    ExecPath.ACLGRAPH: "TorchAir aclgraph (reduce-overhead)",
    ExecPath.EAGER: "eager",
    ExecPath.ANY: "any (both paths)",
}
_HOW = {"pragma": "declared", "project": "from the compile call", "compile": "compiled"}


@dataclass(frozen=True)
class PathInfo:
    path: ExecPath
    source: str  # "compile", "pragma", "project" or "default"
    file: str = ""  # where the evidence is (compile call or pragma)
    line: int = 0
    dynamic_fullgraph: bool = False  # npugraph_ex compiled with fullgraph=True, dynamic=True

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else ""

    def describe(self, module: str = "") -> str:
        """``GE graph (TorchAir backend), compiled at line 40`` as seen from ``module``."""
        if self.source == "default":
            return f"{_LABELS[self.path]} (no graph compile in the linted files)"
        where = f"line {self.line}" if self.file == module else self.where
        return f"{_LABELS[self.path]}, {_HOW[self.source]} at {where}"

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path.value, "source": self.source, "where": self.where}


def _npugraph_ex_compiles(module: SourceModule) -> list[ast.Call]:
    """``torch.compile(..., backend="npugraph_ex")`` (the backend maybe a variable assigned
    the string: ``backend = "npugraph_ex"``), then npugraph_ex's ``cache_compile`` calls."""
    calls = []
    for ref in module.calls("torch.compile"):
        assert ref.call is not None
        value = next((k.value for k in ref.call.keywords if k.arg == "backend"), None)
        if isinstance(value, ast.Name):  # the last string assigned to it, if any
            strings = [
                node.value
                for node in ast.walk(module.tree)
                if isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
                and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets)
            ]
            value = strings[-1] if strings else value
        if isinstance(value, ast.Constant) and value.value == "npugraph_ex":
            calls.append(ref.call)
    return calls + [r.call for r in module.calls(NGX_CACHE) if r.call]


def _aclgraph_mode(tree: ast.Module) -> bool:
    """``config.mode = "reduce-overhead"`` (or ``"npugraph_ex"``) on a TorchAir config."""
    return any(
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and node.value.value in ("reduce-overhead", "npugraph_ex")
        and any(isinstance(t, ast.Attribute) and t.attr == "mode" for t in node.targets)
        for node in ast.walk(tree)
    )


def own_path(module: SourceModule) -> PathInfo | None:
    """The path this module's own compile calls (or pragma) give, or None when it has none."""
    if module.path_pragma is not None:
        declared, line = module.path_pragma
        try:
            path = ExecPath(declared)
        except ValueError:
            names = ", ".join(p.value for p in ExecPath)
            raise InputError(
                f"unknown path {declared!r} in '# overlap-check: path=' (expected one of {names})",
                path=module.path,
                line=line,
            ) from None
        return PathInfo(path, "pragma", module.path, line)
    ge = module.calls(*GE_MARKERS)
    ngx = _npugraph_ex_compiles(module)
    if ge and ngx:
        return PathInfo(ExecPath.ANY, "compile", module.path, ge[0].line)
    if ge:
        path = ExecPath.ACLGRAPH if _aclgraph_mode(module.tree) else ExecPath.GE
        return PathInfo(path, "compile", module.path, ge[0].line)
    if ngx:
        dynamic = any(keyword_true(c, "fullgraph") and keyword_true(c, "dynamic") for c in ngx)
        return PathInfo(ExecPath.NPUGRAPH_EX, "compile", module.path, ngx[0].lineno, dynamic)
    return None


def resolve_paths(modules: list[SourceModule]) -> dict[str, PathInfo]:
    """Each module's path: its own, else the linted files' single compile path, else eager."""
    own = {module.path: own_path(module) for module in modules}
    compiled = [info for info in own.values() if info is not None and info.source == "compile"]
    kinds = {info.path for info in compiled}
    fallback: PathInfo
    if len(kinds) == 1:
        dynamic = any(info.dynamic_fullgraph for info in compiled)
        fallback = replace(compiled[0], source="project", dynamic_fullgraph=dynamic)
    elif kinds:
        first = min(compiled, key=lambda info: info.where)
        fallback = PathInfo(ExecPath.ANY, "project", first.file, first.line)
    else:
        fallback = PathInfo(ExecPath.EAGER, "default")
    return {path: info if info is not None else fallback for path, info in own.items()}


_Function = ast.FunctionDef | ast.AsyncFunctionDef


def _compiled(module: SourceModule) -> list[tuple[ast.Call, ExecPath]]:
    """Each compile call of the module with the path it compiles for."""
    found = [(call, ExecPath.NPUGRAPH_EX) for call in _npugraph_ex_compiles(module)]
    found += [(r.call, ExecPath.GE) for r in module.calls(GE_CACHE) if r.call]
    ge_backends = {  # npu_backend = torchair.get_npu_backend(...)
        t.id
        for ref in module.calls("torchair.get_npu_backend")
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Assign) and node.value is ref.call
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for ref in module.calls("torch.compile"):
        assert ref.call is not None
        backend = next((k.value for k in ref.call.keywords if k.arg == "backend"), None)
        if (isinstance(backend, ast.Name) and backend.id in ge_backends) or (
            isinstance(backend, ast.Call)
            and module.aliases.qualify(backend.func) == "torchair.get_npu_backend"
        ):
            found.append((ref.call, ExecPath.GE))
    return found


def function_paths(module: SourceModule) -> tuple[tuple[int, int, ExecPath], ...]:
    """(first line, last line, path) of each function of a module compiled both ways that a
    compile reaches: the one path it is compiled for, ANY where both compiles reach it."""
    functions: dict[str, list[_Function]] = {}
    enclosing: dict[int, _Function] = {}
    for node in ast.walk(module.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append(node)
            for inner in ast.walk(node):  # breadth first: an inner function comes later
                if inner is not node:
                    enclosing[id(inner)] = node
    reached: dict[int, set[ExecPath]] = {}
    for call, path in _compiled(module):
        if not call.args:
            continue
        targets = [call.args[0]]
        where = enclosing.get(id(call))
        if isinstance(call.args[0], ast.Name) and where is not None:  # model_fn = self.decode
            targets += [
                n.value
                for n in ast.walk(where)
                if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == call.args[0].id for t in n.targets)
            ]
        todo = [
            f
            for target in targets
            for f in functions.get((dotted_name(target) or "").rpartition(".")[2], [])
        ]
        while todo:
            function = todo.pop()
            paths = reached.setdefault(id(function), set())
            if path in paths:
                continue
            paths.add(path)
            for node in ast.walk(function):
                if isinstance(node, ast.Call):
                    name = dotted_name(node.func) or ""
                    head, _, leaf = name.rpartition(".")
                    if head in ("", "self", "cls"):
                        todo += functions.get(leaf, [])
    return tuple(
        (f.lineno, f.end_lineno or f.lineno, next(iter(p)) if len(p) == 1 else ExecPath.ANY)
        for named in functions.values()
        for f in named
        if (p := reached.get(id(f)))
    )
