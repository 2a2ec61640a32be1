"""Which reads of a tensor touch its data (metadata reads do not: the host knows them), and
the facts they run under: a branch taken tells the truth of its condition's flags, and
places whose facts disagree on a flag never both run (docs/lint-rules.md, OC104)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from overlap_check.lint.project import Callee, Project
from overlap_check.lint.source import dotted_name

Fact = tuple[str, bool]  # (flag: a name or attribute chain, its truth)
Facts = frozenset[Fact]
NO_FACTS: Facts = frozenset()

META_ATTRS = frozenset(
    {"shape", "dtype", "device", "ndim", "is_cuda", "layout", "size", "dim", "numel",
     "ndimension", "element_size", "nelement", "get_device", "is_contiguous", "stride"}
)  # fmt: skip
META_FUNCS = frozenset({"len", "isinstance", "type", "id"})
# calls that give host values or handles, not device tensors (builtins, methods by name)
HOST_FUNCS = frozenset(
    {"int", "float", "bool", "len", "str", "range", "list", "tuple", "dict", "set", "max",
     "min", "sum", "abs", "round", "getattr", "zip", "enumerate"}
)  # fmt: skip
HOST_METHODS = frozenset({"item", "tolist", "get", "keys", "values", "items", "pop", "copy"})


def host_call(call: ast.Call) -> bool:
    """``len(x)``, ``x.item()``, ``x.size(0)``: a call whose result lives on the host."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in HOST_FUNCS
    return isinstance(func, ast.Attribute) and func.attr in HOST_METHODS | META_ATTRS


SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def facts_of(test: ast.expr, truth: bool) -> set[Fact]:
    """What ``test`` evaluating to ``truth`` says: of its flags (names and attribute
    chains, the same wherever tested), and of this very evaluation (any other test: the
    two branches of one ``if`` exclude each other, two ``if``s on one call need not)."""
    own = {(dotted_name(test) or f"@{id(test)}", truth)}
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return own | facts_of(test.operand, not truth)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == truth:
        # `a and b` true: both are; `a or b` false: neither is
        return own.union(*(facts_of(value, truth) for value in test.values))
    return own


def exclusive(first: Facts, second: Facts) -> bool:
    """True when the two sets of facts disagree on a flag: the places never both run."""
    return any((name, not truth) in second for name, truth in first)


def stores(node: ast.AST) -> set[str]:
    """Names and attribute chains that ``node`` assigns."""
    stored = [
        dotted_name(child)
        for child in ast.walk(node)
        if isinstance(child, (ast.Name, ast.Attribute)) and isinstance(child.ctx, ast.Store)
    ]
    return {name for name in stored if name is not None}


class Reads:
    """Data reads in one file, with the calls into the project resolved."""

    def __init__(self, project: Project, path: str) -> None:
        self.project = project
        self.path = path

    def data_reads(
        self, node: ast.AST, facts: Facts = NO_FACTS, *, nested: bool = False
    ) -> Iterator[tuple[ast.Name, Facts]]:
        """Every name read in ``node`` except metadata uses, with the facts it runs under;
        ``nested``: also inside nested functions and lambdas. Iterative (deep generated code)."""
        todo: list[tuple[ast.AST, Facts]] = [(node, facts)]
        while todo:
            current, known = todo.pop()
            if isinstance(current, ast.Name):
                yield current, known
                continue
            if isinstance(current, ast.BoolOp):
                running = set(known)
                for value in current.values:  # `a and b`: b runs only where a was true
                    todo.append((value, frozenset(running)))
                    running |= facts_of(value, isinstance(current.op, ast.And))
                continue
            if isinstance(current, ast.IfExp):
                todo.append((current.test, known))
                todo.append((current.body, known | facts_of(current.test, True)))
                todo.append((current.orelse, known | facts_of(current.test, False)))
                continue
            skip = self._metadata_names(current)
            for child in ast.iter_child_nodes(current):
                if id(child) in skip or (isinstance(child, SCOPES) and not nested):
                    continue
                todo.append((child, known))

    def _metadata_names(self, node: ast.AST) -> set[int]:
        """The names among ``node``'s operands that it reads only the metadata of."""
        if isinstance(node, ast.Attribute) and node.attr in (*META_ATTRS, "record_stream"):
            # metadata, or allocator bookkeeping (x.record_stream(s) reads nothing of x)
            return {id(node.value)} if isinstance(node.value, ast.Name) else set()
        if isinstance(node, ast.Compare) and all(
            isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops
        ):
            return {id(n) for n in (node.left, *node.comparators) if isinstance(n, ast.Name)}
        if not isinstance(node, ast.Call):
            return set()
        if isinstance(node.func, ast.Name) and node.func.id in META_FUNCS and node.args:
            return {id(node.args[0])}
        if (dotted_name(node.func) or "").endswith("npu_record_tagged_stream") and node.args:
            return {id(node.args[0])}  # bookkeeping, as x.record_stream(s)
        callees = self.project.callees(self.path, node)
        if not callees:
            return set()
        params: list[tuple[ast.AST, int | str]] = [
            (arg, index) for index, arg in enumerate(node.args) if isinstance(arg, ast.Name)
        ]
        params += [
            (k, k.arg) for k in node.keywords if isinstance(k.value, ast.Name) and k.arg is not None
        ]
        return {id(n) for n, param in params if all(self.metadata_only(c, param) for c in callees)}

    def metadata_only(self, callee: Callee, param: int | str) -> bool:
        """Whether ``callee`` reads only the metadata of one parameter (by position or name)."""
        arguments = callee.node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        if isinstance(param, int):
            if param + callee.offset >= len(positional):
                return False
            param = positional[param + callee.offset].arg
        elif param not in {a.arg for a in [*arguments.args, *arguments.kwonlyargs]}:
            return False
        key = (callee.path, id(callee.node), param)
        memo = self.project.metadata_memo
        if key not in memo:
            memo[key] = False  # a recursive call is not proof
            reads = self if callee.path == self.path else Reads(self.project, callee.path)
            memo[key] = not any(
                param in stores(stmt)
                or any(read.id == param for read, _ in reads.data_reads(stmt, nested=True))
                for stmt in callee.node.body
            )
        return memo[key]
