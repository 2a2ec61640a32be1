"""One parsed module (never imported or run): its tree, comments, import aliases and the
tracked API calls in it. Only ``torch``, ``torch_npu`` and ``torchair`` are tracked, and
every import anywhere in the module counts (flow-insensitive)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from overlap_check.model.errors import InputError, regular_file

ROOTS = frozenset({"torch", "torch_npu", "torchair"})

# Spellings of one object under a shorter name: the rules know one name per API.
_CANONICAL: tuple[tuple[str, str], ...] = (
    ("torch_npu.npu", "torch.npu"),
    ("torchair.configs.compiler_config.CompilerConfig", "torchair.CompilerConfig"),
    ("torchair.npu_fx_compiler.get_npu_backend", "torchair.get_npu_backend"),
)


def canonical(qualname: str) -> str:
    """The one name the rules use (``torch_npu.npu.Stream`` -> ``torch.npu.Stream``)."""
    for old, new in _CANONICAL:
        if qualname == old or qualname.startswith(old + "."):
            return new + qualname[len(old) :]
    return qualname


@dataclass(frozen=True)
class Aliases:
    """Local name -> dotted module or object path, for the tracked roots."""

    names: dict[str, str]
    # a name bound by `from X import y [as z]` -> its canonical name and import (for OC102)
    from_imports: dict[str, tuple[str, ast.ImportFrom]]

    def qualify(self, node: ast.AST) -> str | None:
        """The canonical dotted path ``node`` refers to, or None when it is not a tracked API."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.names.get(head)
        if base is None:
            return None
        return canonical(f"{base}.{rest}" if rest else base)


def collect_aliases(tree: ast.Module) -> Aliases:
    names: dict[str, str] = {}
    from_imports: dict[str, tuple[str, ast.ImportFrom]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in ROOTS:  # `import torch.npu` binds `torch`, not `torch.npu`
                    names[alias.asname or root] = alias.name if alias.asname else root
        elif isinstance(node, ast.ImportFrom):
            # Relative imports (level > 0) are the user's own modules.
            if node.level or node.module is None or node.module.split(".")[0] not in ROOTS:
                continue
            for alias in node.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                qualname = f"{node.module}.{alias.name}"
                names[local] = qualname
                from_imports[local] = (canonical(qualname), node)
    aliases = Aliases(names, from_imports)
    # Shorthands such as `ngx = torch.npu.npugraph_ex`, top level only (a local could be anything)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            resolved = aliases.qualify(stmt.value)  # None unless a name or attribute chain
            if isinstance(stmt.targets[0], ast.Name) and resolved is not None:
                names[stmt.targets[0].id] = resolved
    return aliases


def keyword_true(call: ast.Call, name: str) -> bool:
    """``call`` passes ``name=True``."""
    return any(
        k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def dotted_name(node: ast.AST) -> str | None:
    """``self.w13.weight`` for an attribute chain on a plain name, else None (calls, subscripts)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


_IGNORE = re.compile(r"#\s*overlap-check:\s*ignore(?:\[(?P<rules>[^\]]*)\])?", re.IGNORECASE)
_PATH_PRAGMA = re.compile(r"#\s*overlap-check:\s*path\s*=\s*(?P<path>[\w-]+)", re.IGNORECASE)

ALL_RULES = "*"


@dataclass(frozen=True)
class ApiRef:
    """A reference to a tracked API: the outermost Name/Attribute chain that resolves."""

    qualname: str
    node: ast.expr
    call: ast.Call | None  # the call made through this reference, if it is called

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def col(self) -> int:
        return self.node.col_offset + 1


@dataclass(frozen=True)
class SourceModule:
    path: str
    tree: ast.Module
    aliases: Aliases
    refs: tuple[ApiRef, ...]
    # line -> rule IDs suppressed there ("*" = all)
    suppressions: dict[int, frozenset[str]]
    # (declared path, line) from `# overlap-check: path=...`, if any
    path_pragma: tuple[str, int] | None

    def calls(self, *qualnames: str) -> list[ApiRef]:
        wanted = set(qualnames)
        return [ref for ref in self.refs if ref.call is not None and ref.qualname in wanted]

    def suppressed(self, line: int, rule: str) -> bool:
        rules = self.suppressions.get(line)
        return rules is not None and (ALL_RULES in rules or rule in rules)


def read_module(path: Path) -> SourceModule:
    """Parse one file; unreadable input or a syntax error is an InputError naming file, line."""
    regular_file(path, "Python source file")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read file: {err.strerror or err}", path=path) from err
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError as err:
        raise InputError(
            f"syntax error: {err.msg}",
            path=path,
            line=err.lineno,
            hint="lint needs valid Python source",
        ) from err
    except ValueError as err:  # null bytes, undecodable source
        raise InputError(f"not Python source: {err}", path=path) from err
    except RecursionError as err:  # generated code nested deeper than the parser goes
        raise InputError("source nested too deeply to parse", path=path) from err
    aliases = collect_aliases(tree)
    refs = tuple(_collect_refs(tree, aliases))
    return SourceModule(str(path), tree, aliases, refs, *_scan_comments(data, path))


def _scan_comments(
    data: bytes, path: Path
) -> tuple[dict[int, frozenset[str]], tuple[str, int] | None]:
    suppressions: dict[int, frozenset[str]] = {}
    pragma: tuple[str, int] | None = None
    if b"overlap-check" not in data.lower():
        return suppressions, pragma  # tokenising is the slowest step: skip it when it cannot matter
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(data).readline))
    except (tokenize.TokenError, SyntaxError) as err:  # pragma: no cover - ast.parse saw it
        raise InputError(f"cannot tokenize: {err}", path=path) from err
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        ignore = _IGNORE.search(token.string)
        if ignore is not None:
            listed = ignore.group("rules")
            parts = [ALL_RULES] if listed is None else listed.split(",")
            suppressions[line] = frozenset(p.strip().upper() for p in parts if p.strip())
        declared = _PATH_PRAGMA.search(token.string)
        if declared is not None and pragma is None:
            pragma = (declared.group("path").lower(), line)
    return suppressions, pragma


def _collect_refs(tree: ast.Module, aliases: Aliases) -> list[ApiRef]:
    """Every outermost Name/Attribute chain that resolves to a tracked root."""
    inner: set[int] = set()  # chains that are the value of a longer chain
    called: dict[int, ast.Call] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
        elif isinstance(node, ast.Call):
            called[id(node.func)] = node
    refs: list[ApiRef] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Name, ast.Attribute)) or id(node) in inner:
            continue
        if not isinstance(node.ctx, ast.Load):
            continue
        qualname = aliases.qualify(node)
        if qualname is not None:
            refs.append(ApiRef(qualname, node, called.get(id(node))))
    refs.sort(key=lambda ref: (ref.line, ref.col))
    return refs
