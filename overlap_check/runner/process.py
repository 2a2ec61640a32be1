"""Running the workload: its own process group, its output on our stderr, signals forwarded.

The workload starts in a new session (its own process group) so that a
Ctrl-C reaches overlap-check alone; overlap-check forwards it to the whole
group (a launcher and its ranks), waits for the workload to stop (the
profiler exports at exit), and only then reports the interruption. A second
Ctrl-C sends SIGTERM, a third SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from overlap_check.errors import UsageError

# What the n-th forwarded signal becomes: gentle first, then firmer.
ESCALATION = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)


@dataclass(frozen=True)
class WorkloadResult:
    exit_code: int  # negative: killed by that signal (subprocess convention)
    seconds: float
    interrupted: bool  # a signal reached overlap-check while it ran


class SignalForwarder:
    """Catches SIGINT/SIGTERM while installed; forwards them to the workload's group."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.child: subprocess.Popen[bytes] | None = None
        self._previous: dict[int, Any] = {}

    @property
    def interrupted(self) -> bool:
        return bool(self.received)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        child = self.child
        if child is None or child.poll() is not None:
            return
        escalation = ESCALATION[min(len(self.received), len(ESCALATION)) - 1]
        forwarded: int = signum if len(self.received) == 1 else escalation
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, forwarded)

    @contextlib.contextmanager
    def installed(self) -> Iterator[SignalForwarder]:
        # Signal handlers can only be set from the main thread.
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        try:
            yield self
        finally:
            for number, previous in self._previous.items():
                signal.signal(number, previous)
            self._previous.clear()


def _pump(source: IO[bytes], sink: IO[Any]) -> None:
    """Copy a pipe into a text or binary stream without a file descriptor (tests)."""
    buffer = getattr(sink, "buffer", None)
    read1 = getattr(source, "read1", source.read)  # read1: what is there, without waiting
    for chunk in iter(lambda: read1(65536), b""):
        if buffer is not None:
            buffer.write(chunk)
            buffer.flush()
        else:
            sink.write(chunk.decode("utf-8", errors="replace"))
            sink.flush()
    source.close()


def _fileno(stream: IO[Any]) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None


def run_workload(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    forwarder: SignalForwarder,
    output: IO[Any] | None,
    log_path: Path | None = None,
) -> WorkloadResult:
    """Run ``argv`` to completion; its stdout and stderr go to ``output`` (our stderr).

    ``output=None`` sends both to ``log_path`` instead (``-q``). Never raises for
    the workload's own failure; that is the exit code.
    """
    pumps: list[threading.Thread] = []
    log_handle = None
    if output is None:
        if log_path is None:
            target: int | IO[Any] = subprocess.DEVNULL
        else:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log_handle = log_path.open("ab")
            target = log_handle
        stdout: int | IO[Any] = target
        stderr: int | IO[Any] = target
    else:
        fd = _fileno(output)
        if fd is not None:
            output.flush()
            stdout = stderr = fd
        else:
            stdout = stderr = subprocess.PIPE
    began = time.monotonic()
    try:
        child = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    except FileNotFoundError as err:
        raise UsageError(
            f"command not found: {argv[0]}", hint="check the command after -- and PATH"
        ) from err
    except PermissionError as err:
        raise UsageError(f"command is not executable: {argv[0]}") from err
    finally:
        if log_handle is not None:
            log_handle.close()
    forwarder.child = child
    try:
        if output is not None and child.stdout is not None and child.stderr is not None:
            for pipe in (child.stdout, child.stderr):
                pump = threading.Thread(target=_pump, args=(pipe, output), daemon=True)
                pump.start()
                pumps.append(pump)
        exit_code = child.wait()
        for pump in pumps:
            pump.join()
    finally:
        forwarder.child = None
    return WorkloadResult(exit_code, time.monotonic() - began, forwarder.interrupted)


def describe_exit(exit_code: int) -> str:
    """``exit code 3`` or ``killed by SIGKILL``."""
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        return f"killed by {name}"
    return f"exit code {exit_code}"
