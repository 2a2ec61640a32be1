"""The fix steps of a diagnosis, keyed by its cause and the plan's execution path: the
tables of docs/advice.md ("The steps by cause and path"), in the APIs of that path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from overlap_check.model import Cause, Evidence, EvidenceKind, ExecutionPath
from overlap_check.model.verdicts import PRODUCER_HINT

GIVE_PATH = (
    'name the execution path (path = "ge" | "npugraph_ex" | "eager" in the plan, --path, '
    "or --source DIR to detect it from the model code) for advice in its APIs"
)

_SWITCH = {
    "ge": 'with torchair.scope.npu_stream_switch("tag"):',
    "npugraph_ex": "with torch.npu.stream(side):",
    "eager": "with torch.npu.stream(side):",
    "cuda": "with torch.cuda.stream(side):",
}
# the words several paths' steps share
_MORE = "give the side stream more to hide under, or a longer dominator; "
_SLOWER = "if the step did not get faster: share the cores"
_PREFETCH = "prefetch weights for bandwidth-bound holes with torch_npu.npu_prefetch"
_LIMIT_NPU = "torch.npu.set_stream_limit(side, cube_num, vector_num)"
_LIMIT_NGX = "torch.npu.npugraph_ex.scope.limit_core_num(aic, aiv, stream=side)"
_JOIN = "join late: torch.{0}.current_stream().wait_stream(side) (or event.record(side) + "
_IN_ORDER = "launch the side block before the dominator in program order"
_SM = "an SM partition (green contexts, MPS) or smaller side grids leave the dominator its SMs"
_BARRIER = (  # the barrier may be the dominator itself: then its wait moves, not it
    "the main stream waited for the side work: move what waited (the barrier, maybe the "
    "dominator itself, or the stream wait before it) after the dominator, or what it needs {0}"
)
_TAIL = "the main stream waits for the side tail: move work off the tail"
_SPLIT = ", rebalance the split so the side work ends with the dominator, or "
_FILL = "format/fill operators run on the main stream after the join: "
_SHAPES = "the capture and the reference ran other input shapes: profile both with the same inputs"

# (cause, path) -> steps; path None: the generic steps
_STEPS: dict[tuple[Cause, ExecutionPath | None], tuple[str, ...]] = {
    ("not-split", "ge"): (
        f"put the side ops inside `{_SWITCH['ge']}` and check that the graph did not fold "
        "them back onto the main stream (config.ge_config.enable_single_stream must stay off)",
        "dynamic shapes: export ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1, else GE runs one stream",
    ),
    ("not-split", "npugraph_ex"): (
        f"put the side ops inside `{_SWITCH['npugraph_ex']}` (side = torch.npu.Stream(), made "
        "once, outside the compiled region)",
    ),
    ("not-split", "eager"): (
        f"put the side ops inside `{_SWITCH['eager']}`; an op outside the block runs on the "
        "main stream",
    ),
    ("not-split", "cuda"): (
        f"put the side ops inside `{_SWITCH['cuda']}` (side = torch.cuda.Stream(), made once); "
        "an op outside the block runs on the current stream",
    ),
    ("not-split", None): (
        "put the side ops inside the stream-switch block (torchair.scope.npu_stream_switch "
        "under GE, torch.npu.stream otherwise)",
    ),
    ("fake", "ge"): (
        "order the streams with torchair.scope.npu_wait_tensor(later_input, earlier_output) "
        "(or the tagged events of torchair.ops) on the op that must wait, not by a data "
        "dependency on a main-stream op ahead of the dominator",
        "dynamic shapes: export ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1",
    ),
    ("fake", "npugraph_ex"): (
        "start the side work right after its input exists: event.record() on the main "
        "stream, side.wait_event(event) / event.wait(side) inside the side block, and join "
        "with torch.npu.current_stream().wait_stream(side) only after the dominator",
    ),
    ("fake", "eager"): (
        _JOIN.format("npu") + "event.wait()) after the dominator is launched, not before it",
        f"{_IN_ORDER}; eager runs ops in the order Python issues them",
    ),
    ("fake", "cuda"): (
        _JOIN.format("cuda") + "torch.cuda.current_stream().wait_event(event)) after the "
        "dominator is launched, not before it",
        f"{_IN_ORDER}: each stream runs its kernels in the order Python issues them",
    ),
    ("fake", None): (),
    ("partial", "ge"): (
        "give the side stream more to hide under, or hide it under a longer dominator; "
        "torchair.scope.limit_core_num(aic, aiv) on the side ops (per operator) leaves cores "
        "to the dominator",
    ),
    ("partial", "npugraph_ex"): (
        f"{_MORE}{_LIMIT_NGX} limits a stream, and only its Ascend C operators",
    ),
    ("partial", "eager"): (f"{_MORE}{_LIMIT_NPU} limits a stream (Ascend C operators only)",),
    ("partial", "cuda"): (
        f"{_MORE}side kernels whose grids fill every SM delay the dominator: smaller grids, or "
        "an SM partition for the side stream (green contexts, MPS)",
    ),
    ("partial", None): (f"{_MORE}a core limit on the side ops leaves cores to the dominator",),
    ("real", "ge"): (
        f"{_SLOWER} with torchair.scope.limit_core_num (per operator), and {_PREFETCH}",
    ),
    ("real", "npugraph_ex"): (
        f"{_SLOWER} per stream with {_LIMIT_NGX} (Ascend C operators only), and {_PREFETCH}",
    ),
    ("real", "eager"): (
        f"{_SLOWER} per stream with {_LIMIT_NPU} (Ascend C operators only), and {_PREFETCH}",
    ),
    ("real", "cuda"): (
        "if the step did not get faster: the streams share the SMs and the memory bandwidth; "
        f"{_SM}",
    ),
    ("real", None): (
        f"{_SLOWER} with a core limit (limit_core_num) and prefetch weights for "
        "bandwidth-bound holes (npu_prefetch)",
    ),
    ("no-evidence", None): ("check the plan's regexes and streams against the kernel names",),
}

# The barrier's step at fake, by which way the wait went and path; None: no barrier found.
_BARRIER_STEPS: dict[tuple[Literal["main", "side"] | None, ExecutionPath | None], str] = {
    ("main", "ge"): _BARRIER.format("inside the npu_stream_switch block"),
    ("main", "npugraph_ex"): _BARRIER.format("inside the side block"),
    ("main", "cuda"): (
        "the main stream waited for the side work: move the wait (wait_stream / wait_event, "
        "or the first op that reads the side output) after the dominator"
    ),
    ("main", None): _BARRIER.format("into the side block"),
    ("side", None): (
        "the side stream waited for a main-stream producer placed after the dominator's "
        f"start: {PRODUCER_HINT}"
    ),
    (None, None): (
        "find the wait or data dependency that orders the side work after (or before) the "
        "dominator and move it past the dominator"
    ),
}


# (evidence kind, path) -> the step that cause adds; path None: any path without its own
_EVIDENCE_STEPS: dict[tuple[EvidenceKind, ExecutionPath | None], str] = {
    ("cube-saturated", None): (
        "the dominator asks for every AI core, so side work beside it can only share them: "
        "if the step did not get faster, move the side work under a vector-bound or "
        "communication op instead"
    ),
    ("join-wait", "ge"): (
        f"{_TAIL} (the side block's last ops before the fork, or onto the main stream ahead "
        f"of the dominator){_SPLIT}wait later: put torchair.scope.npu_wait_tensor on the "
        "first op that reads the side output, not on the op right after the dominator"
    ),
    ("join-wait", "npugraph_ex"): (
        f"{_TAIL} (out of the side block, or before the fork){_SPLIT}wait later: "
        "torch.npu.current_stream().wait_stream(side) (or event.wait()) right before the "
        "first op that reads the side output"
    ),
    ("join-wait", "eager"): (
        f"{_TAIL}{_SPLIT}wait later: call torch.npu.current_stream().wait_stream(side) in "
        "program order just before the first use of the side output, with independent "
        "main-stream work issued before it"
    ),
    ("join-wait", "cuda"): (
        f"{_TAIL}{_SPLIT}wait later: call torch.cuda.current_stream().wait_stream(side) just "
        "before the first use of the side output, with independent main-stream work issued "
        "before it"
    ),
    ("join-wait", None): (
        f"{_TAIL}{_SPLIT}join later (the wait right before the first op that reads the side output)"
    ),
    ("tail-ops", "ge"): (
        f"{_FILL}give the side output the format its consumer reads (no TransData between "
        "them), and do the broadcast or zero-fill inside the npu_stream_switch block or ahead "
        "of the dominator, where it hides"
    ),
    ("tail-ops", "npugraph_ex"): (
        f"{_FILL}produce the side output in the layout its consumer reads, and do the "
        "broadcast / zero-fill inside `with torch.npu.stream(side):` (or reuse a buffer made "
        "outside the compiled region) so they leave the main stream"
    ),
    ("tail-ops", "eager"): (
        f"{_FILL}produce the side output in the layout its consumer reads, and issue the "
        "broadcast / zero-fill inside `with torch.npu.stream(side):` or before the dominator "
        "(a preallocated buffer instead of torch.zeros after the join)"
    ),
    ("tail-ops", None): (
        f"{_FILL}keep the side output's format, and move the broadcast / fill into the side "
        "block or before the dominator"
    ),
    ("shape-change", "ge"): (
        f"{_SHAPES} before reading the gain; under GE a dynamic shape also needs "
        "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1 for more than one stream"
    ),
    ("shape-change", "npugraph_ex"): (
        f"{_SHAPES} (batch, sequence length, tokens per expert) and warm every shape before "
        "the profiled steps, then read the gain"
    ),
    ("shape-change", "eager"): (
        f"{_SHAPES} (batch, sequence length, tokens per expert), then read the gain"
    ),
    ("shape-change", None): f"{_SHAPES}, then read the gain",
}


def _evidence_step(kind: EvidenceKind, path: ExecutionPath | None) -> str | None:
    return _EVIDENCE_STEPS.get((kind, path)) or _EVIDENCE_STEPS.get((kind, None))


# A partial plan whose dominator saturates the cube: replaces "give the side stream more".
CUBE_BOUND = (
    "the dominator already uses every AI core: multi-stream will not help under it; move the "
    "side work under a vector-bound or communication op instead"
)


def fix_steps(
    cause: Cause,
    path: ExecutionPath | None,
    evidence: Sequence[Evidence] = (),
    waited: Literal["main", "side"] | None = None,
) -> tuple[str, ...]:
    """What to change, in the APIs of ``path`` (generic, with how to name it, when None); at
    fake the barrier's step follows ``waited`` (None: no barrier found)."""
    saturated = any(e.kind == "cube-saturated" for e in evidence)
    if cause == "partial" and saturated:
        steps = [CUBE_BOUND]
        evidence = [e for e in evidence if e.kind != "cube-saturated"]
    else:
        steps = list(_STEPS.get((cause, path), ()) or _STEPS.get((cause, None), ()))
    if cause == "fake":
        barrier = _BARRIER_STEPS.get((waited, path)) or _BARRIER_STEPS[(waited, None)]
        steps.insert(min(1, len(steps)), barrier)
    for e in evidence:  # a step per measured cause, in the evidence's order, once each
        step = _evidence_step(e.kind, path)
        if step is not None and step not in steps:
            steps.append(step)
    if path is None and cause != "no-evidence":
        steps.append(GIVE_PATH)
    return tuple(steps)
