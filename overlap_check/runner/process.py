"""Running the workload: its own process group, its output on our stderr, signals forwarded.

Why and what the user sees (Ctrl-C, a closed pipe, a full disk): docs/run.md, "Output, failures,
Ctrl-C". The forwarding waits for the workload to stop: its profiler exports at exit."""

from __future__ import annotations

import codecs
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

# What the n-th forwarded signal becomes: gentle first, then firmer.
ESCALATION = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
PUMP_GRACE_S = 10.0  # how long the output copy may outlive the workload


@dataclass(frozen=True)
class WorkloadResult:
    exit_code: int  # negative: killed by that signal (subprocess convention)
    seconds: float
    interrupted: bool  # a signal reached overlap-check while it ran
    problem: str | None = None  # why it never started (exit_code 127/126, the shell's codes)
    output_problem: str | None = None  # its output could not be shown or logged in full


class SignalForwarder:
    """SIGINT/SIGTERM for the whole ``run`` command, so that one at any moment ends in exit 130.

    While a workload runs: forward it to its process group (escalating). Inside
    :meth:`deferred` (the run loop, manifest writes): only record it. Elsewhere (options,
    judging): raise KeyboardInterrupt, once; later ones are ignored."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self.child: subprocess.Popen[bytes] | None = None
        self._previous: dict[int, Any] = {}
        self._deferring = 0
        self._raised = False

    @property
    def interrupted(self) -> bool:
        return bool(self.received)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        child = self.child
        if child is not None and child.poll() is None:
            escalation = ESCALATION[min(len(self.received), len(ESCALATION)) - 1]
            forwarded: int = signum if len(self.received) == 1 else escalation
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, forwarded)
            return
        if self._deferring or self._raised:
            return
        self._raised = True
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Signals inside the block are only recorded (and forwarded to a running workload)."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1

    @contextlib.contextmanager
    def installed(self, *, restore: bool = True) -> Iterator[SignalForwarder]:
        """Install the handlers. ``restore=False``: ignore both signals after the block, so
        that one arriving while the interpreter shuts down can neither kill it (exit -15)
        nor print a traceback; the command's exit code stands."""
        # Signal handlers can only be set from the main thread.
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        try:
            yield self
        finally:
            self._raised = True  # from here on, signals change nothing
            for number, previous in self._previous.items():
                signal.signal(number, previous if restore else signal.SIG_IGN)
            self._previous.clear()


class _Sink:
    """Where the workload's output goes: ``output``, or the log once ``output`` fails (a closed
    pipe, a full disk), else nowhere; the failed stream is pointed at /dev/null so that our
    own later writes and Python's final flush cannot fail either."""

    def __init__(self, output: IO[Any] | None, log_path: Path | None) -> None:
        self.output = output
        self.log_path = log_path
        self.log: IO[bytes] | None = None
        self.problem: str | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lock = threading.Lock()

    def write(self, chunk: bytes) -> None:
        with self._lock:
            if self.output is not None:
                try:
                    self.output.write(self._decoder.decode(chunk))
                    self.output.flush()
                    return
                except (OSError, ValueError) as err:  # ValueError: a closed stream
                    to_devnull(self.output)
                    self.output = None
                    self.problem = f"output stopped ({_reason(err)}); the rest went to the log"
            self._to_log(chunk)

    def _to_log(self, chunk: bytes) -> None:
        if self.log_path is None:
            return
        try:
            if self.log is None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                self.log = self.log_path.open("ab")
            self.log.write(chunk)
            self.log.flush()
        except OSError as err:
            self.problem = f"its output could not be logged ({_reason(err)}); the rest was dropped"
            self.log_path = None

    def close(self) -> None:
        if self.log is not None:
            with contextlib.suppress(OSError):
                self.log.close()


def to_devnull(stream: Any) -> None:
    """Point a standard stream's descriptor at /dev/null (nothing can read it any more)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _reason(err: BaseException) -> str:
    return getattr(err, "strerror", None) or str(err) or type(err).__name__


def _pump(source: IO[bytes], sink: _Sink) -> None:
    # A signal taken by this thread would not wake the main thread from waitpid(), so
    # the forwarding would wait for the workload's end: leave signals to the main thread.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    read1 = getattr(source, "read1", source.read)  # read1: what is there, without waiting
    for chunk in iter(lambda: read1(65536), b""):
        sink.write(chunk)
    source.close()


def _terminal_fd(stream: IO[Any] | None) -> int | None:
    """The stream's descriptor when it is a terminal (the workload then writes there itself)."""
    if stream is None:
        return None
    try:
        fd = stream.fileno()
        return fd if os.isatty(fd) else None
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
    """Run ``argv`` to completion, its output to ``output`` (a terminal handed over as is, anything
    else copied by :class:`_Sink`), or to ``log_path`` (``-q``, or once ``output`` fails). Never
    raises for the workload's failure (not found: exit code 127, not executable: 126)."""
    if output is not None:
        output.flush()
    terminal = _terminal_fd(output)
    sink = _Sink(output, log_path)
    began = time.monotonic()
    pipe = subprocess.PIPE if terminal is None else terminal
    try:
        child = subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=pipe,
            stderr=subprocess.STDOUT if terminal is None else terminal,  # one pipe keeps the order
            start_new_session=True,
        )
    except OSError as err:  # the shell's codes: 127 not found, 126 not executable
        code, why = 127, f"command not found: {argv[0]}"
        if not isinstance(err, FileNotFoundError):  # PermissionError, ENOEXEC ...
            code, why = 126, f"cannot execute {argv[0]}: {_reason(err)}"
        return WorkloadResult(code, time.monotonic() - began, forwarder.interrupted, problem=why)
    forwarder.child = child
    pump = None
    try:
        if child.stdout is not None:
            pump = threading.Thread(target=_pump, args=(child.stdout, sink), daemon=True)
            pump.start()
        exit_code = _wait(child)
        if pump is not None:  # a process the workload left behind may hold the pipe: not forever
            pump.join(timeout=PUMP_GRACE_S)
    finally:
        forwarder.child = None
        sink.close()
    return WorkloadResult(
        exit_code, time.monotonic() - began, forwarder.interrupted, output_problem=sink.problem
    )


def _wait(child: subprocess.Popen[bytes]) -> int:
    """``child.wait()`` in short slices: a signal taken by another thread (polars' threads)
    does not interrupt a blocking waitpid(), and the handler must run meanwhile."""
    while True:
        try:
            return child.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue


def describe_exit(exit_code: int) -> str:
    """``exit code 3`` or ``killed by SIGKILL``."""
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        return f"killed by {name}"
    return f"exit code {exit_code}"
