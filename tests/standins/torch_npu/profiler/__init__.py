"""Stand-in for ``torch_npu.profiler`` following docs/formats.md.

It records how it is called and, when a profile with a
``tensorboard_trace_handler`` stops, writes generator output
(``synth.write_result_dir``) into the handler's directory, as
``<host>_<pid>_<timestamp>_ascend_pt/``:

- ``FAKE_TORCH_NPU_SCENARIO``: a built-in scenario name (default
  ``warm_cold_runs``); run ``OVERLAP_CHECK_RUN_INDEX`` (1-based) gets the i-th
  of its scenarios (cyclically), with ``rank`` from ``RANK`` when set.
- ``FAKE_TORCH_NPU_PARSE_FAIL=1``: write only raw data and ``logs/``, no
  ``ASCEND_PROFILER_OUTPUT`` (as when torch_npu's parsing fails).
- ``FAKE_TORCH_NPU_DAMAGE=K:empty`` (or ``K:garbage``): in run K, leave
  ``kernel_details.csv`` empty (or with a header no reader knows).
"""

from __future__ import annotations

import dataclasses
import enum
import os
import socket
from pathlib import Path
from typing import Any

import torch_npu


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerLevel:
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics:
    AiCoreNone = "ACL_AICORE_NONE"
    PipeUtilization = "ACL_AICORE_PIPE_UTILIZATION"
    ArithmeticUtilization = "ACL_AICORE_ARITHMETIC_UTILIZATION"
    Memory = "ACL_AICORE_MEMORY_BANDWIDTH"
    MemoryL0 = "ACL_AICORE_L0B_AND_WIDTH"
    MemoryUB = "ACL_AICORE_MEMORY_UB"
    ResourceConflictRatio = "ACL_AICORE_RESOURCE_CONFLICT_RATIO"
    L2Cache = "ACL_AICORE_L2_CACHE"
    MemoryAccess = "ACL_AICORE_MEMORY_ACCESS"


class ExportType:
    Text = "text"
    Db = "db"


class _ExperimentalConfig:
    def __init__(
        self,
        profiler_level: str = ProfilerLevel.Level0,
        aic_metrics: str = AiCMetrics.PipeUtilization,
        l2_cache: bool = False,
        msprof_tx: bool = False,
        mstx: bool = False,
        data_simplification: bool = True,
        record_op_args: bool = False,
        op_attr: bool = False,
        gc_detect_threshold: float | None = None,
        export_type: Any = ExportType.Text,
        host_sys: Any = None,
        mstx_domain_include: Any = None,
        mstx_domain_exclude: Any = None,
        sys_io: bool = False,
        sys_interconnection: bool = False,
    ) -> None:
        if profiler_level in (ProfilerLevel.Level0, ProfilerLevel.Level_none):
            aic_metrics = AiCMetrics.AiCoreNone  # as torch_npu resets it
        self.kwargs = {
            "profiler_level": profiler_level,
            "aic_metrics": aic_metrics,
            "l2_cache": l2_cache,
            "data_simplification": data_simplification,
            "export_type": export_type,
        }
        self._profiler_level = profiler_level
        self._aic_metrics = aic_metrics


class _TraceHandler:
    """What tensorboard_trace_handler returns: called with the profile on stop."""

    def __init__(self, dir_name: str | None, worker_name: str | None, analyse_flag: bool) -> None:
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.analyse_flag = analyse_flag

    def __call__(self, prof: profile) -> None:
        root = Path(self.dir_name or os.getcwd())
        written = _write_output(root, prof, self.worker_name, self.analyse_flag)
        torch_npu.record("export", dir=str(written), phases=prof.phases)


def tensorboard_trace_handler(
    dir_name: str | None = None,
    worker_name: str | None = None,
    analyse_flag: bool = True,
    async_mode: bool = False,
) -> _TraceHandler:
    torch_npu.record(
        "tensorboard_trace_handler",
        dir_name=dir_name,
        worker_name=worker_name,
        analyse_flag=analyse_flag,
        async_mode=async_mode,
    )
    return _TraceHandler(dir_name, worker_name, analyse_flag)


def schedule(
    wait: int,
    active: int,
    warmup: int = 0,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Any:
    def action(step: int) -> str:
        return "RECORD"

    return action


class profile:
    def __init__(
        self,
        *,
        activities: Any = None,
        schedule: Any = None,
        on_trace_ready: Any = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: _ExperimentalConfig | None = None,
        execution_trace_observer: Any = None,
        custom_trace_id_callback: Any = None,
    ) -> None:
        self.activities = list(activities) if activities else list(ProfilerActivity)
        self.experimental_config = experimental_config or _ExperimentalConfig()
        self.on_trace_ready = on_trace_ready
        self.phases: list[str] = []
        self.running = False
        torch_npu.record(
            "profile",
            activities=[str(a) for a in self.activities],
            schedule=schedule is not None,
            on_trace_ready=type(on_trace_ready).__name__,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            experimental_config=self.experimental_config.kwargs,
        )

    def start(self) -> None:
        self.running = True
        torch_npu.ACTIVE_PROFILERS.append(self)
        torch_npu.record("start")

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        torch_npu.ACTIVE_PROFILERS.remove(self)
        torch_npu.record("stop", phases=self.phases)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        torch_npu.record("step")

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _write_output(root: Path, prof: profile, worker_name: str | None, parse: bool) -> Path:
    from synth import Variant, scenarios, write_result_dir

    name = os.environ.get("FAKE_TORCH_NPU_SCENARIO", "warm_cold_runs")
    built = getattr(scenarios, name)()
    index = int(os.environ.get("OVERLAP_CHECK_RUN_INDEX", "1"))
    scenario = built.scenarios[(index - 1) % len(built.scenarios)]
    if os.environ.get("RANK"):
        scenario = dataclasses.replace(scenario, rank=int(os.environ["RANK"]))
    # torch_npu names it <worker_name or hostname>_<pid>_<timestamp>_ascend_pt.
    scenario = dataclasses.replace(scenario, pid=os.getpid())
    worker = worker_name or socket.gethostname()
    level = prof.experimental_config._profiler_level
    written = write_result_dir(scenario, root, Variant(level=level), worker=worker)
    damage_run, _, damage = os.environ.get("FAKE_TORCH_NPU_DAMAGE", "").partition(":")
    if damage_run == str(index):
        kernels = written / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
        kernels.write_text("" if damage == "empty" else "no,such,columns\n1,2,3\n")
    if not parse or os.environ.get("FAKE_TORCH_NPU_PARSE_FAIL") == "1":
        import shutil

        shutil.rmtree(written / "ASCEND_PROFILER_OUTPUT", ignore_errors=True)
        (written / "logs").mkdir(exist_ok=True)
        (written / "logs" / "parse.log").write_text("fake parse failure\n")
    return written
