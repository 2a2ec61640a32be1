"""OC202 and OC203, the CUDA data rules with no Ascend twin (OC201 and OC204 share OC104's
and OC103's code in rules.py). What each reports: docs/lint-rules.md, "CUDA stream code"."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from overlap_check.lint.apis import CUDA_STREAM_CTX
from overlap_check.lint.findings import Context, Finding
from overlap_check.lint.flow import Flattener, SideBlock, Step, flattened, is_sync
from overlap_check.lint.source import dotted_name
from overlap_check.lint.uses import Reads, host_call, stores


def _device_result(value: ast.expr | None, ctx: Context, made: set[str], new: bool) -> bool:
    """Whether ``value`` surely computes a device tensor: a ``torch.*`` op, arithmetic on one;
    unless ``new`` (fresh memory only) also a submodule call (``self.proj(x)``) or a method or
    index of a tensor made so. Anything else gets the benefit of the doubt."""
    if isinstance(value, ast.BinOp):
        return any(_device_result(v, ctx, made, new) or dotted_name(v) in made
                   for v in (value.left, value.right))  # fmt: skip
    if not new and isinstance(value, ast.Subscript):
        return dotted_name(value.value) in made
    if not isinstance(value, ast.Call) or host_call(value):
        return False
    qualname = ctx.module.aliases.qualify(value.func) or ""
    if qualname.startswith("torch."):
        return not qualname.startswith(("torch.cuda.", "torch.npu."))  # not a stream or event
    func = value.func
    if new or not isinstance(func, ast.Attribute) or qualname:
        return False
    if dotted_name(func.value) == "self":
        return not ctx.project.callees(ctx.module.path, value)  # a submodule, not a method
    return dotted_name(func.value) in made


def _made_on_main(steps: list[Step], ctx: Context, *, new: bool) -> dict[str, int]:
    """Names assigned a device tensor on the current stream -> the step that assigned it."""
    made: dict[str, int] = {}
    for index, step in enumerate(steps):
        for node in step.nodes:
            if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                continue
            names = {n for n in stores(node) if "." not in n}
            if step.side is None and _device_result(node.value, ctx, set(made), new):
                made.update(dict.fromkeys(names, index))
            else:
                made = {name: at for name, at in made.items() if name not in names}
    return made


def _side_reads(flat: Flattener, block: SideBlock, reads: Reads) -> Iterator[tuple[int, ast.Name]]:
    """(step index, name) for every data read inside the block, in order."""
    for index in range(block.start + 1, block.end):
        for node in flat.steps[index].nodes:
            for name, _ in reads.data_reads(node):
                if isinstance(name.ctx, ast.Load):
                    yield index, name


def _cuda_blocks(ctx: Context) -> Iterator[tuple[Flattener, SideBlock]]:
    if not ctx.module.calls(CUDA_STREAM_CTX):
        return
    for flat in flattened(ctx.module, ctx.project):
        for block in flat.side_blocks:
            if block.cuda:
                yield flat, block


def oc202_side_reads_unwaited_input(ctx: Context) -> Iterator[Finding]:
    reads = Reads(ctx.project, ctx.module.path)
    for flat, block in _cuda_blocks(ctx):
        before = flat.steps[: block.start]
        made = _made_on_main(before, ctx, new=False)
        waited = max((i for i, s in enumerate(before) if any(map(is_sync, s.nodes))), default=-1)
        assigned: set[str] = set()
        for index, name in _side_reads(flat, block, reads):
            step = flat.steps[index]
            if any(map(is_sync, step.nodes)):
                break  # the side stream waits here (event.wait(), s.wait_stream(...))
            if name.id in made and made[name.id] > waited and name.id not in assigned:
                producer = getattr(before[made[name.id]].nodes[0], "lineno", 0)
                yield ctx.finding(
                    "OC202",
                    name,
                    f"`{name.id}` is computed on the current stream (line {producer}) and read "
                    f"on side stream `{block.stream}`, which never waited for it",
                    f"call {block.stream}.wait_stream(torch.cuda.current_stream()) before the "
                    "block, or record a torch.cuda.Event after the producer and .wait() it "
                    "inside the block",
                )
                break
            assigned |= set().union(*(stores(n) for n in step.nodes))


def oc203_freed_without_record_stream(ctx: Context) -> Iterator[Finding]:
    reads = Reads(ctx.project, ctx.module.path)
    for flat, block in _cuda_blocks(ctx):
        made = _made_on_main(flat.steps[: block.start], ctx, new=True)
        recorded = {
            dotted_name(call.func.value)
            for step in flat.steps
            for node in step.nodes
            for call in ast.walk(node)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "record_stream"
        }
        read = {n.id: n for _, n in reversed(list(_side_reads(flat, block, reads)))}
        for name, node in read.items():
            if name not in made or name in recorded or name in block.assigned:
                continue
            freed = _freed_after(flat.steps[block.end :], name, top_level=flat.top_level)
            if freed is None:
                continue
            yield ctx.finding(
                "OC203",
                node,
                f"`{name}` is made on the current stream and read on side stream "
                f"`{block.stream}`, then {freed} with no {name}.record_stream({block.stream}): "
                "the caching allocator may hand its memory to the current stream while the "
                "side stream still reads it",
                f"call {name}.record_stream({block.stream}) inside the block, or join "
                f"(torch.cuda.current_stream().wait_stream({block.stream})) before it is freed",
            )


def _freed_after(steps: list[Step], name: str, *, top_level: bool) -> str | None:
    """How ``name`` is freed on the current stream after a block (reassigned, deleted, at
    the function's end) before any join; None when it is joined, used again or kept."""
    for step in steps:
        if step.side is not None:
            continue
        if any(map(is_sync, step.nodes)):
            return None
        for node in step.nodes:
            if isinstance(node, ast.Delete) and any(dotted_name(t) == name for t in node.targets):
                return f"deleted (line {node.lineno})"
            if any(
                isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                for n in ast.walk(node)
            ):
                return None  # used again, returned or stored: not freed here
            if name in stores(node):
                return f"reassigned (line {getattr(node, 'lineno', 0)})"
    return None if top_level else "freed when the function returns"
