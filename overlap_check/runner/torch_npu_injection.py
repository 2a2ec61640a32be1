"""Zero-code torch_npu profiling: the environment that loads our payload, and its traces.

The payload (``inject/sitecustomize.py``), loaded by ``site`` from the folder put first on
PYTHONPATH and configured by the ``OVERLAP_CHECK_*`` variables below, reports what it did
per process in ``<run dir>/.overlap-check/payload-<pid>.jsonl``. Nothing here imports
torch_npu: we only prepare the environment and read what the workload left behind.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from overlap_check.model.errors import UsageError

# Must equal the names in inject/sitecustomize.py (a test keeps them equal).
ENV_RUN_DIR = "OVERLAP_CHECK_RUN_DIR"
ENV_LEVEL = "OVERLAP_CHECK_LEVEL"
ENV_WINDOW = "OVERLAP_CHECK_WINDOW"
ENV_RUN_INDEX = "OVERLAP_CHECK_RUN_INDEX"  # 1-based run number, for the workload's own use
ENV_PROFILER = "OVERLAP_CHECK_PROFILER"  # "torch" for torch.profiler on CUDA GPUs
ENV_WITH_STACK = "OVERLAP_CHECK_WITH_STACK"  # "1": torch.profiler with_stack (module: plans)
KINETO_SUFFIX = ".pt.trace.json"  # tensorboard_trace_handler's files (+ ".gz")
STATUS_DIR = ".overlap-check"
PAYLOAD_MODULE = "_overlap_check_payload"

INJECT_DIR = Path(__file__).resolve().with_name("inject")
RESULT_SUFFIX = "_ascend_pt"

# torch_npu's PathManager accepts only these characters in the output path (its
# realpath); with others tensorboard_trace_handler fails, and torch_npu only warns.
TORCH_NPU_PATH = re.compile(r"(\.|/|_|-|\s|[~0-9a-zA-Z]|[\u4e00-\u9fa5])+")
TORCH_NPU_MAX_PATH = 4096


def check_output_path(out_dir: Path) -> None:
    """Raise UsageError when torch_npu would refuse ``out_dir`` as its output path."""
    real = os.path.realpath(out_dir)
    if len(real) + len("/run-999") > TORCH_NPU_MAX_PATH or not TORCH_NPU_PATH.fullmatch(real):
        raise UsageError(
            f"torch_npu cannot write under {real}",
            hint="its output path may hold only letters, digits, spaces and . _ - / ~; "
            "choose another --out",
        )


def injection_env(
    base: Mapping[str, str],
    run_dir: Path,
    *,
    level: str,
    window: str,
    run_index: int,
    profiler: str = "torch_npu",
    with_stack: bool = False,
) -> dict[str, str]:
    """``base`` plus what loads and configures the payload; the user's PYTHONPATH is kept."""
    env = dict(base)
    user_path = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = str(INJECT_DIR) + (os.pathsep + user_path if user_path else "")
    env[ENV_RUN_DIR] = str(run_dir.resolve())
    env[ENV_LEVEL] = level
    env[ENV_WINDOW] = window
    env[ENV_RUN_INDEX] = str(run_index)
    env[ENV_PROFILER] = profiler
    if with_stack:
        env[ENV_WITH_STACK] = "1"
    return env


@dataclass(frozen=True)
class ProcessTrace:
    """What the payload did in one process of the workload."""

    pid: int
    argv: tuple[str, ...]
    events: tuple[str, ...]  # event names in order
    errors: tuple[str, ...]  # messages of "error" events

    @property
    def started(self) -> bool:
        return "profiler-started" in self.events

    @property
    def stopped(self) -> bool:
        return "profiler-stopped" in self.events


def read_process_traces(run_dir: Path) -> tuple[ProcessTrace, ...]:
    """The payload's status files of one run, by pid; unreadable lines are skipped."""
    traces = []
    for path in sorted((run_dir / STATUS_DIR).glob("payload-*.jsonl")):
        events: list[str] = []
        errors: list[str] = []
        argv: tuple[str, ...] = ()
        pid = 0
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a process killed mid-write leaves a torn last line
            if not isinstance(record, dict):
                continue
            event = str(record.get("event", ""))
            events.append(event)
            pid = int(record.get("pid", pid) or pid)
            if event == "payload-loaded" and isinstance(record.get("argv"), list):
                argv = tuple(str(a) for a in record["argv"])
            if event == "error":
                errors.append(f"{record.get('stage', '?')}: {record.get('message', '')}")
        traces.append(ProcessTrace(pid, argv, tuple(events), tuple(errors)))
    return tuple(traces)


def entries(run_dir: Path, keep: Callable[[Path], bool]) -> tuple[Path, ...]:
    """The entries of one run dir that ``keep`` selects, sorted by name."""
    return tuple(sorted(filter(keep, run_dir.iterdir()))) if run_dir.is_dir() else ()


def find_result_dirs(run_dir: Path) -> tuple[Path, ...]:
    """torch_npu result dirs (``*_ascend_pt``) written into one run dir."""
    return entries(run_dir, lambda p: p.is_dir() and p.name.endswith(RESULT_SUFFIX))


def find_kineto_traces(run_dir: Path) -> tuple[Path, ...]:
    """torch.profiler traces (``*.pt.trace.json[.gz]``) written into one run dir."""
    return entries(run_dir, lambda p: p.is_file() and KINETO_SUFFIX in p.name)


def is_parsed(result_dir: Path) -> bool:
    """torch_npu parsed the raw data (ASCEND_PROFILER_OUTPUT/ exists and is not empty)."""
    output = result_dir / "ASCEND_PROFILER_OUTPUT"
    return output.is_dir() and any(output.iterdir())


def explain_missing_profile(run_dir: Path, window: str, module: str = "torch_npu") -> str:
    """Why a run left no usable ``module`` (torch_npu or torch) profile, from the traces."""
    unparsed = [p for p in find_result_dirs(run_dir) if not is_parsed(p)]
    if unparsed:
        logs = unparsed[0] / "logs"
        return (
            f"torch_npu wrote {unparsed[0].name} but did not parse it (no "
            f"ASCEND_PROFILER_OUTPUT/); see {logs} and the workload's messages, or parse it "
            "offline with torch_npu.profiler.profiler.analyse()"
        )
    traces = read_process_traces(run_dir)
    if not traces:
        return (
            "the overlap-check payload was never loaded: the command started no Python "
            "process, or Python ran with -I/-E/-S or with a PYTHONPATH of its own "
            "(try --profiler msprof)"
        )
    if not any(f"{module}-imported" in t.events for t in traces):
        kind = "an Ascend" if module == "torch_npu" else "a PyTorch"
        return (
            f"{module} was never imported by the workload ({len(traces)} Python "
            f"process(es) started); is this {kind} workload?"
        )
    errors = [e for t in traces for e in t.errors]
    if errors:
        return f"{module}.profiler could not be used: {errors[0]}"
    if not any(t.started for t in traces):
        if window == "explicit":
            return "--window explicit, but no overlap_check.profile() block was entered"
        return f"{module} was imported only by launcher processes; no rank imported it"
    if not any(t.stopped for t in traces):
        return (
            "the profiler was started but never stopped: the process was killed or left "
            f"with os._exit(), so {module} exported nothing"
        )
    return (
        "the profiler was started and stopped but wrote no result dir; torch_npu may have "
        "failed to parse (see its messages above, and ASCEND_WORK_PATH/profiling_data)"
    )
