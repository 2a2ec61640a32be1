"""Timing whole processes: wall time from spawn to exit, CPU time and peak RSS.

Wall time is ``perf_counter`` around spawn and reap; CPU time (user + system)
comes from ``os.wait4``'s rusage, which includes the children a process reaped.

Peak RSS cannot come from that rusage: Linux records the hiwater RSS of the
address space a process had *before* ``exec`` into its ``maxrss``, and a child
forked from this (large) benchmark process starts with the parent's RSS. So
every command runs under a small wrapper that forks it: GNU ``/usr/bin/time``
(``%M``, "Maximum resident set size") when present, else a tiny ``python -S``
wrapper reporting ``getrusage(RUSAGE_CHILDREN).ru_maxrss``. The wrapper's own
start (a millisecond for ``time``) is inside the wall figure.
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


class BenchError(RuntimeError):
    """A benchmarked command failed (its exit code was not an accepted one)."""


@dataclass(frozen=True)
class Sample:
    wall_s: float
    cpu_s: float  # user + system of the child (and children it reaped)
    maxrss_bytes: int
    rc: int


@dataclass(frozen=True)
class Measure:
    label: str
    argv: tuple[str, ...]
    samples: tuple[Sample, ...]
    stdout: str = ""  # of the first run
    stderr_tail: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def best_s(self) -> float:
        return min(s.wall_s for s in self.samples)

    @property
    def median_s(self) -> float:
        return statistics.median(s.wall_s for s in self.samples)

    @property
    def best_cpu_s(self) -> float:
        """CPU time of the fastest run."""
        return min(self.samples, key=lambda s: s.wall_s).cpu_s

    @property
    def peak_rss_bytes(self) -> int:
        return max(s.maxrss_bytes for s in self.samples)

    @property
    def cores_used(self) -> float:
        """CPU seconds per wall second of the fastest run (2.0 = both cores busy)."""
        best = min(self.samples, key=lambda s: s.wall_s)
        return best.cpu_s / best.wall_s if best.wall_s > 0 else 0.0

    def command(self, replace: Sequence[tuple[str, str]] = ()) -> str:
        text = shlex.join(self.argv)
        for old, new in replace:
            text = text.replace(old, new)
        return text


def child_env() -> dict[str, str]:
    """The environment children run with.

    PYTHONDONTWRITEBYTECODE is removed: with it every process compiles every
    imported module of an editable install from source, which no installed
    package does (pip compiles bytecode at install time).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


GNU_TIME = Path("/usr/bin/time")
# Fallback wrapper: run argv[2:] as a child, write its peak RSS (KiB) to argv[1].
_PY_WRAPPER = (
    "import os, resource, sys\n"
    "pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status = os.waitpid(pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)\n"
)


def _wrapped(argv: Sequence[str], rss_file: str) -> list[str]:
    if GNU_TIME.is_file():
        return [str(GNU_TIME), "-f", "%M", "-o", rss_file, *argv]
    return [sys.executable, "-S", "-c", _PY_WRAPPER, rss_file, *argv]


def _peak_kib(rss_file: Path) -> int:
    """The last line of the wrapper's output (GNU time may write a status line first)."""
    try:
        lines = rss_file.read_text().split()
        return int(lines[-1]) if lines else 0
    except (OSError, ValueError):
        return 0


def run_once(argv: Sequence[str], *, env: dict[str, str] | None = None) -> tuple[Sample, str, str]:
    """Run ``argv`` once: its Sample, stdout and stderr (text)."""
    program = argv[0] if os.sep in argv[0] else (shutil.which(argv[0]) or argv[0])
    argv = [program, *argv[1:]]
    with (
        tempfile.TemporaryDirectory() as scratch,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        rss_file = Path(scratch) / "rss"
        start = time.perf_counter()
        proc = subprocess.Popen(
            _wrapped(argv, str(rss_file)), stdout=out, stderr=err, env=env or child_env()
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
        peak = _peak_kib(rss_file)
    sample = Sample(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        maxrss_bytes=peak * 1024,
        rc=proc.returncode,
    )
    return sample, stdout, stderr


def measure(
    label: str,
    argv: Sequence[str],
    repeat: int,
    *,
    ok_codes: Sequence[int] = (0,),
    env: dict[str, str] | None = None,
) -> Measure:
    """Run ``argv`` ``repeat`` times (at least once); BenchError on an unexpected exit code."""
    (found,) = measure_interleaved([(label, argv, ok_codes)], repeat, env=env)
    return found


Command = tuple[str, Sequence[str], Sequence[int]]  # label, argv, the exit codes it may give


def measure_interleaved(
    commands: Sequence[Command], repeat: int, *, env: dict[str, str] | None = None
) -> list[Measure]:
    """:func:`measure` of each command, their runs taken in turn (A B A B ...): a ratio of
    two of them is not skewed by the machine's speed drifting between two blocks of runs."""
    samples: list[list[Sample]] = [[] for _ in commands]
    first: list[tuple[str, str]] = [("", "")] * len(commands)
    for index in range(max(repeat, 1)):
        for k, (label, argv, ok_codes) in enumerate(commands):
            sample, stdout, stderr = run_once(argv, env=env)
            if sample.rc not in ok_codes:
                raise BenchError(
                    f"{label}: exit code {sample.rc} from {shlex.join(argv)}\n{stderr[-2000:]}"
                )
            if index == 0:
                first[k] = (stdout, stderr[-2000:])
            samples[k].append(sample)
    return [
        Measure(label, tuple(argv), tuple(runs), out, tail)
        for (label, argv, _), runs, (out, tail) in zip(commands, samples, first, strict=True)
    ]


def python_c(python: Path | str, code: str) -> list[str]:
    return [str(python), "-c", code]
