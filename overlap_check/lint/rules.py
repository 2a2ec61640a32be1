"""The rules, one function each: ``rule(ctx) -> findings``.

Every rule reports only what resolves through the module's imports to a real
torchair / torch_npu API, so local wrappers and look-alike names stay silent.
docs/lint-rules.md explains each rule with a wrong and a right example."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial

from overlap_check.lint import apis, cuda
from overlap_check.lint.apis import Family
from overlap_check.lint.findings import Context, Finding
from overlap_check.lint.flow import SideBlock, unsynced_uses
from overlap_check.lint.paths import ExecPath
from overlap_check.lint.source import ApiRef, SourceModule, dotted_name, keyword_true
from overlap_check.lint.uses import Reads


def _is_timing_event(ref: ApiRef) -> bool:
    """``torch.npu.Event(enable_timing=True)`` measures time; it is not a stream-ordering tool."""
    return (
        ref.qualname == apis.EVENT_CLS
        and ref.call is not None
        and keyword_true(ref.call, "enable_timing")
    )


def _by_path(ctx: Context) -> Iterator[tuple[Context, dict[Family, list[ApiRef]]]]:
    """The module's multi-stream API calls (wrapper calls as what they wrap, not inside its
    own wrappers) of each family in source order, by the path they run under."""
    groups: dict[ExecPath, dict[Family, list[ApiRef]]] = {}
    for ref in sorted([*ctx.module.refs, *ctx.wrapper_calls], key=lambda r: (r.line, r.col)):
        fam = apis.family(ref.qualname)
        if ref.call is None or fam is None or _is_timing_event(ref):
            continue
        if id(ref.node) not in ctx.in_wrappers:
            path = ctx.path_at(ref.node).path
            groups.setdefault(path, {Family.GE: [], Family.EXPLICIT: []})[fam].append(ref)
    for path, calls in groups.items():
        yield replace(ctx, path=replace(ctx.path, path=path), spans=()), calls


_OTHER = {Family.GE: Family.EXPLICIT, Family.EXPLICIT: Family.GE}


def _path_family(ctx: Context, calls: dict[Family, list[ApiRef]]) -> Family | None:
    """The family that fits the module's path (None where both or neither are judged)."""
    if ctx.path.path is ExecPath.ACLGRAPH and calls[Family.GE] and calls[Family.EXPLICIT]:
        # TorchAir's aclgraph accepts both; the minority family is the odd one out.
        return Family.GE if len(calls[Family.GE]) > len(calls[Family.EXPLICIT]) else Family.EXPLICIT
    return {ExecPath.GE: Family.GE, ExecPath.NPUGRAPH_EX: Family.EXPLICIT}.get(ctx.path.path)


def oc101_mixed_families(module_ctx: Context) -> Iterator[Finding]:
    for ctx, calls in _by_path(module_ctx):
        keep = _path_family(ctx, calls)
        if keep is None or not calls[keep]:
            continue
        first = calls[keep][0]
        for ref in calls[_OTHER[keep]]:
            yield ctx.finding(
                "OC101",
                ref.node,
                f"{ref.qualname} ({_OTHER[keep].value} family) is mixed with the {keep.value} "
                f"family ({first.qualname} at line {first.line}) in one module",
                f"one module, one family: use {apis.counterpart(ref.qualname, keep)}",
            )


def oc102_wrong_namespace(ctx: Context) -> Iterator[Finding]:
    imported = ctx.module.aliases.from_imports
    places: list[tuple[ast.AST, str]] = [(node, name) for name, node in imported.values()]
    places += [  # a from-imported name is reported once, at its import
        (ref.node, ref.qualname)
        for ref in ctx.module.refs
        if not (isinstance(ref.node, ast.Name) and ref.node.id in imported)
    ]
    for node, qualname in places:
        home = apis.right_home(qualname)
        if home is None:
            continue
        prefix, leaf = apis.split(qualname)
        yield ctx.finding(
            "OC102",
            node,
            f"{leaf} is not in {prefix}: GE tagged events live in torchair.ops, GE stream "
            "switch/wait in torchair.scope, npugraph_ex's in torch.npu.npugraph_ex.scope",
            f"use {home}",
        )


_CACHE = re.compile(r"(^|_)(kv_)?caches?($|_)|^past_key_values?$", re.IGNORECASE)
_PARAM_ITERATORS = frozenset({"parameters", "buffers", "named_parameters", "named_buffers"})


def _long_lived(expr: ast.expr, local: dict[str, str]) -> str | None:
    """Why ``expr`` is a long-lived object (a module attribute, weight, cache), else None."""
    gathered = False  # indexed by a variable: maybe a tensor index, which copies
    while isinstance(expr, ast.Subscript):  # a slice of a cache is still the cache's storage
        gathered |= any(isinstance(n, ast.Name) for n in ast.walk(expr.slice))
        expr = expr.value
    dotted = dotted_name(expr)
    if dotted is None:
        return None
    parts = dotted.split(".")
    if parts[-1] == "data" and len(parts) > 1:
        parts = parts[:-1]
    leaf = parts[-1]
    if _CACHE.search(leaf):
        return "a cache"
    if leaf in ("weight", "bias"):
        return "a weight"
    if parts[0] in ("self", "cls") and len(parts) > 1:
        return None if gathered else "a module attribute"
    if len(parts) == 1 and not gathered:
        return local.get(leaf)
    return None


def _long_lived_locals(function: ast.AST) -> dict[str, str]:
    """Local names bound to long-lived objects: ``w = self.w13``, ``for p in m.parameters()``."""
    local: dict[str, str] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            value = node.value
            callee = (dotted_name(value.func) or "") if isinstance(value, ast.Call) else ""
            param = "a parameter" if callee.endswith("Parameter") else None  # nn.Parameter(...)
            reason = _long_lived(value, local) or param
            if reason is not None and len(node.targets) == 1:
                local[node.targets[0].id] = reason
        elif isinstance(node, (ast.For, ast.comprehension)):
            it = node.iter
            if (
                isinstance(it, ast.Call)
                and isinstance(it.func, ast.Attribute)
                and it.func.attr in _PARAM_ITERATORS
            ):
                target = node.target
                if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                    target = target.elts[1]  # for name, param in named_parameters()
                if isinstance(target, ast.Name):
                    kind = it.func.attr.removeprefix("named_")[:-1]
                    local[target.id] = f"a module's {kind}"
    return local


_Function = ast.FunctionDef | ast.AsyncFunctionDef | None


def _record_stream_calls(tree: ast.Module) -> Iterator[tuple[ast.Call, ast.expr, _Function, str]]:
    """``x.record_stream(s)`` and ``npu_record_tagged_stream(x, tag)``: call, x, function, API."""
    todo: list[tuple[ast.AST, _Function]] = [(tree, None)]
    while todo:  # iterative: deeply nested generated code must not exhaust the stack
        node, function = todo.pop()
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "record_stream":
                yield node, func.value, function, "record_stream"
            elif (dotted_name(func) or "").endswith("npu_record_tagged_stream"):
                keywords = (k.value for k in node.keywords if k.arg in ("input", "self"))
                target = node.args[0] if node.args else next(keywords, None)
                if target is not None:
                    yield node, target, function, "npu_record_tagged_stream"
        inner = node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
        todo.extend((child, inner) for child in ast.iter_child_nodes(node))


def _cuda_module(module: SourceModule) -> bool:
    """Stream code written for CUDA (torch.cuda), none for Ascend: the OC2xx rules'."""
    roots = {
        ref.qualname.split(".")[1] if ref.qualname.startswith("torch.") else ""
        for ref in module.refs
    }
    ascend = any(ref.qualname.startswith(("torchair", "torch_npu")) for ref in module.refs)
    return "cuda" in roots and "npu" not in roots and not ascend


def _record_stream_long_lived(ctx: Context, rule: str) -> Iterator[Finding]:
    """OC103, or OC204 in CUDA code."""
    if _cuda_module(ctx.module) != (rule == "OC204"):
        return
    locals_of: dict[int, dict[str, str]] = {}  # computed only for functions that record
    for call, target, function, api in _record_stream_calls(ctx.module.tree):
        if function is not None and id(function) not in locals_of:
            locals_of[id(function)] = _long_lived_locals(function)
        reason = _long_lived(target, locals_of.get(id(function), {}))
        if reason is None:
            continue
        yield ctx.finding(
            rule,
            call,
            f"{api} on `{ast.unparse(target)}`, {reason}: a long-lived object is never freed "
            "while the step runs, so recording its use on a stream is not needed",
            "drop the call; keep record_stream for short-lived activations another stream reads",
        )


def _side_result_unsynced(ctx: Context, rule: str) -> Iterator[Finding]:
    """OC104, or OC201 for torch.cuda.stream blocks."""
    cuda = rule == "OC201"
    if not ctx.module.calls(apis.CUDA_STREAM_CTX if cuda else apis.STREAM_CTX) and (
        cuda or not ctx.stream_wrappers
    ):
        return  # no side stream

    def eager(block: SideBlock) -> bool | None:
        """Whether reads in a ``return`` count; None for another rule's block, or under GE."""
        path = ctx.path_at(block.node).path
        if block.cuda != cuda or (path is ExecPath.GE and not cuda):
            return None
        return cuda or path is ExecPath.EAGER

    device, main = ("cuda", "current") if cuda else ("npu", "main")
    for use, block in unsynced_uses(ctx.module, Reads(ctx.project, ctx.module.path), eager):
        yield ctx.finding(
            rule,
            use,
            f"`{use.id}` is computed on side stream `{block.stream}` (line {block.node.lineno}) "
            f"and used on the {main} stream with no synchronisation in between",
            f"before this use call torch.{device}.current_stream().wait_stream({block.stream}), "
            f"or record a torch.{device}.Event on the side stream and .wait() it here",
        )


def _has_stream_switch(ctx: Context) -> bool:
    """Any ``with`` of a stream switch, a project wrapper of one or a function named so."""
    if any(apis.split(r.qualname)[1] != apis.LIMIT for r in ctx.wrapper_calls):
        return True
    for item in ast.walk(ctx.module.tree):
        if not (isinstance(item, ast.withitem) and isinstance(item.context_expr, ast.Call)):
            continue
        func = item.context_expr.func
        qualname = ctx.module.aliases.qualify(func)
        if qualname is None:
            switch = "stream" in (dotted_name(func) or "").rpartition(".")[2].lower()
        else:
            switch = qualname == apis.STREAM_CTX or apis.split(qualname)[1] == apis.SWITCH
        if switch:
            return True
    return False


def oc105_limit_without_switch(ctx: Context) -> Iterator[Finding]:
    limits = [
        ref
        for ref in [*ctx.module.refs, *ctx.wrapper_calls]
        if ref.call is not None
        and apis.split(ref.qualname)[1] == apis.LIMIT
        and apis.family(ref.qualname)
        and id(ref.node) not in ctx.in_wrappers
    ]
    if not limits or _has_stream_switch(ctx):
        return
    for ref in sorted(limits, key=lambda r: (r.line, r.col)):
        wrapper = ctx.module.aliases.qualify(ref.node) is None
        through = f" (through {ast.unparse(ref.node)})" if wrapper else ""
        yield ctx.finding(
            "OC105",
            ref.node,
            f"{ref.qualname}{through} in a module with no stream switch: core limits share "
            "cores between streams that run in parallel, and here nothing runs on a side stream",
            "remove it until a verified overlap needs it (limit cores only after overlap is real)",
        )


def _left_to_oc105(ctx: Context, ref: ApiRef) -> bool:
    """A core limit with no stream switch is OC105's: "remove it" beats "use the other API"."""
    return apis.split(ref.qualname)[1] == apis.LIMIT and not _has_stream_switch(ctx)


def oc107_torchair_in_eager(module_ctx: Context) -> Iterator[Finding]:
    for ctx, calls in _by_path(module_ctx):
        if ctx.path.path is not ExecPath.EAGER:
            continue
        for ref in calls[Family.GE]:
            if _left_to_oc105(ctx, ref):
                continue
            yield ctx.finding(
                "OC107",
                ref.node,
                f"{ref.qualname} is TorchAir graph-mode (string-tag) style, but this module "
                f"runs {ctx.path.describe(ctx.module.path)}",
                f"in eager code use {apis.counterpart(ref.qualname, Family.EXPLICIT)}; if a "
                "TorchAir runner compiles this module, lint it together or add "
                "`# overlap-check: path=ge`",
            )


def oc108_family_vs_path(module_ctx: Context) -> Iterator[Finding]:
    for ctx, calls in _by_path(module_ctx):
        keep = _path_family(ctx, calls)
        if keep is None or ctx.path.path is ExecPath.ACLGRAPH or calls[keep]:
            continue  # both families present: that is OC101
        for ref in calls[_OTHER[keep]]:
            if _left_to_oc105(ctx, ref):
                continue
            yield ctx.finding(
                "OC108",
                ref.node,
                f"{ref.qualname} belongs to the {_OTHER[keep].value} family, but this module "
                f"runs {ctx.path.describe(ctx.module.path)}",
                f"use {apis.counterpart(ref.qualname, keep)}",
            )


def oc110_stream_objects_dynamic(ctx: Context) -> Iterator[Finding]:
    if ctx.path.path is not ExecPath.NPUGRAPH_EX or not ctx.path.dynamic_fullgraph:
        return
    for ref in ctx.module.calls(apis.STREAM_CLS, apis.EVENT_CLS):
        if _is_timing_event(ref):
            continue
        yield ctx.finding(
            "OC110",
            ref.node,
            f"{ref.qualname}() object under {ctx.path.describe(ctx.module.path)} with "
            "fullgraph=True, dynamic=True: dynamo cannot proxy stream/event objects there",
            f"use the string-tag {apis.NGX_SCOPE}.npu_stream_switch(tag) and "
            f"{apis.NGX_SCOPE}.npu_tagged_event_record / _wait",
        )


Rule = Callable[[Context], Iterator[Finding]]

# rule ID -> (check, one-line summary)
RULES: dict[str, tuple[Rule, str]] = {
    "OC101": (oc101_mixed_families, "GE and explicit-stream APIs mixed in one module"),
    "OC102": (oc102_wrong_namespace, "stream switch / tagged event API in the wrong namespace"),
    "OC103": (
        partial(_record_stream_long_lived, rule="OC103"),
        "record_stream on a long-lived object",
    ),
    "OC104": (
        partial(_side_result_unsynced, rule="OC104"),
        "side-stream result used on the main stream unsynchronised",
    ),
    "OC105": (oc105_limit_without_switch, "limit_core_num in a module with no stream switch"),
    "OC107": (oc107_torchair_in_eager, "TorchAir tagged-event style in an eager module"),
    "OC108": (oc108_family_vs_path, "API family does not match the execution path"),
    "OC110": (
        oc110_stream_objects_dynamic,
        "Stream/Event objects under npugraph_ex fullgraph+dynamic",
    ),
    "OC201": (
        partial(_side_result_unsynced, rule="OC201"),
        "CUDA: side-stream result used on the current stream unsynchronised",
    ),
    "OC202": (
        cuda.oc202_side_reads_unwaited_input,
        "CUDA: side stream reads a current-stream result it never waited for",
    ),
    "OC203": (
        cuda.oc203_freed_without_record_stream,
        "CUDA: tensor read on a side stream freed without record_stream",
    ),
    "OC204": (
        partial(_record_stream_long_lived, rule="OC204"),
        "CUDA: record_stream on a long-lived object",
    ),
}
