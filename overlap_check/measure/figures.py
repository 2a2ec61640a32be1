"""One capture in, only its figures out: what the report needs from each run.

A worker reduces one capture with :func:`capture_figures`; its kernel table never leaves
the worker. The rank's main stream, each plan's main stream and the device cores need
every run: a worker measures the pairs of every two streams, and each plan for the main
stream the capture chooses alone; one whose choice misses its rank's is reduced again
(docs/architecture.md, "The path of `overlap-check analyze DIR`")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache, partial

import numpy as np
import polars as pl

from overlap_check.measure import barriers
from overlap_check.measure.communication import CaptureCommunication, capture_communication
from overlap_check.measure.cores import (
    ContentionEvidence,
    Limits,
    RunRules,
    contention_evidence,
    observed_maxima,
    resolve_device,
    run_rules,
    sweep_cores,
)
from overlap_check.measure.hiding import Siblings, busy_without, helper_streams_of, siblings
from overlap_check.measure.joins import layer_figures, step_wall
from overlap_check.measure.occurrences import OK, PlanStreams
from overlap_check.measure.placement import counted_by_label, layered_counts
from overlap_check.measure.plans import main_kernels, occurrences, on_main, plan_run, tag
from overlap_check.measure.runs import Sample, make_samples
from overlap_check.measure.shapes import shape_signature, wants_shapes
from overlap_check.measure.streams import (
    PairFigure,
    StreamSets,
    choose_main_stream,
    pair_figure,
    stream_sets,
    stream_stats,
)
from overlap_check.model import (
    Capture,
    DeviceCores,
    Options,
    Plan,
    PlanRun,
    ShapeCount,
    SideKind,
    StreamStat,
)
from overlap_check.model.core_kinds import AIC_DEMAND, core_code
from overlap_check.model.errors import InputError, OverlapCheckError, UsageError
from overlap_check.model.intervals import I64
from overlap_check.model.selection import (
    dominator_expr,
    module_scope,
    plan_columns,
    restricted_side_expr,
    side_expr,
)
from overlap_check.model.table import (
    ANALYSIS_COLUMNS,
    compute_kernels,
    i64_column,
    is_unplaced,
    without_copies,
)
from overlap_check.readers.discover import Source


@dataclass(frozen=True)
class PlanSample:
    """One plan in one sample; ``run``, ``warm`` and ``sample`` are set by the parent."""

    run: PlanRun
    barriers: pl.DataFrame  # barriers.instances of the sample, run 0
    # side time only sibling side streams covered while the main path idled (None: none)
    siblings: Siblings | None = None


@dataclass(frozen=True)
class SampleFigures:
    """One sample (the run, or one of its steps)."""

    step: int | None  # None: the whole run
    sets: StreamSets  # busy intervals reduced to their lengths (see _lengths_only)
    pairs: dict[int, dict[int, PairFigure | None]]  # main -> side -> streams.pair_figure
    # per plan: main stream -> figures; key None: a main stream with nothing of the plan
    plans: tuple[dict[int | None, PlanSample], ...]

    def pair_figures(self, main: int) -> dict[int, PairFigure | None]:
        """Side stream -> figure against ``main`` (a main absent here pairs with nothing)."""
        return self.pairs.get(main, {})

    def plan(self, p: int, main: int | None) -> PlanSample:
        figures = self.plans[p]
        return figures[main] if main in figures else figures[None]


@dataclass(frozen=True)
class PlanPieces:
    """What a plan's stream choice and placement check need from one capture."""

    dominator_ns: pl.DataFrame  # stream_id, t: dominator kernel time per stream
    side_ns: pl.DataFrame  # stream_id, t: side-op time per stream
    # placement.layered_counts per sample, any stream: what placement (3a) reads
    matched: pl.DataFrame
    # streams where a main stream changes the figures; one elsewhere reads key None
    matters: frozenset[int]
    # stream -> the fewest AI-core blocks of its dominator kernels (docs/advice.md)
    dominator_blocks: dict[int, int] = field(default_factory=dict)
    # Input Shapes of the dominator and side ops (shapes.shape_signature; None: not read)
    shapes: tuple[ShapeCount, ...] | None = None
    # compute rows without a stream that may be the plan's (unplaced_touching): provisional
    unplaced: int = 0


@dataclass(frozen=True)
class CaptureFigures:
    """Everything the report needs from one capture."""

    capture: Capture  # the metadata; its kernel table is empty
    communication: int  # communication rows
    streams: tuple[StreamStat, ...]  # the whole capture's streams
    origin_ns: int | None  # its first compute kernel start
    samples: tuple[SampleFigures, ...]
    plans: tuple[PlanPieces, ...]
    rules: RunRules | None  # None: no limit configured
    # the contention sweep, for any cores the decision can take (None: no decision)
    contention: ContentionEvidence | None
    observed: tuple[int, int] | None  # largest Block Num per kind (without info.json cores)
    step_error: UsageError | None = None  # --per step on a capture without steps
    # main stream -> the streams hiding.helper_streams_of names with it as the main stream
    helpers: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # communication busy / hidden / exposed per step (None: no communication row)
    comm: CaptureCommunication | None = None


def _lengths_only(sets: StreamSets) -> StreamSets:
    """The sets with each stream's busy intervals replaced by one interval of the same
    length: all that choosing the main stream, stream_stats and rank_summary read."""
    zero = np.zeros(1, dtype=np.int64)
    busy = {sid: (zero, np.array([sets.busy_ns(sid)], dtype=np.int64)) for sid in sets.busy}
    return replace(sets, busy=busy)


def time_per_stream(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Kernel time per stream (``stream_id``, ``t``) of kernel rows, or of such sums."""
    rows = pl.concat(frames)
    if "t" not in rows.columns:
        rows = rows.select("stream_id", (pl.col("end_ns") - pl.col("start_ns")).alias("t"))
    return rows.group_by("stream_id").agg(pl.col("t").sum())


def ranked_streams(totals: pl.DataFrame, exclude: int | None = None) -> list[int]:
    """Streams of time_per_stream sums, most time first (ties: lowest ID)."""
    if exclude is not None:
        totals = totals.filter(pl.col("stream_id") != exclude)
    ranked = totals.sort(["t", "stream_id"], descending=[True, False])
    return [int(sid) for sid in ranked.get_column("stream_id").to_list()]


def _pairs(sets: StreamSets) -> dict[int, dict[int, PairFigure | None]]:
    """streams.pair_figure of each stream against each other stream as the main one."""
    out: dict[int, dict[int, PairFigure | None]] = {m: {} for m in sorted(sets.busy)}
    for main, figures in out.items():
        for side in sets.busy:
            if side == main:
                continue
            if side in out and main in out[side]:  # the overlap is symmetric: no second sweep
                other = out[side][main]
                figures[side] = None if other is None else (*other[:2], other[3], other[2])
            else:
                figures[side] = pair_figure(sets, main, side)
    return out


def plan_main(
    plan: Plan, dominator_ns: Sequence[pl.DataFrame], rank_main: int | None
) -> int | None:
    """The plan's main (dominator's) stream (judge.decide.plan_streams and a capture alone;
    docs/method.md, "Which kernels a plan names"); ``dominator_ns``: one frame per run."""
    if plan.main_stream is not None:
        return plan.main_stream
    if plan.dominator is None:
        return rank_main
    ranked = ranked_streams(time_per_stream(dominator_ns))
    return ranked[0] if ranked else None


# Per plan of Options.plans, the figures key to build (None: before the rank's decision,
# the capture's own choice: judge.decide.undecided)
Mains = tuple[int | None, ...]


def figures_key(main: int | None, matters: frozenset[int]) -> int | None:
    """The key of SampleFigures.plans that main stream ``main`` reads (None: a main stream
    with nothing of the plan, the same figures for every such stream)."""
    return main if main in matters else None


def _plan_figures(
    plan: Plan,
    capture: Capture,
    samples: Sequence[Sample],
    options: Options,
    comm: Sequence[tuple[I64, I64]],
    sets: Sequence[StreamSets],
    rank_main: int | None,
    wanted: tuple[int | None] | None,
) -> tuple[PlanPieces | None, list[dict[int | None, PlanSample]]]:
    """The plan's pieces (none with ``wanted``), and per sample its figures for the main
    stream of the figures key ``wanted`` holds (None: its plan_main with ``rank_main``).
    Per sample, ``comm``: its communication tasks' bounds, ``sets``: its busy sets."""
    tagged = [tag(s.kernels, plan) for s in samples]  # no main stream yet (plans.on_main)
    side = [t.filter(pl.col("_side")) for t in tagged]
    pieces = None  # a second reduction (``wanted``) keeps its first one's pieces
    if wanted is None:
        # communication tasks have no stream: they never name the plan's side stream
        streamed = [t.filter(pl.col("stream_id").is_not_null()) for t in side]
        dominator_ns = time_per_stream([t.filter(pl.col("_dom")) for t in tagged])
        if plan.dominator is not None:  # the dominators of a main stream make the occurrences
            matters = frozenset(dominator_ns.get_column("stream_id").to_list())
        else:  # the longest non-side kernel of each cluster, on the main stream
            found = pl.concat([t.filter(~pl.col("_side")).select("stream_id") for t in tagged])
            matters = frozenset(found.get_column("stream_id").unique().to_list())
        if plan.side_stream is None:  # the matches on a main stream are main work there
            on = pl.concat([s.select("stream_id") for s in streamed]).get_column("stream_id")
            matters |= frozenset(on.unique().to_list())
        pieces = PlanPieces(
            dominator_ns=dominator_ns,
            side_ns=time_per_stream(streamed),
            # placement: the ops the regexes name on every stream (a communication or copy
            # plan's tasks cannot stay on the main stream: they are its side ops)
            matched=pl.concat(
                (
                    layered_counts(t) if plan.side_kind == "compute" else counted_by_label(s)
                ).with_columns(pl.lit(j, pl.Int64).alias("sample"))
                for j, (t, s) in enumerate(zip(tagged, side, strict=True))
            ),
            matters=matters,
            # a compute plan's one sample of a run holds every compute row, in order
            dominator_blocks=dominator_blocks(
                capture.kernels,
                plan,
                tagged[0] if options.per == "run" and plan.side_kind == "compute" else None,
            ),
            shapes=shape_signature(capture.kernels, plan),
            unplaced=unplaced_touching(capture.kernels, plan),
        )
        wanted = (figures_key(plan_main(plan, [dominator_ns], rank_main), matters),)
    figures: list[dict[int | None, PlanSample]] = [{} for _ in samples]
    # hidden side time against the main path, or every other stream for tasks
    # (docs/hidden-fraction.md), from the busy sets: no kernel table is filtered again
    tasks = plan.side_kind != "compute"
    anywhere = [
        cache(partial(busy_without, st.busy, (_NONE if tasks else c)))
        for st, c in zip(sets, comm, strict=True)
    ]
    # the streams the side ops ran on: where barrier (b) looks for an idle side stream
    side_streams = [
        t.filter(pl.col("stream_id").is_in(s.get_column("stream_id").unique().implode()))
        for t, s in zip(tagged, side, strict=True)
    ]
    steps = [step_wall(sample.kernels) for sample in samples]
    for main in wanted:
        streams = PlanStreams(main=main, side=None)  # occurrences read only the main stream
        for j, all_tagged in enumerate(tagged):
            table = all_tagged if options.inline_side else on_main(all_tagged, plan, main)
            kernels = main_kernels(table, main)
            occ = occurrences(table, plan, streams, kernels)
            if tasks:
                occ = occ.with_hidden(anywhere[j])
            else:
                main_busy = {m: b for m, b in sets[j].busy.items() if m == main}
                path = cache(partial(busy_without, main_busy, comm[j]))
                occ = occ.with_hidden(path, anywhere[j])
            run = plan_run(samples[j], occ, options.thresholds)
            by_siblings = None
            if not tasks and occ.hidden is not None:
                judged = occ.status == OK
                by_siblings = siblings(
                    samples[j].kernels, occ.side_ops, judged, occ.hidden, occ.sibling_ns, path
                )
            figures[j][main] = PlanSample(
                run=replace(
                    run,
                    walls=layer_figures(
                        kernels,
                        occ,
                        steps[j],
                        kernels if main is None else table.filter(pl.col("stream_id") == main),
                    ),
                ),
                barriers=barriers.instances(kernels, side_streams[j], occ, options.thresholds),
                siblings=by_siblings,
            )
    return pieces, figures


_NONE: tuple[I64, I64] = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def unplaced_touching(kernels: pl.DataFrame, plan: Plan) -> int:
    """Compute rows without a stream the plan may own: those its side or dominator regexes
    name; all of them when it selects by stream alone, has no dominator regex (any main
    kernel may be one) or hides tasks (all compute hides them)."""
    rows = kernels.filter(is_unplaced(kernels.columns))
    if not rows.height:
        return 0
    by_stream = plan.side is None and plan.op_type is None
    if plan.side_kind != "compute" or plan.dominator is None or by_stream:
        return rows.height
    rows = rows.with_columns(pl.lit(-1, pl.Int64).alias("stream_id"))  # "some stream"
    side = restricted_side_expr(plan.side, None, plan.op_type, rows)
    return rows.filter(side | dominator_expr(plan, rows)).height


def dominator_blocks(
    kernels: pl.DataFrame, plan: Plan, tagged: pl.DataFrame | None = None
) -> dict[int, int]:
    """Per stream, the fewest AI-core blocks (AI_CORE / MIX_AIC Block Num) of the plan's
    dominators: equal to the device's AI cores, every instance filled the cube. ``tagged``:
    the plan's tag of all compute rows, when at hand (no regex runs again)."""
    if plan.dominator is None:
        return {}
    columns = ("stream_id", "accelerator_core", "block_num")
    if tagged is None:
        dominators = kernels.filter(dominator_expr(plan, kernels) & ~side_expr(plan, kernels))
    else:
        dominators = compute_kernels(kernels, columns).filter(tagged.get_column("_dom"))
    blocks = (
        dominators.select(*columns, core_code(dominators))
        .select("stream_id", AIC_DEMAND.alias("blocks"))
        .drop_nulls()
        .group_by("stream_id")
        .agg(pl.col("blocks").min())
    )
    return {int(sid): int(b) for sid, b in blocks.iter_rows()}


def _device_cores(
    capture: Capture, observed: tuple[int, int] | None, options: Options
) -> DeviceCores | None:
    """The device cores judged from this capture alone (None: it cannot tell)."""
    try:
        return resolve_device(
            [capture.device_cores], lambda: [observed] if observed else [], options
        )
    except OverlapCheckError:  # the parent raises it, if the decision over all runs does
        return None


# What a communication or copy plan reads of a capture's rows.
TASK_COLUMNS = (*ANALYSIS_COLUMNS, "is_copy")
# Readers whose table can hold no copy task (Level1 kernel_details has no copy rows).
NO_COPY_SOURCES = ("kernel_details.csv", "op_summary")


def task_kinds(options: Options) -> frozenset[SideKind]:
    """The side kinds of the plans whose side ops are tasks (what read_capture adds)."""
    return frozenset(p.side_kind for p in options.plans if p.side_kind != "compute")


def _task_plans(options: Options, capture: Capture) -> bool:
    """Whether a plan's side ops are communication or copy tasks; an error when a copy
    plan meets a capture whose kernel file lists no copy task and no other file of it
    (.db, task_time, trace: readers.capture._add_tasks) gave them."""
    kinds = {plan.side_kind for plan in options.plans}
    if "copy" in kinds and capture.source in NO_COPY_SOURCES and capture.task_source is None:
        plan = next(p for p in options.plans if p.side_kind == "copy")
        raise InputError(
            f'plan {plan.name!r} has side_kind = "copy", but {capture.source} lists no copy '
            "task and the capture has no trace_view.json, task_time or .db that does",
            path=capture.path,
            key="side_kind",
            hint="keep trace_view.json (or the .db) beside kernel_details.csv",
        )
    return bool(kinds - {"compute"})


def _with_task_rows(samples: Sequence[Sample], capture: Capture) -> list[Sample]:
    """The samples with every row of theirs (compute, communication, copy) for the plans
    whose side ops are tasks; a step's rows are those with its Step Id."""
    rows = capture.kernels.select(TASK_COLUMNS)
    return [
        replace(s, kernels=rows if s.step is None else rows.filter(pl.col("step") == s.step))
        for s in samples
    ]


def _communication(samples: Sequence[Sample], capture: Capture) -> list[tuple[I64, I64]]:
    """Per sample, the start and end of its communication tasks (a step's: its Step Id)."""
    rows = capture.kernels.filter(pl.col("is_communication").fill_null(False))
    parts = [rows if s.step is None else rows.filter(pl.col("step") == s.step) for s in samples]
    return [(i64_column(part, "start_ns"), i64_column(part, "end_ns")) for part in parts]


def capture_figures(
    capture: Capture,
    options: Options,
    limits: Limits | None,
    info_cores: Sequence[Sequence[DeviceCores]] = (),
    mains: Mains | None = None,
) -> CaptureFigures:
    """The figures of one capture. ``limits``: None when none is configured or they failed to
    load (the parent reports it); ``info_cores``: per capture, its info.json cores; ``mains``:
    given (a second reduction: judge.decide.undecided), only the samples' figures are built."""
    columns = ANALYSIS_COLUMNS + plan_columns(options.plans, capture.kernels)
    compute = compute_kernels(capture.kernels, columns)
    whole = stream_sets(compute)
    meta = replace(capture, kernels=capture.kernels.clear())
    kernels = without_copies(capture.kernels)  # copies are read by copy plans only
    communication = int(kernels.get_column("is_communication").sum() or 0)
    first = mains is None  # a second reduction builds no figures but the samples'
    observed = observed_maxima(kernels) if capture.device_cores is None and first else None
    own = () if capture.device_cores is None else (capture.device_cores,)
    cores = _device_cores(capture, observed, options) if first else None
    sweep = sweep_cores(cores, info_cores or [own]) if first else None
    rules = run_rules(kernels, limits) if limits is not None and limits.any and first else None
    contention = (
        None if sweep is None else contention_evidence(kernels, sweep[0], above=not sweep[1])
    )
    busy = {sid: whole.busy_ns(sid) for sid in whole.busy} if first else {}
    figures = CaptureFigures(
        meta,
        communication,
        stream_stats(whole),
        whole.origin_ns,
        (),
        (),
        rules,
        contention,
        observed,
        helpers=helper_streams_of(kernels, sorted(busy), busy) if first else {},
        comm=capture_communication(capture.kernels) if first else None,
    )
    try:
        # one capture alone: warm flags and labels are the parent's to set
        samples, _ = make_samples([replace(capture, kernels=compute)], options.per, 0, 0, columns)
    except UsageError as err:
        return replace(figures, step_error=err)
    sets = [whole] if options.per == "run" else [stream_sets(s.kernels) for s in samples]
    wide = _with_task_rows(samples, capture) if _task_plans(options, capture) else samples
    comm = _communication(samples, capture)
    rank_main = choose_main_stream(sets, options.main_stream)
    per_plan = [
        _plan_figures(
            plan,
            capture,
            samples if plan.side_kind == "compute" else wide,
            options,
            comm,
            sets,
            rank_main,
            None if mains is None else (mains[p],),
        )
        for p, plan in enumerate(options.plans)
    ]
    return replace(
        figures,
        samples=tuple(
            SampleFigures(
                step=None if options.per == "run" else int(sample.kernels.item(0, "step")),
                sets=_lengths_only(s),
                pairs=_pairs(s),
                plans=tuple(plan_figures[j] for _, plan_figures in per_plan),
            )
            for j, (sample, s) in enumerate(zip(samples, sets, strict=True))
        ),
        plans=tuple(pieces for pieces, _ in per_plan if pieces is not None),
    )


def source_figures(
    source: Source | Capture,
    options: Options,
    limits: Limits | None,
    info_cores: Sequence[Sequence[DeviceCores]] = (),
    mains: Mains | None = None,
) -> CaptureFigures:
    """Read one capture (unless given one) and reduce it: what a worker process runs."""
    if isinstance(source, Capture):
        return capture_figures(source, options, limits, info_cores, mains)
    from overlap_check.readers.capture import read_capture

    # Input Shapes only for a reference comparison: the plain path parses no extra column;
    # task rows from another file only for the plans whose side ops are tasks
    capture = read_capture(
        source,
        shapes=wants_shapes(options),
        tasks=task_kinds(options),
        limit=options.max_input_size,
    )
    modules = [m for plan in options.plans if (m := module_scope(plan.side)) is not None]
    if modules:
        from overlap_check.readers.modules import capture_with_modules

        capture = capture_with_modules(capture, source.traces, modules)
    return capture_figures(capture, options, limits, info_cores, mains)
