"""What a synthetic capture is made of: kernels, communication ops, non-kernel tasks.

Times are exact integer nanoseconds on the capture's own clock (local Unix
epoch). Writers turn them into the profiler's text formats; nothing here knows
a file format except the small naming tables at the bottom, which say how one
task kind is spelled in each file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ACCELERATOR_CORES = ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU", "DSA_SQE")
VERSIONS = ("2023", "2025", "2026")
LEVELS = ("Level0", "Level1", "Level2")


@dataclass(frozen=True)
class Kernel:
    """One device kernel (kernel_details, trace, db, op_summary, task_time)."""

    name: str  # aclnn-style name, e.g. "aclnnGroupedMatmulV5_GroupedMatmul_GroupedMatmul"
    stream_id: int
    start_ns: int  # absolute local-epoch ns, e.g. 1_736_408_883_704_643_212
    duration_ns: int
    accelerator_core: str = "AI_CORE"
    op_type: str | None = None  # default derived from name (see op_type_of)
    block_num: int = 0
    mix_block_num: int = 0
    step: int | None = None
    input_shapes: str | None = None  # Input Shapes as written (None: the op type's default)

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


@dataclass(frozen=True)
class CommOp:
    """A communication op: a kernel_details row with Stream ID N/A (HCCL/COMMUNICATION)."""

    name: str  # "hcom_allReduce__868_0_1"
    start_ns: int
    duration_ns: int
    step: int | None = None

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


@dataclass(frozen=True)
class Task:
    """A non-kernel task: written only to trace_view.json, task_time and db TASK.

    ``kind``: "EVENT_WAIT_SQE", "EVENT_RECORD_SQE", "MEMCPY_ASYNC", "SDMA_SQE",
    "Notify Wait", "SDMA", "Write Value", "PLACE_HOLDER_SQE", "PROFILING_ENABLE",
    "PROFILING_DISABLE", "TASK_TIMEOUT_SET" (others are written verbatim).
    """

    kind: str
    stream_id: int
    start_ns: int
    duration_ns: int

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns


@dataclass(frozen=True)
class Scenario:
    """One run of one rank."""

    name: str
    kernels: tuple[Kernel, ...]
    communication: tuple[CommOp, ...] = ()
    tasks: tuple[Task, ...] = ()
    rank: int = 0
    device: int = 0
    aicore: int = 24  # device cores written to PROF_*/device_N/info.json.N
    vectorcore: int = 48
    capture_end_ns: int | None = None  # default: last end + 1 ms
    pid: int | None = None  # host process id; default derived from name and rank

    def end_ns(self) -> int:
        """profiler_info end_info.collectionTimeEnd."""
        if self.capture_end_ns is not None:
            return self.capture_end_ns
        ends = [k.end_ns for k in self.kernels] + [c.end_ns for c in self.communication]
        ends += [t.end_ns for t in self.tasks]
        return (max(ends) if ends else 1_736_400_000_000_000_000) + 1_000_000

    def start_ns(self) -> int:
        starts = [k.start_ns for k in self.kernels] + [c.start_ns for c in self.communication]
        starts += [t.start_ns for t in self.tasks]
        return min(starts) if starts else self.end_ns() - 1_000_000


@dataclass(frozen=True)
class Variant:
    """How one profiler version and level writes a capture (docs/formats.md)."""

    version: str = "2025"  # "2023" | "2025" | "2026"
    level: str = "Level1"  # "Level0" | "Level1" | "Level2"
    crlf: bool = True
    trace: bool = True  # trace_view.json
    db: bool = False  # ascend_pytorch_profiler_{rank}.db
    kernel_details: bool = True
    task_time: bool = False
    prof_dir: bool = True  # PROF_*/device_N/info.json.N (+ host/)
    quoted_start: bool = False  # "1736...212\t" quoted in kernel_details.csv
    msprof_output: bool = False  # keep PROF_*/mindstudio_profiler_output (no data simplification)

    def __post_init__(self) -> None:
        if self.version not in VERSIONS:
            raise ValueError(f"Variant.version must be one of {VERSIONS}, not {self.version!r}")
        if self.level not in LEVELS:
            raise ValueError(f"Variant.level must be one of {LEVELS}, not {self.level!r}")

    @property
    def level0(self) -> bool:
        return self.level == "Level0"


_TRAILING_INDEX = re.compile(r"^\d+$")


def op_type_of(name: str) -> str:
    """The operator type a profiler shows for a kernel name.

    aclnn names end in the type (``aclnnMatmul_MatMulV3Common_MatMulV3`` -> MatMulV3);
    ``trans_TransData_3`` drops the trailing index; ``hcom_allReduce__868_0_1`` ->
    ``hcom_allReduce_`` as in real communication rows.
    """
    if name.startswith("hcom_") and "__" in name:
        return name.split("__", 1)[0] + "_"
    parts = [p for p in name.split("_") if p]
    while len(parts) > 1 and _TRAILING_INDEX.match(parts[-1]):
        parts.pop()
    return parts[-1] if parts else name


# ----------------------------------------------------------------- how tasks are spelled


@dataclass(frozen=True)
class TaskSpelling:
    trace_name: str  # event name in Ascend Hardware
    trace_type: str  # args "Task Type" (2025 torch_npu)
    msprof_type: str  # args "Task Type" in 2026 files, task_time kernel_type
    db_type: str  # TASK.taskType string


TASK_SPELLINGS: dict[str, TaskSpelling] = {
    "EVENT_WAIT_SQE": TaskSpelling("EVENT_WAIT", "EVENT_WAIT_SQE", "EVENT_WAIT_SQE", "EVENT_WAIT"),
    "EVENT_RECORD_SQE": TaskSpelling(
        "EVENT_RECORD", "EVENT_RECORD_SQE", "EVENT_RECORD_SQE", "EVENT_RECORD"
    ),
    "MEMCPY_ASYNC": TaskSpelling("MEMCPY_ASYNC", "PCIE_DMA_SQE", "PCIE_DMA_SQE", "MEMCPY_ASYNC"),
    "SDMA_SQE": TaskSpelling("MEMCPY_ASYNC", "SDMA_SQE", "SDMA_SQE", "MEMCPY_ASYNC"),
    "Notify Wait": TaskSpelling("Notify Wait", "Notify Wait", "Notify Wait", "Notify Wait"),
    "SDMA": TaskSpelling("SDMA", "SDMA", "SDMA", "SDMA"),
    "Write Value": TaskSpelling("Write Value", "Write Value", "Write Value", "Write Value"),
    "PLACE_HOLDER_SQE": TaskSpelling(
        "EVENT_RECORD", "PLACE_HOLDER_SQE", "PLACE_HOLDER_SQE", "EVENT_RECORD"
    ),
    "PROFILING_ENABLE": TaskSpelling(
        "PROFILING_ENABLE", "PLACE_HOLDER_SQE", "PROFILING_ENABLE", "PROFILING_ENABLE"
    ),
    "PROFILING_DISABLE": TaskSpelling(
        "PROFILING_DISABLE", "PLACE_HOLDER_SQE", "PROFILING_DISABLE", "PROFILING_DISABLE"
    ),
    "TASK_TIMEOUT_SET": TaskSpelling(
        "TASK_TIMEOUT_SET", "TASK_TIMEOUT_SET", "TASK_TIMEOUT_SET", "TASK_TIMEOUT_SET"
    ),
}
TASK_SPELLINGS["EVENT_WAIT"] = TASK_SPELLINGS["EVENT_WAIT_SQE"]
TASK_SPELLINGS["EVENT_RECORD"] = TASK_SPELLINGS["EVENT_RECORD_SQE"]


def task_spelling(kind: str) -> TaskSpelling:
    return TASK_SPELLINGS.get(kind, TaskSpelling(kind, kind, kind, kind))


# kernel Accelerator Core -> hardware Task Type in 2025 traces (vector kernels show AI_CORE)
TRACE_TYPE_2025 = {"AI_VECTOR_CORE": "AI_CORE"}
# kernel Accelerator Core -> db TASK.taskType
DB_TASK_TYPE = {
    "AI_CORE": "KERNEL_AICORE",
    "AI_VECTOR_CORE": "KERNEL_AIVEC",
    "MIX_AIC": "MIX_AIC",
    "MIX_AIV": "MIX_AIV",
    "AI_CPU": "KERNEL_AICPU",
    "DSA_SQE": "STARS_COMMON",
}
