"""What goes in: a capture, the plans and the options it is judged with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

from overlap_check.model.vocabulary import (
    DEFAULT_FAIL_ON,
    FAKE_SHARE,
    MAX_INPUT_SIZE,
    CoresSource,
    ExecutionPath,
    FailOn,
    Order,
    Per,
    PlanMode,
    SideKind,
)


@dataclass(frozen=True)
class DeviceCores:
    """Physical cores of the device: AI Core (cube, "aic") and AI Vector ("aiv")."""

    aicore: int
    vectorcore: int
    source: CoresSource
    detail: str | None = None  # the file, SoC name or note the figure came from


@dataclass(frozen=True)
class ProfilerStepTime:
    """One row of the profiler's own step_trace_time.csv (or analysis.db StepTraceTime):
    its compute-vs-communication figures for the whole device in one step (None: N/A)."""

    step: int | None  # None: the file's blank Step (no schedule)
    device: int | None
    computing_ns: int | None
    not_overlapped_ns: int | None  # Communication(Not Overlapped)
    overlapped_ns: int | None
    communication_ns: int | None
    free_ns: int | None


@dataclass(frozen=True)
class Capture:
    """One profiler capture of one rank (one run), read into the kernel table.

    ``kernels`` has the schema of :data:`overlap_check.model.table.KERNEL_SCHEMA`.
    """

    path: str  # the result directory (or bare file) it was read from
    source: str  # "kernel_details.csv" | "trace_view.json" | "db" | "op_summary" | "task_time"
    rank: int | None
    device: int | None
    level: str | None  # "Level0" | "Level1" | "Level2" | None when unknown
    capture_time_ns: int | None  # end of collection, wall clock ns; orders runs
    kernels: pl.DataFrame
    skipped_rows: int = 0
    skipped_lines: tuple[int, ...] = ()  # 1-based line numbers of skipped rows
    skipped_file: str | None = None  # the file the skipped lines belong to
    device_cores: DeviceCores | None = None  # from PROF_*/device_N/info.json.N
    stream_source: str | None = None  # where Stream IDs came from when not the kernel file
    # compute rows left without a stream (a Level0 row no task matched, a Stream ID N/A):
    # in no stream's figures; a plan they may belong to is provisional
    unplaced_rows: int = 0
    # where a copy / communication plan's task rows came from when the kernel file lists
    # none (Level1 kernel_details.csv has no copy task): the .db, task_time or trace
    task_source: str | None = None
    notes: tuple[str, ...] = ()
    profiler_steps: tuple[ProfilerStepTime, ...] = ()  # step_trace_time.csv / analysis.db
    profiler_steps_file: str | None = None  # the file they were read from
    # why the kernel file looks cut short against the profiler's own files (None: it does not)
    incomplete: str | None = None

    def to_pandas(self) -> pd.DataFrame:
        """The kernel table as a pandas DataFrame (needs the `pandas` extra)."""
        from overlap_check.model.extras import require

        for module in ("pandas", "pyarrow"):
            require(module, "pandas", "Capture.to_pandas()")
        return self.kernels.to_pandas()


@dataclass(frozen=True)
class Thresholds:
    real: float = 0.5
    fake: float = 0.05


@dataclass(frozen=True)
class CoreLimit:
    """`limit_core_num` applied to a plan's side operators."""

    aicore: int | None = None
    vectorcore: int | None = None
    mode: PlanMode = "ge"


@dataclass(frozen=True)
class Plan:
    """A multi-stream plan: which operators were moved aside, and what should hide them.

    ``side`` and ``dominator`` are regular expressions searched in the kernel name
    (``side = "module:Name"``: the kernels launched inside that nn.Module);
    ``op_type`` one searched in the operator type. ``side``, ``side_stream`` and
    ``op_type`` all restrict the side selection (selection.side_expr). ``side`` omitted:
    every kernel (of ``side_kind``) on ``side_stream``. ``dominator`` omitted: the
    longest main-stream kernel of each occurrence.
    """

    name: str
    side: str | None = None
    dominator: str | None = None
    side_stream: int | None = None
    main_stream: int | None = None
    limit_core: CoreLimit | None = None
    # the main path's limit (npugraph_ex: its stream's): the kernels on main_stream, else
    # the dominator kernels; the side ops' limit_core wins where both govern a kernel
    main_limit_core: CoreLimit | None = None
    path: ExecutionPath | None = None  # None: Options.path, else unknown
    # compute: side ops are compute kernels; communication / copy: the capture's
    # communication tasks / memory copies matching ``side`` (and ``side_stream``), hidden
    # under compute (docs/hidden-fraction.md, "Side kinds")
    side_kind: SideKind = "compute"
    op_type: str | None = None
    # Where the plan was written: its [[plan]] header in the config (None for a plan given
    # on the command line). CI annotations point there (report/github.py); not part of
    # the plan's identity, so equal plans from two places compare equal.
    config_file: str | None = field(default=None, compare=False)
    config_line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class DeviceConfig:
    soc: str | None = None
    aicore: int | None = None
    vectorcore: int | None = None
    ge_aicore_num: str | None = None  # GE's global "aic|aiv" string


@dataclass(frozen=True)
class Options:
    """Everything that changes an analysis. Every default lives here (config/settings.py, the
    CLI and docs/config.md take theirs from these fields)."""

    plans: tuple[Plan, ...] = ()
    thresholds: Thresholds = field(default_factory=Thresholds)
    warmup: int = 2
    min_runs: int = 5
    strict: bool = False
    per: Per = "run"
    fail_on: FailOn = DEFAULT_FAIL_ON
    fake_share: float = FAKE_SHARE  # a plan is at best partial above this share of fake occurrences
    main_stream: int | None = None  # stream level: force the main stream
    order: Order = "time"  # several PATHs: by capture time, or as given (a note when they differ)
    device: DeviceConfig = field(default_factory=DeviceConfig)
    soc_ini: str | None = None
    graph_dump: str | None = None
    fail_on_contention: bool = False
    baseline: str | None = None
    tolerance: float = 0.1
    config_path: str | None = None  # the config file read; None: none found or given
    path: ExecutionPath | None = None  # --path / --source: plans that give no path of their own
    path_source: str | None = None  # where ``path`` came from (a compile call found by --source)
    # kernel-name regexes of Ascend C operators beyond cores.rules.ASCEND_C_OPERATORS
    ascend_c: tuple[str, ...] = ()
    # docs/gain.md: the same workload captured without the multi-stream change, and the
    # gates on it (None: off)
    reference: str | None = None
    require_gain: float | None = None  # percent the step must be faster than the reference
    max_join_wait_us: float | None = None  # main waits after the dominator (new ones, with one)
    # a --reference capture (docs/gain.md): the plan's matches on the main stream are its
    # side ops too (the side work ran inline), not main work
    inline_side: bool = False
    # a missing wait (a join that did not wait, a side stream a layer behind) is a data
    # race and fails the gate unless accepted knowingly (--allow-missing-wait)
    allow_missing_wait: bool = False
    # the largest kernel file read, in bytes (0: no limit); --max-input-size lifts it
    max_input_size: int = MAX_INPUT_SIZE
