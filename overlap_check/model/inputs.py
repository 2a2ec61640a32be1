"""What goes in: a capture, the plans and the options it is judged with.

Every option and plan key is described in docs/config.md; comments here add what it does not."""

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
    """A row of the profiler's step_trace_time.csv / .db StepTraceTime (None: N/A)."""

    step: int | None  # None: the file's blank Step (no schedule)
    device: int | None
    computing_ns: int | None
    not_overlapped_ns: int | None  # Communication(Not Overlapped)
    overlapped_ns: int | None
    communication_ns: int | None
    free_ns: int | None


@dataclass(frozen=True)
class Capture:
    """One profiler capture of one rank (one run); ``kernels``: model.table.KERNEL_SCHEMA."""

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
    unplaced_rows: int = 0  # compute rows without a stream: in no stream's figures
    task_source: str | None = None  # the file of copy / communication tasks, if another
    notes: tuple[str, ...] = ()
    profiler_steps: tuple[ProfilerStepTime, ...] = ()  # step_trace_time.csv / analysis.db
    profiler_steps_file: str | None = None  # the file they were read from
    incomplete: str | None = None  # why the kernel file looks cut short (None: it does not)

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
    """A multi-stream plan: the ops moved aside and what should hide them (docs/config.md)."""

    name: str
    side: str | None = None
    dominator: str | None = None
    side_stream: int | None = None
    main_stream: int | None = None
    limit_core: CoreLimit | None = None
    main_limit_core: CoreLimit | None = None
    path: ExecutionPath | None = None  # None: Options.path, else unknown
    side_kind: SideKind = "compute"  # docs/hidden-fraction.md, "Side kinds"
    op_type: str | None = None
    # where its [[plan]] header is (None: command line); not part of the plan's identity
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
    """Everything that changes an analysis, every default here (config, CLI and docs use them)."""

    plans: tuple[Plan, ...] = ()
    thresholds: Thresholds = field(default_factory=Thresholds)
    warmup: int = 2
    min_runs: int = 5
    strict: bool = False
    per: Per = "run"
    fail_on: FailOn = DEFAULT_FAIL_ON
    fake_share: float = FAKE_SHARE
    main_stream: int | None = None
    order: Order = "time"
    device: DeviceConfig = field(default_factory=DeviceConfig)
    soc_ini: str | None = None
    graph_dump: str | None = None
    fail_on_contention: bool = False
    baseline: str | None = None
    tolerance: float = 0.1
    config_path: str | None = None  # the config file read; None: none found or given
    path: ExecutionPath | None = None  # --path / --source: plans that give no path of their own
    path_source: str | None = None  # where ``path`` came from (a compile call found by --source)
    ascend_c: tuple[str, ...] = ()
    reference: str | None = None  # docs/gain.md
    require_gain: float | None = None
    max_join_wait_us: float | None = None
    # a --reference capture: the plan's matches on the main stream are side ops (run inline)
    inline_side: bool = False
    allow_missing_wait: bool = False
    max_input_size: int = MAX_INPUT_SIZE  # bytes; 0: no limit
