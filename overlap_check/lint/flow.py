"""Data flow across streams (OC104, OC201): side-stream results used on the main stream.

Each body is flattened into steps in source order, each knowing its stream; the names a
side block assigns are followed through the steps after it, and a main-stream read before
any synchronisation is a finding. What counts as a wait, and what is not judged:
docs/lint-rules.md, OC104."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from overlap_check.lint.apis import CUDA_STREAM_CTX, MAIN_STREAM_GETTERS, STREAM_CTX
from overlap_check.lint.project import Project
from overlap_check.lint.source import Aliases, SourceModule, dotted_name
from overlap_check.lint.uses import (
    NO_FACTS,
    SCOPES,
    Facts,
    Reads,
    exclusive,
    facts_of,
    host_call,
    stores,
)


@dataclass(frozen=True)
class Step:
    nodes: tuple[ast.AST, ...]
    side: str | None  # the side stream this step runs on, None for the main stream
    is_return: bool = False
    facts: Facts = NO_FACTS  # what the branches around it say of their flags
    loops: tuple[int, ...] = ()  # the loops around it (a loop carries values across branches)


@dataclass(frozen=True)
class SideBlock:
    node: ast.With | ast.AsyncWith
    stream: str  # source text of the stream expression
    end: int  # index of the first step after the block
    assigned: frozenset[str]
    start: int = 0  # index of the block's own step
    facts: Facts = NO_FACTS
    cuda: bool = False  # torch.cuda.stream (the OC2xx rules), else torch.npu.stream
    loops: tuple[int, ...] = ()


def unsynced_uses(
    module: SourceModule, reads: Reads, eager: Callable[[SideBlock], bool | None]
) -> Iterator[tuple[ast.Name, SideBlock]]:
    """The first unsynchronised main-stream read of each side block's results; ``eager``:
    True where reads in a ``return`` count too, None where the block is not judged."""
    for flat in flattened(module, reads.project):
        for side_block in flat.side_blocks:
            is_eager = eager(side_block)
            if is_eager is None or _joins_itself(flat, side_block):
                continue
            use = _first_unsynced_use(side_block, flat.steps, is_eager, reads)
            if use is not None:
                yield use, side_block


def flattened(module: SourceModule, project: Project) -> Iterator[Flattener]:
    """The module body and each function body as steps, with their side blocks."""
    main_names = {  # names and `self.` attributes that hold the main stream
        name
        for node in ast.walk(module.tree)
        if isinstance(node, ast.Assign) and _is_main_getter(node.value, module.aliases)
        for name in map(dotted_name, node.targets)
        if name is not None
    }
    bodies: list[list[ast.stmt]] = [module.tree.body]
    bodies += [
        n.body
        for n in ast.walk(module.tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    for body in bodies:
        flat = Flattener(module, project, main_names, top_level=body is module.tree.body)
        flat.block(body, None, NO_FACTS)
        if flat.side_blocks:
            yield flat


def _is_main_getter(node: ast.expr, aliases: Aliases) -> bool:
    return isinstance(node, ast.Call) and aliases.qualify(node.func) in MAIN_STREAM_GETTERS


class Flattener:
    def __init__(
        self, module: SourceModule, project: Project, main_names: set[str], top_level: bool
    ) -> None:
        self.aliases = module.aliases
        self.project = project
        self.path = module.path
        self.main_names = main_names
        self.steps: list[Step] = []
        self.side_blocks: list[SideBlock] = []
        self.top_level = top_level  # the module body (its names live on), not a function's
        self.loops: tuple[int, ...] = ()  # the loops around the statement being flattened

    def add(self, step: Step) -> None:
        self.steps.append(replace(step, loops=self.loops))

    def side_results(self, body: list[ast.stmt]) -> frozenset[str]:
        """The names a side block computes, and views of those (``y = s.view(-1)``); a
        view of a tensor from elsewhere (``x = x.view(-1)``) only re-labels that tensor."""
        assigns = [
            n
            for stmt in body
            for n in _walk_local(stmt)
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr))
        ]
        found = {name for n in assigns if self.computes(n.value) for name in stores(n)}
        for n in assigns:  # in source order: a view of a result is a result
            base = _view_base(n.value)
            if base is not None and base in found:
                found |= stores(n)
        return frozenset(name for name in found if "." not in name)

    def computes(self, value: ast.expr | None) -> bool:
        """Whether an assigned value runs device work (not an alias or a view, a constant,
        a host value, an uninitialised allocation, or a stream / event handle)."""
        if value is None or isinstance(value, (ast.Name, ast.Attribute, ast.Constant)):
            return False
        if _view_base(value) is not None:
            return False
        if isinstance(value, ast.BoolOp) or (
            isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
        ):
            return False  # a Python bool (bool() of a tensor would wait for it anyway)
        if isinstance(value, ast.Call):
            qualname = self.aliases.qualify(value.func) or ""
            if qualname in _EMPTY or _callee_name(value) == "new_empty":
                return False  # memory only, no kernel
            return not host_call(value) and not qualname.endswith((".Event", ".Stream"))
        return True

    def side_stream(self, node: ast.With | ast.AsyncWith) -> str | None:
        """Source text of the side stream a ``with`` switches to, else None."""
        for item in node.items:
            call = item.context_expr
            if not isinstance(call, ast.Call):
                continue
            if self.aliases.qualify(call.func) in (STREAM_CTX, CUDA_STREAM_CTX):
                args = [*call.args, *(k.value for k in call.keywords if k.arg == "stream")]
            else:  # a project wrapper that returns torch.npu.stream(s) (or a fake context)
                wrapped = self.project.stream_argument(self.path, call)
                args = [wrapped] if wrapped is not None else []
            if not args:
                continue
            stream = args[0]
            if isinstance(stream, ast.Constant) and stream.value is None:
                continue
            if _is_main_getter(stream, self.aliases) or dotted_name(stream) in self.main_names:
                continue
            return ast.unparse(stream)
        return None

    def block(self, stmts: list[ast.stmt], side: str | None, facts: Facts) -> None:
        for stmt in stmts:
            self.statement(stmt, side, facts)

    def statement(self, stmt: ast.stmt, side: str | None, facts: Facts) -> None:
        if isinstance(stmt, SCOPES):
            return  # analysed on its own
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            start = len(self.steps)
            self.add(Step(tuple(i.context_expr for i in stmt.items), side, False, facts))
            stream = self.side_stream(stmt)
            self.block(stmt.body, stream or side, facts)
            if stream is not None:
                calls = [i.context_expr for i in stmt.items if isinstance(i.context_expr, ast.Call)]
                cuda = CUDA_STREAM_CTX in {self.aliases.qualify(call.func) for call in calls}
                assigned = self.side_results(stmt.body)
                end = len(self.steps)
                block = SideBlock(stmt, stream, end, assigned, start, facts, cuda, self.loops)
                self.side_blocks.append(block)
        elif isinstance(stmt, ast.If):
            self.add(Step((stmt.test,), side, False, facts))
            self.block(stmt.body, side, facts | facts_of(stmt.test, True))
            self.block(stmt.orelse, side, facts | facts_of(stmt.test, False))
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            loop = (stmt.iter, stmt.target) if not isinstance(stmt, ast.While) else (stmt.test,)
            if not isinstance(stmt, ast.While) and _bookkeeping_loop(stmt):
                loop = (stmt.target,)  # `for t in (a, b): t.record_stream(s)`: not a read
            self.add(Step(loop, side, False, facts))
            self.loops = (*self.loops, id(stmt))
            self.block(stmt.body, side, facts)
            self.loops = self.loops[:-1]
            self.block(stmt.orelse, side, facts)
        elif isinstance(stmt, ast.Match):
            self.add(Step((stmt.subject,), side, False, facts))
            for case in stmt.cases:
                self.block(case.body, side, facts)
        elif hasattr(stmt, "handlers"):  # try / try*: every part, in source order
            self.block(getattr(stmt, "body", []), side, facts)
            for handler in getattr(stmt, "handlers", []):
                self.block(handler.body, side, facts)
            self.block(getattr(stmt, "orelse", []), side, facts)
            self.block(getattr(stmt, "finalbody", []), side, facts)
        else:
            self.add(Step((stmt,), side, isinstance(stmt, ast.Return), facts))


_VIEWS = frozenset(
    {"view", "view_as", "transpose", "permute", "unsqueeze", "squeeze", "expand", "expand_as",
     "t", "narrow", "select", "detach", "unflatten", "as_strided"}
)  # fmt: skip
_EMPTY = frozenset({"torch.empty", "torch.empty_like", "torch.empty_strided"})


def _view_base(value: ast.expr | None) -> str | None:
    """``x`` for ``x.view(-1).transpose(0, 1)`` (a view: no device work), else None."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if value.func.attr not in _VIEWS:
            return None
        value = value.func.value
    return value.id if isinstance(value, ast.Name) else None


def _bookkeeping_loop(loop: ast.For | ast.AsyncFor) -> bool:
    """A loop over a literal tuple of names whose body only records the element's use on a
    stream (``t.record_stream(s)``) or checks ``t is None``."""
    target = loop.target
    if not isinstance(target, ast.Name) or not isinstance(loop.iter, (ast.Tuple, ast.List)):
        return False
    nodes = list(ast.walk(ast.Module(body=loop.body, type_ignores=[])))
    allowed = {
        id(n.value) for n in nodes if isinstance(n, ast.Attribute) and n.attr == "record_stream"
    }
    allowed |= {
        id(n.left)
        for n in nodes
        if isinstance(n, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops)
    }
    return all(id(n) in allowed for n in nodes if isinstance(n, ast.Name) and n.id == target.id)


def _walk_local(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` that does not enter nested functions, classes or lambdas (iterative:
    deeply nested generated code cannot exhaust the stack)."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        todo.extend(c for c in ast.iter_child_nodes(current) if not isinstance(c, SCOPES))


def _callee_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def is_sync(node: ast.AST, stream: str = "") -> bool:
    """Whether ``node`` waits or synchronises; with no ``stream`` any wait at all counts
    (OC202 / OC203 give it the benefit), else not ``stream.wait_stream(...)``."""
    for call in _walk_local(node):
        if not isinstance(call, ast.Call):
            continue
        name = _callee_name(call).lower()
        if name == "wait_stream":
            # `side.wait_stream(main)` orders the side after the main stream, not the reverse.
            func = call.func
            if isinstance(func, ast.Attribute) and ast.unparse(func.value) == stream:
                continue
            return True
        if "wait" in name or "sync" in name:
            return True
    return False


def _handed_back(node: ast.AST) -> set[int]:
    """The names a ``return`` hands back as they are (the value, or bare tuple elements)."""
    if not isinstance(node, ast.Return) or node.value is None:
        return set()
    value = node.value
    parts = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    return {id(part) for part in parts if isinstance(part, ast.Name)}


def _joins_itself(flat: Flattener, block: SideBlock) -> bool:
    """``main.wait_stream(side)`` inside the block, on a name that holds the main stream
    (``current_stream()`` there would be the side stream itself)."""
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "wait_stream"
        and dotted_name(call.func.value) in flat.main_names
        for step in flat.steps[block.start + 1 : block.end]
        for node in step.nodes
        for call in _walk_local(node)
    )


def _first_unsynced_use(
    block: SideBlock, steps: list[Step], eager: bool, reads: Reads
) -> ast.Name | None:
    pending = set(block.assigned)
    assigned = set().union(
        *(stores(n) for step in steps[block.start : block.end] for n in step.nodes)
    )
    for step in steps[block.end :]:
        if not pending:
            return None
        step_stores = set().union(*(stores(node) for node in step.nodes))
        # a flag assigned since the block no longer tells which branch ran, nor any flag
        # when a loop around both can carry the value into the other branch
        facts = frozenset(fact for fact in block.facts if fact[0] not in assigned)
        if set(block.loops) & set(step.loops):
            facts = NO_FACTS
        assigned |= step_stores
        if step.side is not None:
            continue  # on a side stream: neither a main-stream use nor a main-stream wait
        if any(is_sync(node, block.stream) for node in step.nodes):
            return None
        if step.is_return and not eager:
            continue
        skip = set[int]().union(*(_handed_back(node) for node in step.nodes))
        uses = [
            name
            for node in step.nodes
            for name, where in reads.data_reads(node, step.facts)
            if isinstance(name.ctx, ast.Load)
            and name.id in pending
            and id(name) not in skip
            and not exclusive(facts, where)
        ]
        if uses:
            return min(uses, key=lambda n: (n.lineno, n.col_offset))
        if not exclusive(facts, step.facts):  # a store on the other branch leaves it pending
            pending -= step_stores
    return None
