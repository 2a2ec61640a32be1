"""One occurrence measured again from its capture, as the report measured it: for a timeline of
an occurrence the report's layer table does not list (beyond model.MAX_LISTED_LAYERS).
`overlap-check plot` hands it to the plots, which never measure themselves."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from overlap_check.model import Capture, Occurrence, Plan, PlanResult, PlanRun
from overlap_check.model.errors import UsageError
from overlap_check.model.table import compute_kernels

Measure = Callable[[PlanResult, PlanRun, Capture, int], Occurrence]


def measurer(plans: Sequence[Plan]) -> Measure:
    """:func:`measure_occurrence` with the plans the report was judged with: a plan given
    without a side stream takes its side ops from every stream but the main one, as the
    report did, not from the one side stream the result names."""
    by_name = {plan.name: plan for plan in plans}
    return lambda result, plan_run, capture, index: measure_occurrence(
        result, plan_run, capture, index, by_name.get(result.name)
    )


def measure_occurrence(
    result: PlanResult, plan_run: PlanRun, capture: Capture, index: int, plan: Plan | None = None
) -> Occurrence:
    """Occurrence ``index`` of one run, measured by the engine as the report was."""
    from overlap_check.measure.occurrences import PlanStreams
    from overlap_check.measure.plans import occurrences, tag

    plan = plan or result_plan(result)
    # a communication or copy plan's side ops are tasks: tag keeps them with the compute
    kernels = capture.kernels if plan.side_kind != "compute" else compute_kernels(capture.kernels)
    if plan_run.step is not None:  # --per step: occurrences are numbered within the step
        kernels = kernels.filter(pl.col("step") == plan_run.step)
    main = result.main_stream  # matches on it are main work, as in the report (plans.on_main)
    found = occurrences(tag(kernels, plan, main), plan, PlanStreams(main=main, side=None))
    if not 0 < index <= found.status.size:
        raise UsageError(
            f"run {plan_run.run} of plan {result.name!r} has no occurrence {index}",
            hint=f"it has {found.status.size}",
        )
    return found.occurrence(index - 1)


def result_plan(result: PlanResult) -> Plan:
    """The plan a result was measured with, as far as the selection of its ops goes."""
    names = ("name", "side", "dominator", "side_stream", "main_stream", "side_kind", "op_type")
    return Plan(**{name: getattr(result, name) for name in names})
