"""The text report's Communication section (docs/method.md, "Communication")."""

from __future__ import annotations

from overlap_check.model import CommunicationStep, Report, rank_text
from overlap_check.report.cases import pct
from overlap_check.report.color import bold
from overlap_check.report.text_table import table

EXPLANATION = (
    "whole device, per rank: busy = union of communication ops, hidden = its part under "
    "compute on any stream, exposed = busy - hidden; warm medians"
)
STEPS = (
    "per step; profiler: step_trace_time.csv Communication, Overlapped, "
    "Communication(Not Overlapped), Computing, Free; diff: largest gap / its Communication"
)


def us(ns: float | None) -> str:
    return "n/a" if ns is None else f"{ns / 1000:.3f}"


def step_cells(rank: int | None, s: CommunicationStep) -> list[str]:
    """One step's row: ours, then the profiler's (shared by the text and markdown reports)."""
    p = s.profiler
    theirs = ["-"] * 5
    if p is not None:
        figures = (p.communication_ns, p.overlapped_ns, p.not_overlapped_ns, p.computing_ns)
        theirs = [us(ns) for ns in (*figures, p.free_ns)]
    return [
        rank_text(rank),
        str(s.run),
        "-" if s.step is None else str(s.step),
        "warm" if s.warm else "cold",
        us(s.busy_ns),
        us(s.hidden_ns),
        us(s.exposed_ns),
        us(s.compute_ns),
        *theirs,
        "-" if s.profiler_difference is None else f"{s.profiler_difference:.2%}",
    ]


STEP_HEADER = ["rank", "run", "step", "warm", "busy_us", "hidden_us", "exposed_us", "compute_us"]
STEP_HEADER += ["profiler comm_us", "overlapped_us", "not_overlapped_us", "computing_us"]
STEP_HEADER += ["free_us", "diff"]
RANK_HEADER = ["rank", "busy_us", "hidden_us", "exposed_us", "hidden_pct"]


def rank_cells(report: Report) -> list[list[str]]:
    return [
        [
            rank_text(c.rank),
            us(c.busy_ns) + (" (provisional)" if c.provisional else ""),
            us(c.hidden_ns),
            us(c.exposed_ns),
            pct(c.hidden_pct),
        ]
        for c in report.communication
    ]


def render_communication(report: Report, color: bool) -> list[str]:
    """The section's lines; [] when no rank had a communication row."""
    if not report.communication:
        return []
    steps = [step_cells(c.rank, s) for c in report.communication for s in c.steps]
    return [
        bold("Communication", color) + f" ({EXPLANATION})",
        *table(RANK_HEADER, rank_cells(report)),
        "  " + STEPS,
        *table(STEP_HEADER, steps),
    ]
