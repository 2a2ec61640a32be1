"""Import alias resolution: which dotted API a name or attribute chain stands for.

Only the three roots that carry multi-stream APIs are tracked (``torch``,
``torch_npu``, ``torchair``); everything else resolves to ``None`` and is never
reported. Resolution is flow-insensitive: every import anywhere in the module
(top level, inside functions, inside ``try``) counts.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

ROOTS = frozenset({"torch", "torch_npu", "torchair"})

# Spellings that are the same object as a shorter canonical name, so that the
# rules only need to know one name per API.
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
class ImportedName:
    """A name bound by ``from X import y [as z]``: where it was imported, for OC102."""

    qualname: str
    node: ast.ImportFrom


@dataclass(frozen=True)
class Aliases:
    """Local name -> dotted module or object path, for the tracked roots."""

    names: dict[str, str]
    from_imports: dict[str, ImportedName]

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
    from_imports: dict[str, ImportedName] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root not in ROOTS:
                    continue
                if alias.asname is not None:
                    names[alias.asname] = alias.name
                else:
                    # `import torch.npu` binds `torch`, not `torch.npu`.
                    names[root] = root
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
                from_imports[local] = ImportedName(canonical(qualname), node)
    aliases = Aliases(names, from_imports)
    # Module-level shorthands such as `ngx = torch.npu.npugraph_ex` (top level only:
    # a local of the same name inside a function could be anything).
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name) and isinstance(stmt.value, (ast.Name, ast.Attribute)):
                resolved = aliases.qualify(stmt.value)
                if resolved is not None:
                    names[target.id] = resolved
    return aliases


def dotted_name(node: ast.AST) -> str | None:
    """``self.w13.weight`` for an attribute chain on a plain name, else None (calls, subscripts)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])
