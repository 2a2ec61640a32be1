"""A typed Report back from the JSON that report/json.py writes (schema_version 1).

The inverse of ``report.json.to_dict``: rendering the result again gives the same
document. Microseconds become integer nanoseconds again (the JSON rounds to 1 ns);
points in time come from their exact ``*_ns`` twin where the JSON has one, else from
``*_start_us``/``*_end_us`` plus the run's ``origin_ns``. The gate's marks on each plan
and stream pair, its settings (``fail_on``, ``strict``, the baseline tolerance) and each
sample's layer figures are in the JSON; a key added since schema_version 1 that an older
report lacks takes the dataclass default.
Every bad value is an InputError naming the file and the key.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast, get_args, get_type_hints

from overlap_check.model import (
    DEFAULT_FAIL_ON,
    FAKE_SHARE,
    SCHEMA_VERSION,
    AppliedLimit,
    BarrierCandidate,
    BaselineDelta,
    Cause,
    CommunicationStep,
    ContentionInterval,
    CoresResult,
    CoreViolation,
    DeviceCores,
    Diagnosis,
    Evidence,
    EvidenceKind,
    ExecutionPath,
    FailOn,
    LayerFigures,
    Occurrence,
    PlanResult,
    PlanRun,
    PlanWalls,
    ProfilerStepTime,
    RankCommunication,
    RankStreamSummary,
    ReferenceDelta,
    ReferenceResult,
    Report,
    RunInfo,
    ShapeCount,
    SideKind,
    Stage,
    StepWall,
    StepWallDelta,
    StreamPair,
    StreamPairRun,
    StreamStat,
    TailOp,
    Thresholds,
    Verdict,
)
from overlap_check.model.errors import InputError

T = TypeVar("T")
Origins = dict[tuple[int | None, int], int | None]


def _literal(cls: type, name: str) -> object:
    """The Literal type of one dataclass field (its allowed values)."""
    return get_type_hints(cls)[name]


def _ns(us: float | None) -> int | None:
    """JSON microseconds (3 decimals) -> integer nanoseconds."""
    return None if us is None else round(us * 1000)


class _Object:
    """One JSON object and where it is (``plans[0].per_run[1]``), with typed getters."""

    def __init__(self, value: Any, where: str, path: str | Path | None) -> None:
        if not isinstance(value, dict):
            raise InputError(f"expected an object, got {value!r}", path=path, key=where or None)
        self.value: dict[str, Any] = value
        self.where = where
        self.path = path

    def _key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def _bad(self, name: str, value: Any) -> InputError:
        return InputError(f"unexpected value {value!r}", path=self.path, key=self._key(name))

    def _get(self, name: str, ok: Callable[[Any], bool], optional: bool) -> Any:
        value = self.value.get(name)
        if (value is None and optional) or (value is not None and ok(value)):
            return value
        raise self._bad(name, value)

    def integer(self, name: str) -> int:
        return cast(int, self._get(name, _is_int, False))

    def integer_or_none(self, name: str) -> int | None:
        return cast("int | None", self._get(name, _is_int, True))

    def number(self, name: str) -> float:
        return float(self._get(name, _is_number, False))

    def nanoseconds(self, name: str) -> int:
        """A ``*_us`` duration as the integer nanoseconds it was rounded from."""
        return round(self.number(name) * 1000)

    def nanoseconds_or_none(self, name: str) -> int | None:
        return _ns(self.number_or_none(name))

    def counts(self, name: str) -> tuple[int, int, int]:
        """A ``{real, partial, fake}`` object (hidden_pct bands) as a tuple."""
        counts = self.child(name)
        return (counts.integer("real"), counts.integer("partial"), counts.integer("fake"))

    def number_or_none(self, name: str) -> float | None:
        return _float(self._get(name, _is_number, True))

    def fraction(self, name: str) -> float:
        return float(self._get(name, _is_fraction, False))

    def fraction_or_none(self, name: str) -> float | None:
        """A share of time: a finite number in [0, 1] (anything else cannot be)."""
        return _float(self._get(name, _is_fraction, True))

    def text(self, name: str) -> str:
        return cast(str, self._get(name, _is_str, False))

    def text_or_none(self, name: str) -> str | None:
        return cast("str | None", self._get(name, _is_str, True))

    def flag(self, name: str) -> bool:
        return cast(bool, self._get(name, _is_bool, False))

    def choice(self, name: str, kind: object) -> Any:
        return self._get(name, lambda v: v in get_args(kind), False)

    def choice_or_none(self, name: str, kind: object) -> Any:
        return self._get(name, lambda v: v in get_args(kind), True)

    def texts(self, name: str) -> tuple[str, ...]:
        return tuple(self._items(name, _is_str))

    def integers(self, name: str) -> tuple[int, ...]:
        return tuple(self._items(name, _is_int))

    def _items(self, name: str, ok: Callable[[Any], bool]) -> list[Any]:
        items = self.value.get(name)
        if not isinstance(items, list):
            raise InputError("expected a list", path=self.path, key=self._key(name))
        for number, item in enumerate(items):
            if not ok(item):
                raise self._bad(f"{name}[{number}]", item)
        return items

    def has(self, name: str) -> bool:
        """Whether the key is there (keys added since schema_version 1 may be absent)."""
        return name in self.value

    def child(self, name: str) -> _Object:
        return _Object(self.value.get(name), self._key(name), self.path)

    def child_or_none(self, name: str) -> _Object | None:
        return None if self.value.get(name) is None else self.child(name)

    def each(self, name: str, build: Callable[[_Object], T]) -> tuple[T, ...]:
        items = self.value.get(name)
        if not isinstance(items, list):
            raise InputError("expected a list of objects", path=self.path, key=self._key(name))
        return tuple(
            build(_Object(item, f"{self._key(name)}[{number}]", self.path))
            for number, item in enumerate(items)
        )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def _is_fraction(value: Any) -> bool:
    return _is_number(value) and 0.0 <= value <= 1.0


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _point(obj: _Object, name: str, origin: int | None) -> int | None:
    """A point in time given only relative to the run's origin (``{name}_us``)."""
    relative = _ns(obj.number_or_none(f"{name}_us"))
    return None if relative is None or origin is None else origin + relative


def _run(obj: _Object) -> RunInfo:
    def stream(s: _Object) -> StreamStat:
        return StreamStat(s.integer("stream_id"), s.integer("kernels"), s.nanoseconds("busy_us"))

    return RunInfo(
        index=obj.integer("index"),
        path=obj.text("path"),
        rank=obj.integer_or_none("rank"),
        warm=obj.flag("warm"),
        source=obj.text("source"),
        streams=obj.each("streams", stream),
        skipped_rows=obj.integer("skipped_rows"),
        skipped_lines=obj.integers("skipped_lines"),
        device=obj.integer_or_none("device"),
        level=obj.text_or_none("level"),
        capture_time_ns=obj.integer_or_none("capture_time_ns"),
        communication=obj.integer("communication_rows"),
        stream_source=obj.text_or_none("stream_source"),
        unplaced_rows=obj.integer("unplaced_rows") if obj.has("unplaced_rows") else 0,
        origin_ns=obj.integer_or_none("origin_ns"),
        notes=obj.texts("notes"),
    )


def _pair(obj: _Object) -> StreamPair:
    def run(r: _Object) -> StreamPairRun:
        return StreamPairRun(
            run=r.integer("run"),
            sample=r.text_or_none("sample"),
            warm=r.flag("warm"),
            overlap_ns=r.nanoseconds("overlap_us"),
            overlap_pct=r.fraction("overlap_pct"),
            main_busy_ns=r.nanoseconds("main_busy_us"),
            side_busy_ns=r.nanoseconds("side_busy_us"),
        )

    return StreamPair(
        rank=obj.integer_or_none("rank"),
        main=obj.integer("main"),
        side=obj.integer("side"),
        overlap_ns=float(obj.nanoseconds("overlap_us")),
        overlap_pct=obj.fraction("overlap_pct"),
        verdict=obj.choice("verdict", Verdict),
        provisional=obj.flag("provisional"),
        per_run=obj.each("per_run", run),
        gate_failures=_gate_failures(obj),
    )


def _gate_failures(obj: _Object) -> tuple[str, ...]:
    """The gate's mark on a plan or pair (absent in reports written before it was kept)."""
    return obj.texts("gate_failures") if obj.has("gate_failures") else ()


def _rank(obj: _Object) -> RankStreamSummary:
    return RankStreamSummary(
        rank=obj.integer_or_none("rank"),
        main_stream=obj.integer_or_none("main_stream"),
        parallelism=obj.number("parallelism"),
        concurrent_ns=float(obj.nanoseconds("concurrent_us")),
        wall_ns=float(obj.nanoseconds("wall_us")),
        helper_streams=obj.integers("helper_streams"),
    )


def _profiler(obj: _Object) -> ProfilerStepTime:
    return ProfilerStepTime(
        step=obj.integer_or_none("step"),
        device=obj.integer_or_none("device"),
        computing_ns=obj.nanoseconds_or_none("computing_us"),
        not_overlapped_ns=obj.nanoseconds_or_none("not_overlapped_us"),
        overlapped_ns=obj.nanoseconds_or_none("overlapped_us"),
        communication_ns=obj.nanoseconds_or_none("communication_us"),
        free_ns=obj.nanoseconds_or_none("free_us"),
    )


def _communication_step(obj: _Object) -> CommunicationStep:
    profiler = obj.child_or_none("profiler")
    return CommunicationStep(
        run=obj.integer("run"),
        warm=obj.flag("warm"),
        step=obj.integer_or_none("step"),
        busy_ns=obj.nanoseconds("busy_us"),
        hidden_ns=obj.nanoseconds("hidden_us"),
        exposed_ns=obj.nanoseconds("exposed_us"),
        compute_ns=obj.nanoseconds("compute_us"),
        profiler=None if profiler is None else _profiler(profiler),
        profiler_difference=obj.number_or_none("profiler_difference"),
    )


def _communication(obj: _Object) -> RankCommunication:
    def ns(name: str) -> float | None:
        value = obj.number_or_none(name)
        return None if value is None else value * 1000

    return RankCommunication(
        rank=obj.integer_or_none("rank"),
        busy_ns=ns("busy_us"),
        hidden_ns=ns("hidden_us"),
        exposed_ns=ns("exposed_us"),
        hidden_pct=obj.fraction_or_none("hidden_pct"),
        provisional=obj.flag("provisional"),
        steps=obj.each("steps", _communication_step),
    )


def _occurrence(obj: _Object, origin: int | None) -> Occurrence:
    return Occurrence(
        index=obj.integer("index"),
        status=obj.choice("status", _literal(Occurrence, "status")),
        side_ops=obj.integer("side_ops"),
        side_start_ns=obj.integer_or_none("side_start_ns"),
        side_end_ns=_point(obj, "side_end", origin),
        dominator=obj.text_or_none("dominator"),
        dom_start_ns=obj.integer_or_none("dom_start_ns"),
        dom_end_ns=_point(obj, "dom_end", origin),
        overlap_ns=obj.nanoseconds("overlap_us"),
        overlap_pct=obj.fraction_or_none("overlap_pct"),
        busy_overlap_pct=obj.fraction_or_none("busy_overlap_pct"),
        layer=obj.integer_or_none("layer"),
        hidden_pct=obj.fraction_or_none("hidden_pct"),
        dominator_pct=obj.fraction_or_none("dominator_pct"),
        side_busy_ns=obj.nanoseconds_or_none("side_busy_us"),
        hidden_ns=obj.nanoseconds_or_none("hidden_us"),
        verdict=obj.choice_or_none("verdict", Verdict),
        join_not_waited=obj.flag("join_not_waited"),
    )


def _plan_run(obj: _Object, origin: int | None) -> PlanRun:
    return PlanRun(
        run=obj.integer("run"),
        sample=obj.text_or_none("sample"),
        warm=obj.flag("warm"),
        overlap_pct=obj.fraction_or_none("overlap_pct"),
        busy_overlap_pct=obj.fraction_or_none("busy_overlap_pct"),
        occurrences=obj.integer("occurrences"),
        judged=obj.integer("judged"),
        side_ops=obj.integer("side_ops"),
        no_side=obj.integer("no_side"),
        no_dominator=obj.integer("no_dominator"),
        zero_length=obj.integer("zero_length"),
        fake=obj.integer("fake_occurrences"),
        worst=obj.each("worst", lambda o: _occurrence(o, origin)),
        unpaired=obj.each("unpaired", lambda o: _occurrence(o, origin)),
        hidden_pct=obj.fraction_or_none("hidden_pct"),
        hidden_counts=obj.counts("verdict_counts"),
        layers=obj.each("layers", lambda o: _occurrence(o, origin)),
        join_not_waited=obj.integer("join_not_waited"),
        lag=obj.flag("lag"),
        step=obj.integer_or_none("step"),
        walls=_layer_figures(obj.child_or_none("walls")),
    )


def _layer_figures(obj: _Object | None) -> LayerFigures | None:
    if obj is None:
        return None

    def step(s: _Object) -> tuple[int | None, int]:
        return (s.integer_or_none("step"), s.nanoseconds("wall_us"))

    return LayerFigures(
        **_medians(obj),
        join_wait_max_ns=obj.nanoseconds_or_none("join_wait_max_us"),
        join_wait_layer=obj.integer_or_none("join_wait_layer"),
        step_walls=obj.each("step_walls", step),
    )


def _barrier(obj: _Object) -> BarrierCandidate:
    return BarrierCandidate(
        name=obj.text("name"),
        stream_id=obj.integer("stream_id"),
        start_ns=obj.integer("start_ns"),
        gap_ns=obj.nanoseconds("gap_us"),
        after_side_end_ns=obj.nanoseconds("after_side_end_us"),
        run=obj.integer("run"),
        occurrence=obj.integer("occurrence"),
        occurrences=obj.integer("occurrences"),
        covers_side_window=obj.flag("covers_side_window"),
        waited=obj.choice("waited", _literal(BarrierCandidate, "waited")),
        chain=obj.text("chain"),
        lag_ns=obj.nanoseconds("lag_us"),
    )


def _diagnosed(obj: _Object | None) -> Diagnosis | None:
    """The structured diagnosis (absent in reports written before it existed)."""
    if obj is None:
        return None
    stage = obj.value.get("stage")
    if stage is not None and stage not in get_args(Stage):
        raise obj._bad("stage", stage)
    path = obj.value.get("path")
    if path is not None and path not in get_args(ExecutionPath):
        raise obj._bad("path", path)

    def evidence(e: _Object) -> Evidence:
        return Evidence(
            kind=e.choice("kind", EvidenceKind),
            text=e.text("text"),
            size_ns=e.nanoseconds_or_none("size_us"),
        )

    return Diagnosis(
        stage=stage,
        cause=obj.choice("cause", Cause),
        path=path,
        evidence=obj.each("evidence", evidence),
        fix=obj.texts("fix"),
    )


def _plan(obj: _Object, origins: Origins) -> PlanResult:
    rank = obj.integer_or_none("rank")

    def run(r: _Object) -> PlanRun:
        return _plan_run(r, origins.get((rank, r.integer("run"))))

    return PlanResult(
        name=obj.text("name"),
        rank=rank,
        method=obj.text("method"),
        overlap_pct=obj.fraction_or_none("overlap_pct"),
        busy_overlap_pct=obj.fraction_or_none("busy_overlap_pct"),
        provisional=obj.flag("provisional"),
        verdict=obj.choice("verdict", Verdict),
        side_stream=obj.integer_or_none("side_stream"),
        main_stream=obj.integer_or_none("main_stream"),
        side=obj.text_or_none("side"),
        dominator=obj.text_or_none("dominator"),
        runs_used=obj.integer("runs_used"),
        overlap_min=obj.fraction_or_none("overlap_min"),
        overlap_max=obj.fraction_or_none("overlap_max"),
        per_run=obj.each("per_run", run),
        barrier_candidates=obj.each("barrier_candidates", _barrier),
        fake_occurrences=obj.integer("fake_occurrences"),
        placement=obj.texts("placement"),
        stayed=obj.texts("stayed"),
        op_type=obj.text_or_none("op_type"),
        diagnosis=obj.text("diagnosis"),
        diagnosed=_diagnosed(obj.child_or_none("diagnosed")),
        findings=obj.texts("findings"),
        config_file=obj.text_or_none("config_file"),
        config_line=obj.integer_or_none("config_line"),
        hidden_pct=obj.fraction_or_none("hidden_pct"),
        decided_by=obj.text("decided_by"),
        verdict_counts=obj.counts("verdict_counts"),
        walls=_walls_or_none(obj.child_or_none("walls")),
        shapes=obj.each("input_shapes", _shape) if "input_shapes" in obj.value else None,
        gate_failures=_gate_failures(obj),
        side_kind=obj.choice("side_kind", SideKind) if "side_kind" in obj.value else "compute",
    )


def _float_ns(obj: _Object, name: str) -> float | None:
    value = _ns(obj.number_or_none(name))
    return None if value is None else float(value)


def _medians(obj: _Object) -> dict[str, Any]:
    """The fields LayerFigures and PlanWalls share (report/json.py's ``_medians``)."""
    return {
        "layers": obj.integer("layers"),
        "steps": obj.integer("steps"),
        "layer_wall_ns": _float_ns(obj, "layer_wall_us"),
        "dominator_ns": _float_ns(obj, "dominator_us"),
        "side_total_ns": _float_ns(obj, "side_total_us"),
        "join_wait_ns": _float_ns(obj, "join_wait_us"),
        "side_tail_ns": _float_ns(obj, "side_tail_us"),
        "step_wall_ns": _float_ns(obj, "step_wall_us"),
        # absent from reports written before tail operators were measured
        "tail_ops": obj.each("tail_ops", _tail_op) if "tail_ops" in obj.value else (),
    }


def _walls(obj: _Object) -> PlanWalls:
    return PlanWalls(
        **_medians(obj),
        join_wait_worst_ns=_ns(obj.number_or_none("join_wait_worst_us")),
        join_wait_worst_layer=obj.integer_or_none("join_wait_worst_layer"),
        join_wait_worst_run=obj.integer_or_none("join_wait_worst_run"),
    )


def _shape(obj: _Object) -> ShapeCount:
    return ShapeCount(
        role=obj.choice("role", _literal(ShapeCount, "role")),
        label=obj.text("label"),
        shapes=obj.text("shapes"),
        count=obj.integer("count"),
    )


def _tail_op(obj: _Object) -> TailOp:
    return TailOp(name=obj.text("name"), count=obj.number("count"), ns=float(obj.nanoseconds("us")))


def _walls_or_none(obj: _Object | None) -> PlanWalls | None:
    return None if obj is None else _walls(obj)


def _reference_delta(obj: _Object) -> ReferenceDelta:
    return ReferenceDelta(
        plan=obj.text("plan"),
        rank=obj.integer_or_none("rank"),
        layers=obj.integer("layers"),
        before=_walls(obj.child("before")),
        after=_walls(obj.child("after")),
        layer_wall_delta_pct=obj.number_or_none("layer_wall_delta_pct"),
        step_wall_delta_pct=obj.number_or_none("step_wall_delta_pct"),
        new_join_wait_ns=_float_ns(obj, "new_join_wait_us"),
        shape_changes=obj.texts("shape_changes") if "shape_changes" in obj.value else (),
        shapes_available=obj.flag("shapes_available") if "shapes_available" in obj.value else False,
        steps=obj.each("steps", _step_delta) if "steps" in obj.value else (),
        steps_before=obj.integer("warm_steps_before") if "warm_steps_before" in obj.value else 0,
        steps_after=obj.integer("warm_steps_after") if "warm_steps_after" in obj.value else 0,
        step_delta_median_pct=obj.number_or_none("step_delta_median_pct"),
        worst_step=obj.integer_or_none("worst_step"),
    )


def _step_wall(obj: _Object) -> StepWall:
    return StepWall(
        run=obj.integer("run"), step=obj.integer_or_none("step"), wall_ns=obj.nanoseconds("wall_us")
    )


def _step_delta(obj: _Object) -> StepWallDelta:
    return StepWallDelta(
        before=_step_wall(obj.child("before")),
        after=_step_wall(obj.child("after")),
        delta_pct=obj.number_or_none("delta_pct"),
    )


def _reference(obj: _Object | None) -> ReferenceResult | None:
    if obj is None:
        return None
    return ReferenceResult(
        path=obj.text("path"),
        matched=obj.text("matched"),
        plans=obj.each("plans", _reference_delta),
    )


def _violation(obj: _Object, origin: int | None, warning: bool) -> CoreViolation:
    """A violation, or a warning (in reports written before they had them, a warning has
    no ``blocks_field`` and its start only relative)."""
    if warning and obj.has("blocks_field"):
        warning = False  # the warning has every key a violation has
    relative = _point(obj, "start", origin)
    return CoreViolation(
        run=obj.integer("run"),
        rank=obj.integer_or_none("rank"),
        stream_id=obj.integer_or_none("stream_id"),
        name=obj.text("name"),
        accelerator_core=obj.text_or_none("accelerator_core"),
        block_num=obj.integer_or_none("block_num"),
        mix_block_num=obj.integer_or_none("mix_block_num"),
        limit=obj.integer("limit"),
        kind=obj.choice("kind", _literal(CoreViolation, "kind")),
        plan=obj.text_or_none("plan"),
        limit_source=obj.text_or_none("limit_source"),
        blocks_field="block_num"
        if warning
        else obj.choice("blocks_field", _literal(CoreViolation, "blocks_field")),
        # without an origin the JSON has start_us null, and so has a re-render
        start_ns=(relative or 0) if warning else obj.integer("start_ns"),
        message=obj.text("message"),
    )


def _contention(obj: _Object) -> ContentionInterval:
    kind = obj.choice("kind", _literal(ContentionInterval, "kind"))
    return ContentionInterval(
        run=obj.integer("run"),
        rank=obj.integer_or_none("rank"),
        kind=kind,
        start_ns=obj.integer("start_ns"),
        duration_ns=obj.nanoseconds("duration_us"),
        demand=obj.integer(f"{kind}_demand"),
        maximum=obj.integer(f"{kind}_max"),
        kernels=obj.texts("kernels"),
        streams=obj.integers("streams"),
        excess_block_ns=obj.nanoseconds("excess_block_us"),
    )


def _limit(obj: _Object) -> AppliedLimit:
    return AppliedLimit(
        source=obj.choice("source", _literal(AppliedLimit, "source")),
        aicore=obj.integer_or_none("aicore"),
        vectorcore=obj.integer_or_none("vectorcore"),
        mode=obj.choice("mode", _literal(AppliedLimit, "mode")),
        plan=obj.text_or_none("plan"),
        detail=obj.text_or_none("detail"),
        kernels=obj.integer("kernels"),
    )


def _device(obj: _Object) -> DeviceCores:
    return DeviceCores(
        aicore=obj.integer_or_none("aicore") or 0,
        vectorcore=obj.integer_or_none("vectorcore") or 0,
        source=obj.choice("source", _literal(DeviceCores, "source")),
        detail=obj.text_or_none("detail"),
    )


def _cores(obj: _Object, origins: Origins) -> CoresResult:
    device = obj.child_or_none("device")

    def violation(v: _Object, warning: bool) -> CoreViolation:
        run = (v.integer_or_none("rank"), v.integer("run"))
        return _violation(v, origins.get(run), warning)

    return CoresResult(
        device=None if device is None else _device(device),
        violations=obj.each("violations", lambda v: violation(v, False)),
        warnings=obj.each("warnings", lambda w: violation(w, True)),
        contention=obj.each("contention", _contention),
        limits=obj.each("limits", _limit),
        over_limit_ns=obj.nanoseconds("over_limit_us"),
        aicore_over_limit_ns=obj.nanoseconds("aicore_over_limit_us"),
        vectorcore_over_limit_ns=obj.nanoseconds("vectorcore_over_limit_us"),
        violation_count=obj.integer("violation_count"),
        warning_count=obj.integer("warning_count"),
        contention_count=obj.integer("contention_count"),
        contention_runs=obj.integer("contention_runs") if obj.has("contention_runs") else 0,
        over_limit_by_rank=obj.each("over_limit_by_rank", _over_limit)
        if obj.has("over_limit_by_rank")
        else (),
        checked_kernels=obj.integer("checked_kernels"),
        exempt_kernels=obj.integer("exempt_kernels"),
        unchecked_kernels=obj.integer("unchecked_kernels"),
        notes=obj.texts("notes"),
    )


def _over_limit(obj: _Object) -> tuple[int | None, int]:
    return (obj.integer_or_none("rank"), obj.nanoseconds("over_limit_us"))


def _delta(obj: _Object) -> BaselineDelta:
    return BaselineDelta(
        plan=obj.text("plan"),
        rank=obj.integer_or_none("rank"),
        base=obj.fraction_or_none("base"),
        head=obj.fraction_or_none("head"),
        delta=obj.number_or_none("delta"),
        status=obj.choice("status", _literal(BaselineDelta, "status")),
        figure=obj.choice("figure", _literal(BaselineDelta, "figure")),
    )


def report_from_json(document: Mapping[str, Any] | Any, path: str | Path | None = None) -> Report:
    """The Report a JSON document (already parsed) describes; InputError naming the key."""
    if not isinstance(document, dict) or document.get("schema_version") != SCHEMA_VERSION:
        raise InputError(
            f"not an overlap-check JSON report (schema_version {SCHEMA_VERSION})",
            path=path,
            hint="write one with --format json or --output FILE.json",
        )
    top = _Object(document, "", path)
    runs = top.each("runs", _run)
    origins: Origins = {(r.rank, r.index): r.origin_ns for r in runs}
    thresholds = top.child("thresholds")
    cores = top.child_or_none("cores")
    baseline = top.value.get("baseline")
    return Report(
        schema_version=top.integer("schema_version"),
        tool_version=top.text("tool_version"),
        config_path=top.text_or_none("config_path"),
        verdict=top.choice("verdict", _literal(Report, "verdict")),
        exit_code=top.integer("exit_code"),
        thresholds=Thresholds(
            real=thresholds.fraction("real"),
            fake=thresholds.fraction("fake"),
        ),
        warmup=top.integer("warmup"),
        min_runs=top.integer("min_runs"),
        per=top.text("per"),
        # the gate settings (absent in reports written before they were kept: the defaults)
        fail_on=top.choice("fail_on", FailOn) if top.has("fail_on") else DEFAULT_FAIL_ON,
        strict=top.flag("strict") if top.has("strict") else False,
        baseline_tolerance=top.number_or_none("baseline_tolerance"),
        # absent in reports written before it was kept: the default
        fake_share=(
            thresholds.fraction("fake_share") if thresholds.has("fake_share") else FAKE_SHARE
        ),
        gate_reasons=top.texts("gate_reasons"),
        notes=top.texts("notes"),
        worst_rank=top.integer_or_none("worst_rank"),
        runs=runs,
        stream_pairs=top.each("stream_pairs", _pair),
        ranks=top.each("ranks", _rank),
        plans=top.each("plans", lambda p: _plan(p, origins)),
        cores=None if cores is None else _cores(cores, origins),
        baseline=None if baseline is None else top.each("baseline", _delta),
        # absent from reports written before the Communication section
        communication=()
        if top.value.get("communication") is None
        else top.each("communication", _communication),
        reference=_reference(top.child_or_none("reference")),
        evidence_summary=top.texts("evidence_summary") if "evidence_summary" in top.value else (),
    )
