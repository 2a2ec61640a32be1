"""The words the report and the options use: verdicts, causes, choices, defaults."""

from __future__ import annotations

from typing import Literal, get_args

SCHEMA_VERSION = 1

Verdict = Literal["real", "partial", "fake", "not-split", "no-evidence"]
PlanMode = Literal["ge", "npugraph_ex"]
# Option vocabularies: the click choices, the config checks and the gate's table derive
# from these (choices_of), so each is spelled once.
FailOn = Literal["fake", "partial", "never"]
# The execution path a plan's model runs under: the fix advice names that path's APIs
# (docs/advice.md). None where a plan gives none: the advice is generic and says so.
# ge / npugraph_ex / eager: Ascend (torchair, torch_npu); cuda: torch.cuda streams (Kineto)
ExecutionPath = Literal["ge", "npugraph_ex", "eager", "cuda"]
Per = Literal["run", "step"]
Order = Literal["given", "time"]
BaselineFigure = Literal["hidden_pct", "overlap_pct"]
# The recipes establish a plan only at >= the real threshold, so partial fails by default.
DEFAULT_FAIL_ON: FailOn = "partial"
# What a plan's side ops are: compute kernels, communication tasks or memory copies.
SideKind = Literal["compute", "communication", "copy"]


def choices_of(kind: object) -> tuple[str, ...]:
    """The values of one of the Literal vocabularies above, in their order."""
    return tuple(str(value) for value in get_args(kind))


CoresSource = Literal["info.json", "config", "soc", "soc-ini", "observed"]


def rank_text(rank: int | None) -> str:
    """A rank as reports print it: ``-`` when unknown (a bare file without profiler_info)."""
    return "-" if rank is None else str(rank)


# Layers a sample's table lists (PlanRun.layers, the JSON per_run[].layers); the count of
# all of them is PlanRun.occurrences. A bound on the report: a layout that pairs tens of
# thousands of occurrences in one capture would otherwise write an entry for each.
MAX_LISTED_LAYERS = 1_000
FAKE_SHARE = 0.25  # the default of Options.fake_share (and of Report.fake_share)
MAX_INPUT_SIZE = 16 * 2**30  # the default of Options.max_input_size (a 1M-kernel CSV: 0.3 GiB)

MODULE_SCOPE = "module:"  # side = "module:Name": the kernels launched inside nn.Module Name


# What a plan's diagnosis found (docs/advice.md). Other stages add causes here; the
# fix advice is keyed by it (overlap_check/advice.py), never parsed from prose.
Cause = Literal["no-evidence", "not-split", "fake", "partial", "real"]
Stage = Literal["3a", "3b", "3c"]  # docs/method.md's failure modes
# What decided a plan's verdict (verdict.decide): the band of its hidden_pct; the
# fake-share cap (more than fake_share of the judged warm layers fake), "fake-run" when a
# warm sample was fake in every layer; placement (not-split); nothing judged.
DecidedBy = Literal["band", "fake-share", "fake-run", "not-split", "no-evidence"]
# The last five are measured after the judgement (the side tail, the join wait and the
# tail operators from the layer figures; against a reference the dominator stretched and
# the shapes changed) and go in through verdict.with_cause, listed by size with the rest.
EvidenceKind = Literal[
    "nothing-judged",
    "placement",
    "barrier",
    "contention",
    "cube-saturated",
    "band-mismatch",
    "side-tail",
    "join-wait",
    "dominator-stretched",
    "shape-change",
    "tail-ops",
]
