"""Profiling with the msprof CLI: its command line, its output, and choosing a profiler.

``msprof [options] <app>`` (docs/formats.md): ``--output=<dir>`` is where it
writes ``PROF_<6 digits>_<17-digit timestamp>_<16 alnum>/``; ``--task-time=l1``
(or ``l2``) records per-task timing with Stream IDs; ``--ai-core=on`` adds the
AI Core metrics (PipeUtilization by default).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, get_args

from overlap_check.runner.torch_npu_injection import entries

PROF_DIR = re.compile(r"^PROF_\d+_\d+_[0-9a-zA-Z]+$")
TASK_TIME = {"Level1": "l1", "Level2": "l2"}

# python, python3, python3.11, python3.13t, python.exe
PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?t?)?(\.exe)?$")

Profiler = Literal["torch_npu", "torch", "msprof"]
PROFILERS: tuple[Profiler, ...] = get_args(Profiler)


def msprof_argv(msprof: str, run_dir: Path, command: Sequence[str], level: str) -> list[str]:
    """``msprof --output=<run dir> --task-time=l1 --ai-core=on COMMAND ARGS...``."""
    return [
        msprof,
        f"--output={run_dir.resolve()}",
        f"--task-time={TASK_TIME.get(level, 'l1')}",
        "--ai-core=on",
        *command,
    ]


def find_msprof(env: Mapping[str, str]) -> str | None:
    """The msprof executable on the workload's PATH, or None."""
    return shutil.which("msprof", path=env.get("PATH", os.defpath))


def find_prof_dirs(run_dir: Path) -> tuple[Path, ...]:
    """msprof ``PROF_*`` dirs written into one run dir, sorted by name."""
    return entries(run_dir, lambda p: p.is_dir() and PROF_DIR.match(p.name) is not None)


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
    requested: str,
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    configured: str | None = None,
) -> tuple[Profiler, str]:
    """The profiler to use and why (one line for stderr).

    ``auto`` (else the config's ``[run] profiler``): torch for a Python command on a CUDA
    host; msprof when the command is not Python and msprof is on PATH; the torch_npu
    injection otherwise (it also reaches Python started by a shell script).
    """
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
