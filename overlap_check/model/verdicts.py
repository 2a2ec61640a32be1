"""The verdict bands and the words every stage prints for them: the judge decides with
them and the renderers print them, so a word never contradicts its figure."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast, get_args

from overlap_check.model import (
    FAKE_SHARE,
    BarrierCandidate,
    BaselineDelta,
    EvidenceKind,
    PlanResult,
    Thresholds,
    Verdict,
)

if TYPE_CHECKING:  # numpy is imported where a band is taken: lint imports this module
    import numpy as np
    import numpy.typing as npt


# The measured 3c causes (renderers' "cause N"): not what a verdict alone names, nor a mismatch
_NOT_CAUSES = {"nothing-judged", "placement", "barrier", "band-mismatch"}
CAUSE_KINDS: frozenset[EvidenceKind] = frozenset(get_args(EvidenceKind)) - _NOT_CAUSES

PRODUCER_HINT = (
    "make that producer run before the dominator (compute it earlier, or move it into the "
    "stream-switch block) so the side work can start under the dominator"
)


def figure_text(value: float | None, thresholds: Thresholds, digits: int = 3) -> str:
    """A banded figure printed in its own band: 0.4996 is "0.4996 (just under 0.5)", never
    "0.500" beside "partial"."""
    if value is None:
        return "n/a"
    band = label(value, thresholds)
    for places in range(digits, 10):
        text = f"{value:.{places}f}"
        if label(float(text), thresholds) == band:
            break
    else:  # closer than 1e-9 to a threshold: the digits cut toward the value's band
        below = value < (thresholds.fake + thresholds.real) / 2
        cut = math.ceil if band == "real" or (band == "partial" and below) else math.floor
        text = f"{cut(value * 10**digits) / 10**digits:.{digits}f}"
    if places == digits and label(float(text), thresholds) == band:
        return text
    if band == "partial":
        upper = value > (thresholds.fake + thresholds.real) / 2
        near = f"under {thresholds.real:g}" if upper else f"over {thresholds.fake:g}"
    else:
        near = f"over {thresholds.real:g}" if band == "real" else f"under {thresholds.fake:g}"
    return f"{text} (just {near})"


def decided_text(plan: PlanResult, thresholds: Thresholds) -> str:
    """What decided a plan's verdict, in words: its figure, and the cap when it decided."""
    found = plan.diagnosed
    if plan.verdict == "no-evidence":
        judged = found.evidence if found is not None else ()
        reasons = [e.text for e in judged if e.kind == "nothing-judged"]
        return reasons[0] if reasons else ""
    if plan.verdict == "not-split":
        return plan.placement[0] if plan.placement else "placement"
    text = f"{plan.decided_by} {figure_text(plan.hidden_pct, thresholds)}"
    if found is not None and found.capped:
        counts = plan.verdict_counts
        text += f", capped at partial: {counts[2]} of {sum(counts)} judged warm layers fake"
        text += f"; fake in every layer: {', '.join(found.fake_runs)}" * bool(found.fake_runs)
    return text


def capped(
    verdict: Verdict, counts: tuple[int, int, int], fake_share: float = FAKE_SHARE
) -> Verdict:
    """``verdict``, at best partial when over ``fake_share`` of ``counts`` are fake."""
    if verdict == "real" and counts[2] > fake_share * sum(counts):
        return "partial"
    return verdict


BARRIER_HINT = "put that pre-computation in the stream-switch block, the wait after the dominator"


def bands(figures: npt.ArrayLike, thresholds: Thresholds) -> npt.NDArray[np.str_]:
    """The one banding rule: >= real real, <= fake fake, partial between, nan no-evidence."""
    import numpy as np

    values = np.asarray(figures, dtype=np.float64)
    return np.where(
        np.isnan(values),
        "no-evidence",
        np.where(
            values >= thresholds.real,
            "real",
            np.where(values <= thresholds.fake, "fake", "partial"),
        ),
    )


def label(figure: float | None, thresholds: Thresholds) -> Verdict:
    """The verdict band of one figure (:func:`bands`); None (nothing judged) is no-evidence."""
    value = float("nan") if figure is None else figure
    return cast(Verdict, str(bands([value], thresholds)[0]))


def _us(ns: float) -> str:
    return f"{ns / 1000:.3f} µs"


def barrier_phrase(candidate: BarrierCandidate, fake_occurrences: int, hint: bool = True) -> str:
    """The barrier and which way the wait went (docs/hidden-fraction.md), ``hint``: advice."""
    advice = f" - {barrier_hint(candidate)}" if hint else ""
    seen = f"in {candidate.occurrences} of {fake_occurrences} fake occurrences"
    if candidate.waited == "side":
        return (
            f"the side stream waited for {candidate.name} ({candidate.chain}) on stream "
            f"{candidate.stream_id}: the side window starts {_us(candidate.lag_ns)} after it "
            f"ended, after the dominator started, with the side stream idle ({seen}){advice}"
        )
    chain = f" (chain {candidate.chain} up to the dominator)" if candidate.chain else ""
    return (
        f"{candidate.name}{chain} on stream {candidate.stream_id} starts "
        f"{_us(candidate.after_side_end_ns)} after side work ended before the dominator, after a "
        f"{_us(candidate.gap_ns)} idle gap on the main stream: the main stream waited for "
        f"the side stream ({seen}){advice}"
    )


def barrier_hint(candidate: BarrierCandidate) -> str:
    """The advice that matches which way the wait went."""
    return PRODUCER_HINT if candidate.waited == "side" else BARRIER_HINT


def describe(delta: BaselineDelta, tolerance: float) -> str:
    """One line a person reads: what changed and what that means for the gate."""
    where = delta.plan if delta.rank is None else f"{delta.plan} rank {delta.rank}"
    if delta.status == "missing-in-head":
        return (
            f"{where}: in the baseline ({delta.figure} {_pct(delta.base)}) but not in this report; "
            "refresh the baseline if it was renamed or removed"
        )
    if delta.status == "missing-in-base":
        return f"{where}: new ({delta.figure} {_pct(delta.head)}), not in the baseline"
    change = f" ({delta.delta:+.3f})" if delta.delta is not None else ""
    text = f"{where}: {delta.figure} {_pct(delta.base)} -> {_pct(delta.head)}{change}"
    if delta.status == "regressed":
        text += f", dropped by more than the tolerance {tolerance:.3f}"
    elif delta.status == "improved":
        text += ", improved"
    return text


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
