"""The fix steps of a diagnosis, keyed by its cause and the plan's execution path.

One table (docs/advice.md has it in words): what to change for each cause, in the
APIs of the path the model runs under. GE graph mode (TorchAir backend) orders
streams with ``torchair.scope`` / ``torchair.ops``; npugraph_ex and eager use
torch_npu's stream objects (``torch.npu.Stream`` / ``Event``) and
``torch.npu.npugraph_ex.scope``; a CUDA capture (Kineto) gets torch.cuda's streams and
events and SM partitions instead of core limits. Without a path the steps stay generic and say
how to give one. A cause nobody wrote steps for gets none (other stages add causes
to model.Cause and rows here). Measured causes add their own step, per path where the
APIs differ (cube saturated: at partial multi-stream cannot help under that dominator,
at real the side work can only share its cores; join wait: move work off the tail or
wait later; tail operators; shapes changed against the reference). A fake plan's barrier
step follows which way the wait went, so no step contradicts the evidence or another.
"""

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
        "join late: torch.npu.current_stream().wait_stream(side) (or event.record(side) + "
        "event.wait()) after the dominator is launched, not before it",
        "launch the side block before the dominator in program order; eager runs ops in the "
        "order Python issues them",
    ),
    ("fake", "cuda"): (
        "join late: torch.cuda.current_stream().wait_stream(side) (or event.record(side) + "
        "torch.cuda.current_stream().wait_event(event)) after the dominator is launched, not "
        "before it",
        "launch the side block before the dominator in program order: each stream runs its "
        "kernels in the order Python issues them",
    ),
    ("fake", None): (),
    ("partial", "ge"): (
        "give the side stream more to hide under, or hide it under a longer dominator; "
        "torchair.scope.limit_core_num(aic, aiv) on the side ops (per operator) leaves cores "
        "to the dominator",
    ),
    ("partial", "npugraph_ex"): (
        "give the side stream more to hide under, or a longer dominator; "
        "torch.npu.npugraph_ex.scope.limit_core_num(aic, aiv, stream=side) limits a stream, "
        "and only its Ascend C operators",
    ),
    ("partial", "eager"): (
        "give the side stream more to hide under, or a longer dominator; "
        "torch.npu.set_stream_limit(side, cube_num, vector_num) limits a stream (Ascend C "
        "operators only)",
    ),
    ("partial", "cuda"): (
        "give the side stream more to hide under, or a longer dominator; side kernels whose "
        "grids fill every SM delay the dominator: smaller grids, or an SM partition for the "
        "side stream (green contexts, MPS)",
    ),
    ("partial", None): (
        "give the side stream more to hide under, or a longer dominator; a core limit on the "
        "side ops leaves cores to the dominator",
    ),
    ("real", "ge"): (
        "if the step did not get faster: share the cores with torchair.scope.limit_core_num "
        "(per operator), and prefetch weights for bandwidth-bound holes with "
        "torch_npu.npu_prefetch",
    ),
    ("real", "npugraph_ex"): (
        "if the step did not get faster: share the cores per stream with "
        "torch.npu.npugraph_ex.scope.limit_core_num(aic, aiv, stream=side) (Ascend C operators "
        "only), and prefetch weights for bandwidth-bound holes with torch_npu.npu_prefetch",
    ),
    ("real", "eager"): (
        "if the step did not get faster: share the cores per stream with "
        "torch.npu.set_stream_limit(side, cube_num, vector_num) (Ascend C operators only), "
        "and prefetch weights for bandwidth-bound holes with torch_npu.npu_prefetch",
    ),
    ("real", "cuda"): (
        "if the step did not get faster: the streams share the SMs and the memory bandwidth; "
        "an SM partition (green contexts, MPS) or smaller side grids leave the dominator its "
        "SMs",
    ),
    ("real", None): (
        "if the step did not get faster: share the cores with a core limit (limit_core_num) "
        "and prefetch weights for bandwidth-bound holes (npu_prefetch)",
    ),
    ("no-evidence", None): ("check the plan's regexes and streams against the kernel names",),
}

# barrier (b): the side work's input came from a main op placed after the dominator

# The barrier's step at fake (or a partial capped by fake layers), by which way the wait
# went (model.BarrierCandidate.waited) and path; None: no barrier found either way.
_BARRIER_STEPS: dict[tuple[Literal["main", "side"] | None, ExecutionPath | None], str] = {
    ("main", "ge"): (
        "the main stream waited for the side work: move the barrier (the main-stream op that "
        "waited for the side output ahead of the dominator) inside the npu_stream_switch "
        "block, or after the dominator"
    ),
    ("main", "npugraph_ex"): (
        "the main stream waited for the side work: move the barrier (the main-stream op that "
        "waited for the side output ahead of the dominator) inside the side block, or after "
        "the dominator"
    ),
    ("main", "cuda"): (
        "the main stream waited for the side work: move the wait (wait_stream / wait_event, "
        "or the first op that reads the side output) after the dominator"
    ),
    ("main", None): (
        "the main stream waited for the side work: move the barrier (the main-stream op that "
        "waited for the side output ahead of the dominator) into the side block, or after "
        "the dominator"
    ),
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
        "the main stream waits for the side tail: move work off the tail (the side block's "
        "last ops before the fork, or onto the main stream ahead of the dominator), rebalance "
        "the split so the side work ends with the dominator, or wait later: put "
        "torchair.scope.npu_wait_tensor on the first op that reads the side output, not on "
        "the op right after the dominator"
    ),
    ("join-wait", "npugraph_ex"): (
        "the main stream waits for the side tail: move work off the tail (out of the side "
        "block, or before the fork), rebalance the split so the side work ends with the "
        "dominator, or wait later: torch.npu.current_stream().wait_stream(side) (or "
        "event.wait()) right before the first op that reads the side output"
    ),
    ("join-wait", "eager"): (
        "the main stream waits for the side tail: move work off the tail, rebalance the "
        "split so the side work ends with the dominator, or wait later: call "
        "torch.npu.current_stream().wait_stream(side) in program order just before the first "
        "use of the side output, with independent main-stream work issued before it"
    ),
    ("join-wait", "cuda"): (
        "the main stream waits for the side tail: move work off the tail, rebalance the "
        "split so the side work ends with the dominator, or wait later: call "
        "torch.cuda.current_stream().wait_stream(side) just before the first use of the side "
        "output, with independent main-stream work issued before it"
    ),
    ("join-wait", None): (
        "the main stream waits for the side tail: move work off the tail, rebalance the "
        "split so the side work ends with the dominator, or join later (the wait right "
        "before the first op that reads the side output)"
    ),
    ("tail-ops", "ge"): (
        "format/fill operators run on the main stream after the join: give the side output "
        "the format its consumer reads (no TransData between them), and do the broadcast or "
        "zero-fill inside the npu_stream_switch block or ahead of the dominator, where it "
        "hides"
    ),
    ("tail-ops", "npugraph_ex"): (
        "format/fill operators run on the main stream after the join: produce the side "
        "output in the layout its consumer reads, and do the broadcast / zero-fill inside "
        "`with torch.npu.stream(side):` (or reuse a buffer made outside the compiled region) "
        "so they leave the main stream"
    ),
    ("tail-ops", "eager"): (
        "format/fill operators run on the main stream after the join: produce the side "
        "output in the layout its consumer reads, and issue the broadcast / zero-fill inside "
        "`with torch.npu.stream(side):` or before the dominator (a preallocated buffer "
        "instead of torch.zeros after the join)"
    ),
    ("tail-ops", None): (
        "format/fill operators run on the main stream after the join: keep the side "
        "output's format, and move the broadcast / fill into the side block or before the "
        "dominator"
    ),
    ("shape-change", "ge"): (
        "the capture and the reference ran other input shapes: profile both with the same "
        "inputs before reading the gain; under GE a dynamic shape also needs "
        "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1 for more than one stream"
    ),
    ("shape-change", "npugraph_ex"): (
        "the capture and the reference ran other input shapes: profile both with the same "
        "inputs (batch, sequence length, tokens per expert) and warm every shape before the "
        "profiled steps, then read the gain"
    ),
    ("shape-change", "eager"): (
        "the capture and the reference ran other input shapes: profile both with the same "
        "inputs (batch, sequence length, tokens per expert), then read the gain"
    ),
    ("shape-change", None): (
        "the capture and the reference ran other input shapes: profile both with the same "
        "inputs, then read the gain"
    ),
}


def _evidence_step(kind: EvidenceKind, path: ExecutionPath | None) -> str | None:
    return _EVIDENCE_STEPS.get((kind, path)) or _EVIDENCE_STEPS.get((kind, None))


# A partial plan whose dominator saturates the cube: the figures show that more side work
# under it cannot hide, so this step replaces "give the side stream more to hide under".
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
    """What to change, in the APIs of ``path`` (generic, with how to name it, when None).

    At fake, the barrier's step follows which way the wait went (``waited``; None: no
    barrier found). No step contradicts another or the verdict: "will not help" only at
    partial with a saturated cube, in place of "give the side stream more to hide under"."""
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
