"""What each profiler of ``overlap-check run`` needs, and what it left in a run folder.

torch_npu and torch (CUDA): the environment that loads the payload (``inject/sitecustomize.py``)
and its per-process status lines, which explain a run without a profile; msprof: its command
line and its ``PROF_*`` output; for all: choosing one, and whether an export is whole. Nothing
here imports torch_npu. The commands, variables and files: docs/run.md."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from overlap_check.model.errors import UsageError

Profiler = Literal["torch_npu", "torch", "msprof"]
PROFILERS: tuple[Profiler, ...] = get_args(Profiler)

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
PROF_DIR = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")
TASK_TIME = {"Level1": "l1", "Level2": "l2"}

# python, python3, python3.11, python3.13t, python.exe
PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?t?)?(\.exe)?$")

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


def msprof_argv(msprof: str, run_dir: Path, command: Sequence[str], level: str) -> list[str]:
    """``msprof --output=<run dir> --task-time=l1 --ai-core=on COMMAND ARGS...``."""
    output = f"--output={run_dir.resolve()}"
    return [msprof, output, f"--task-time={TASK_TIME.get(level, 'l1')}", "--ai-core=on", *command]


def find_msprof(env: Mapping[str, str]) -> str | None:
    """The msprof executable on the workload's PATH, or None."""
    return shutil.which("msprof", path=env.get("PATH", os.defpath))


def is_python_command(argv0: str, env: Mapping[str, str]) -> bool:
    """A Python interpreter, a ``.py`` script, or a Python console script (torchrun ...)."""
    name = os.path.basename(argv0)
    if PYTHON_NAME.match(name) or name.endswith(".py"):
        return True
    resolved = shutil.which(argv0, path=env.get("PATH", os.defpath))
    if resolved is None:
        return False
    try:
        with open(resolved, "rb") as handle:
            first_line = handle.readline(256)
    except OSError:
        return False
    return first_line.startswith(b"#!") and b"python" in first_line


def cuda_host() -> bool:
    """An NVIDIA driver's device node and no Ascend one: ``auto`` then injects torch.profiler."""
    return Path("/dev/nvidiactl").exists() and not Path("/dev/davinci_manager").exists()


def choose_profiler(
    requested: str, command: Sequence[str], env: Mapping[str, str], *, configured: str | None = None
) -> tuple[Profiler, str]:
    """The profiler to use and why (one line for stderr); ``auto``'s order: docs/run.md."""
    if requested in PROFILERS:
        return requested, f"--profiler {requested}"
    if configured == "torch":
        return "torch", "[run] profiler"
    if configured in PROFILERS:
        return configured, f"the config asks for {configured} ([run] profiler)"
    name = os.path.basename(command[0])
    if is_python_command(command[0], env):
        if cuda_host():
            return "torch", f"{name} is Python, on a CUDA host"
        return "torch_npu", f"{name} is Python"
    if find_msprof(env) is not None:
        return "msprof", f"{name} is not Python"
    return (
        "torch_npu",
        f"{name} is not Python and msprof is not on PATH; injecting into any Python it starts",
    )


@dataclass(frozen=True)
class ProcessTrace:
    """What the payload did in one process of the workload."""

    pid: int
    argv: tuple[str, ...]
    events: tuple[str, ...]  # event names in order
    errors: tuple[str, ...]  # messages of "error" events


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
    return tuple(sorted(filter(keep, run_dir.iterdir()))) if run_dir.is_dir() else ()


def find_result_dirs(run_dir: Path) -> tuple[Path, ...]:
    """torch_npu result dirs (``*_ascend_pt``) written into one run dir."""
    return entries(run_dir, lambda p: p.is_dir() and p.name.endswith(RESULT_SUFFIX))


def find_kineto_traces(run_dir: Path) -> tuple[Path, ...]:
    """torch.profiler traces (``*.pt.trace.json[.gz]``) written into one run dir."""
    return entries(run_dir, lambda p: p.is_file() and KINETO_SUFFIX in p.name)


def find_prof_dirs(run_dir: Path) -> tuple[Path, ...]:
    """msprof ``PROF_*`` dirs written into one run dir."""
    return entries(run_dir, lambda p: p.is_dir() and PROF_DIR.match(p.name) is not None)


def is_parsed(result_dir: Path) -> bool:
    """torch_npu parsed the raw data (ASCEND_PROFILER_OUTPUT/ exists and is not empty)."""
    output = result_dir / "ASCEND_PROFILER_OUTPUT"
    return output.is_dir() and any(output.iterdir())


def is_exported(prof_dir: Path) -> bool:
    """msprof exported summaries or its database (not only raw data)."""
    patterns = ("op_summary_*.csv", "task_time_*.csv", "msprof_*.db", "msprof_*.json")
    return any(next(prof_dir.rglob(pattern), None) is not None for pattern in patterns)


def explain_missing_prof(run_dir: Path) -> str:
    """Why a run left no usable msprof output."""
    unexported = [p for p in find_prof_dirs(run_dir) if not is_exported(p)]
    if unexported:
        return (
            f"msprof collected {unexported[0].name} but exported nothing; run "
            f"`msprof --export=on --output={unexported[0]}` and see its "
            "mindstudio_profiler_log/"
        )
    return (
        "msprof wrote no PROF_* dir: the app may not have used the NPU, or msprof failed "
        "(see its messages above)"
    )


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
    if not any("profiler-started" in t.events for t in traces):
        if window == "explicit":
            return "--window explicit, but no overlap_check.profile() block was entered"
        return f"{module} was imported only by launcher processes; no rank imported it"
    if not any("profiler-stopped" in t.events for t in traces):
        return (
            "the profiler was started but never stopped: the process was killed or left "
            f"with os._exit(), so {module} exported nothing"
        )
    return (
        "the profiler was started and stopped but wrote no result dir; torch_npu may have "
        "failed to parse (see its messages above, and ASCEND_WORK_PATH/profiling_data)"
    )


# A profiler that hits a file-size limit (RLIMIT_FSIZE) or a full disk stops writing
# mid-file, often without failing the workload; judging what is left would pass or fail on
# a fraction of the kernels. Only the file ends are checked (cheap on big exports).
CHECKED = (".csv", ".json", ".db")
SQLITE_MAGIC = b"SQLite format 3\x00"
TAIL = 64  # bytes read from the end of each file


def cut_short(root: Path) -> str | None:
    """Why the export under ``root`` is not whole (naming the first bad file), or None."""
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in CHECKED or not path.is_file():
            continue
        try:
            why = _file_problem(path)
        except OSError as err:
            why = f"cannot be read ({err.strerror})"
        if why is not None:
            return f"{path} {why}: the export was cut short (a file-size limit, a full disk?)"
    return None


def _file_problem(path: Path) -> str | None:
    if (size := path.stat().st_size) == 0:
        return "is empty"
    suffix = path.suffix.lower()
    with path.open("rb") as handle:
        if suffix == ".db":
            return _sqlite_problem(handle.read(100), size)
        handle.seek(max(0, size - TAIL))
        tail = handle.read()
    if suffix == ".csv" and not tail.endswith(b"\n"):
        return "ends in the middle of a line"
    if suffix == ".json" and tail.rstrip()[-1:] not in (b"}", b"]"):
        return "ends in the middle of its JSON"
    return None


def _sqlite_problem(header: bytes, size: int) -> str | None:
    if not header.startswith(SQLITE_MAGIC) or len(header) < 100:
        return "is not a whole SQLite file"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count is valid only when the change counter equals the version-valid-for number.
    counted = header[24:28] == header[92:96]
    if counted and pages and size < pages * page_size:
        return f"holds {size} of the {pages * page_size} bytes its header counts"
    return None
