"""The words the report and the options use: verdicts, causes, choices, defaults."""

from __future__ import annotations

from typing import Literal, get_args

SCHEMA_VERSION = 1

Verdict = Literal["real", "partial", "fake", "not-split", "no-evidence"]
PlanMode = Literal["ge", "npugraph_ex"]
# Option vocabularies: the click choices, the config checks and the gate's table derive
# from these (choices_of), so each is spelled once.
FailOn = Literal["fake", "partial", "never"]
ExecutionPath = Literal["ge", "npugraph_ex", "eager", "cuda"]  # docs/advice.md
Per = Literal["run", "step"]
Order = Literal["given", "time"]
BaselineFigure = Literal["hidden_pct", "overlap_pct"]
# The recipes establish a plan only at >= the real threshold, so partial fails by default.
DEFAULT_FAIL_ON: FailOn = "partial"
SideKind = Literal["compute", "communication", "copy"]


def choices_of(kind: object) -> tuple[str, ...]:
    """The values of one of the Literal vocabularies above, in their order."""
    return tuple(str(value) for value in get_args(kind))


CoresSource = Literal["info.json", "config", "soc", "soc-ini", "observed"]


def rank_text(rank: int | None) -> str:
    """A rank as reports print it: ``-`` when unknown (a bare file without profiler_info)."""
    return "-" if rank is None else str(rank)


# Layers a sample's table lists (docs/contract.md): a layout that pairs tens of thousands
# of occurrences in one capture would otherwise write an entry for each.
MAX_LISTED_LAYERS = 1_000
FAKE_SHARE = 0.25  # the default of Options.fake_share (and of Report.fake_share)
MAX_INPUT_SIZE = 16 * 2**30  # the default of Options.max_input_size (a 1M-kernel CSV: 0.3 GiB)

MODULE_SCOPE = "module:"  # side = "module:Name": the kernels launched inside nn.Module Name


# A diagnosis' cause, what decided the verdict and the evidence kinds: docs/advice.md. The
# fix advice is keyed by the cause (judge/advice.py), never parsed from prose.
Cause = Literal["no-evidence", "not-split", "fake", "partial", "real"]
Stage = Literal["3a", "3b", "3c"]  # docs/method.md's failure modes
DecidedBy = Literal["band", "fake-share", "fake-run", "not-split", "no-evidence"]
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
