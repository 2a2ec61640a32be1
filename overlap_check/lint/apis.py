"""The catalogue of multi-stream APIs: which family (GE or explicit-stream) each belongs to
and where each lives (docs/method.md, "API routing"; docs/lint-rules.md's table)."""

from __future__ import annotations

from enum import Enum

SWITCH = "npu_stream_switch"
WAIT_TENSOR = "npu_wait_tensor"
LIMIT = "limit_core_num"
TAGGED_EVENTS = ("npu_create_tagged_event", "npu_tagged_event_record", "npu_tagged_event_wait")
TAGGED = frozenset({*TAGGED_EVENTS, "npu_record_tagged_stream"})  # and record_stream's twin
STRING_TAG = frozenset({SWITCH, WAIT_TENSOR, LIMIT}) | TAGGED

GE_SCOPE = "torchair.scope"
GE_OPS = "torchair.ops"
NGX = "torch.npu.npugraph_ex"
NGX_SCOPE = f"{NGX}.scope"
NGX_OPS = f"{NGX}.ops"
GE_EVENT_OPS = (f"{GE_OPS}.record", f"{GE_OPS}.wait")

# Where each string-tag API really lives (OC102).
HOMES: dict[str, frozenset[str]] = {
    SWITCH: frozenset({GE_SCOPE, NGX_SCOPE}),
    WAIT_TENSOR: frozenset({GE_SCOPE}),
    LIMIT: frozenset({GE_SCOPE, NGX_SCOPE}),
    **{name: frozenset({GE_OPS, NGX_SCOPE, NGX_OPS}) for name in TAGGED},
}

STREAM_CTX = "torch.npu.stream"
STREAM_CLS = "torch.npu.Stream"
EVENT_CLS = "torch.npu.Event"
STREAM_OBJECTS = (STREAM_CLS, STREAM_CTX, EVENT_CLS)
CUDA_STREAM_CTX = "torch.cuda.stream"  # CUDA's twin (OC2xx rules); no family: no graph paths
STREAM_CONTEXTS = frozenset({STREAM_CTX, CUDA_STREAM_CTX})
MAIN_STREAM_GETTERS = frozenset(
    f"torch.{device}.{getter}"
    for device in ("npu", "cuda")
    for getter in ("current_stream", "default_stream")
)

_ROOTS = ("torch", "torch_npu", "torchair")
GE_MARKERS = frozenset({"torchair.get_npu_backend", "torchair.CompilerConfig"})


class Family(str, Enum):
    GE = "GE"  # TorchAir torchair.scope / torchair.ops
    EXPLICIT = "explicit-stream"  # torch.npu.Stream/stream/Event, torch.npu.npugraph_ex


def split(qualname: str) -> tuple[str, str]:
    """``("torchair.scope", "npu_stream_switch")`` for ``torchair.scope.npu_stream_switch``."""
    prefix, _, leaf = qualname.rpartition(".")
    return prefix, leaf


def family(qualname: str) -> Family | None:
    """The multi-stream family of an API, else None; a wrong-namespace spelling belongs to
    its root's family (OC102 reports the namespace itself)."""
    root, leaf = qualname.split(".")[0], split(qualname)[1]
    if root == "torchair" and (leaf in STRING_TAG or qualname in GE_EVENT_OPS):
        return Family.GE
    if root in ("torch", "torch_npu") and (leaf in STRING_TAG or qualname in STREAM_OBJECTS):
        return Family.EXPLICIT
    return None


def right_home(qualname: str) -> str | None:
    """The correct dotted name for a string-tag API in the wrong namespace, else None."""
    prefix, leaf = split(qualname)
    homes = HOMES.get(leaf)
    if homes is None or prefix in homes or qualname.split(".")[0] not in _ROOTS:
        return None
    if qualname.startswith("torchair"):
        return f"{GE_SCOPE if leaf in (SWITCH, WAIT_TENSOR, LIMIT) else GE_OPS}.{leaf}"
    if leaf == WAIT_TENSOR:
        # npugraph_ex has no wait_tensor: it orders streams with events.
        return f"{NGX_SCOPE}.npu_tagged_event_wait (or torch.npu.Event / Stream.wait_stream)"
    return f"{NGX_SCOPE}.{leaf}"


def counterpart(qualname: str, target: Family) -> str:
    """What to write instead of ``qualname`` in the ``target`` family (a fix hint)."""
    _, leaf = split(qualname)
    if target is Family.EXPLICIT:
        if leaf == SWITCH:
            return (
                f"`with torch.npu.stream(s)` on a torch.npu.Stream(), or {NGX_SCOPE}.{SWITCH}(tag)"
            )
        if leaf == WAIT_TENSOR or qualname in GE_EVENT_OPS:
            return "torch.npu.Event().record() / .wait(stream), or Stream.wait_stream"
        return f"{NGX_SCOPE}.{leaf}"
    if qualname in (STREAM_CLS, STREAM_CTX) or leaf == SWITCH:
        return f"{GE_SCOPE}.{SWITCH}(tag)"
    if qualname == EVENT_CLS:
        return (
            f"{GE_SCOPE}.{WAIT_TENSOR}, or an event from {GE_OPS}.npu_create_tagged_event(tag) "
            f"with {GE_OPS}.npu_tagged_event_record / _wait"
        )
    if leaf == LIMIT:
        return f"{GE_SCOPE}.{LIMIT}"
    return f"{GE_OPS}.{leaf}"
