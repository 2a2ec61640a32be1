"""The library entry point: profiler output (or captures) in, one Report out.

``check(paths_or_captures, options)`` reduces every capture to its figures
(:mod:`overlap_check.figures`: read, busy sets, pair and plan figures, core
checks) and judges the figures of all runs here: warm-up discard, medians,
verdicts, barrier ranking, the gate. Captures given as PATHs are read and
reduced one at a time by this process and, when there are several and enough
input to pay for them (see :data:`PARALLEL_MIN_BYTES`), by worker processes too
(one per core less this one), each taking the next capture and returning only
its figures: no more kernel tables are in memory at once than there are
reducers. ``analyze_captures`` judges captures already in memory, in this process.

Stages: samples (runs or steps, warm flags) → stream level (busy sets, main
stream, pairs, parallelism) → core limits → plans (occurrences, placement,
barriers) → gate.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

from overlap_check.cores import Limits, configured_limits
from overlap_check.discover import Source, discover
from overlap_check.errors import OverlapCheckError
from overlap_check.figures import CaptureFigures, Hints, source_figures
from overlap_check.judge import judge
from overlap_check.model import Capture, Options, Report
from overlap_check.readers import capture_order, time_order
from overlap_check.sanity import check_report

if TYPE_CHECKING:
    from os import PathLike

# Below this much kernel input (bytes of the kernel files, all captures together) the
# captures are reduced in this process alone. A worker process costs ~0.7 s of a core to
# start (a fresh interpreter importing polars), and this process already keeps ~1.4 of 2
# cores busy (polars reads on every core), so a worker pays off only for long inputs.
# Measured on 2 cores (best of 3, kernel_details.csv): 4 x 126 MB serial 2.97 s, with a
# worker 3.22 s; 2 x 328 MB serial 3.67 s, with a worker 3.08 s; 5 x 328 MB 8.25 s / 6.22 s.
PARALLEL_MIN_BYTES = 600 * 2**20

Job = Source | Capture  # a capture to read in a worker, or one already in memory


@dataclass(frozen=True)
class Checked:
    """A Report and the captures it judged (in reading order, kernel tables dropped)."""

    report: Report
    captures: tuple[Capture, ...]


def check(
    paths_or_captures: Iterable[str | PathLike[str] | Capture],
    options: Options | None = None,
    *,
    workers: int | None = None,
) -> Report:
    """Analyse profiler output (paths) or already-read captures into a Report.

    ``workers``: processes reading PATHs (None: one per core, capped by the captures,
    and none for one capture or small input; 1: all in this process). Like every
    multiprocessing user, a script calling this at top level needs an
    ``if __name__ == "__main__":`` guard.
    """
    return check_paths(paths_or_captures, options, workers=workers).report


def analyze_captures(captures: Sequence[Capture], options: Options | None = None) -> Report:
    """Judge captures already in memory (runs of one workload, possibly several ranks)."""
    return check_paths(captures, options, workers=1).report


def check_paths(
    paths_or_captures: Iterable[str | PathLike[str] | Capture],
    options: Options | None = None,
    *,
    workers: int | None = None,
) -> Checked:
    """:func:`check`, also returning the captures' metadata (for stderr details)."""
    options = options or Options()
    items = list(paths_or_captures)
    held: list[Job] = [i for i in items if isinstance(i, Capture)]
    paths = [Path(i) for i in items if not isinstance(i, Capture)]
    # Errors are raised in the order a serial read-then-judge would meet them.
    per_path, discover_error = _discover(paths)
    limits, limits_error = _limits(options)
    sources = [s for found in per_path for s in found]
    with _Reducer(_worker_count(sources, workers), options, limits) as reducer:
        figures = reducer.figures([(job, None) for job in [*held, *sources]])
        if discover_error is not None:
            raise discover_error
        jobs: list[Job] = [*held, *sources]
        pairs = list(zip(figures, jobs, strict=True))
        loaded = _path_order(pairs[len(held) :], [len(f) for f in per_path], options)
        pairs = pairs[: len(held)] + loaded

        def redo(wrong: Sequence[tuple[int, Hints]]) -> list[CaptureFigures]:
            return reducer.figures([(pairs[i][1], hints) for i, hints in wrong])

        report = judge([f for f, _ in pairs], options, limits, limits_error, redo)
    return Checked(check_report(report), tuple(f.capture for f, _ in pairs))


def _discover(paths: Sequence[Path]) -> tuple[list[list[Source]], OverlapCheckError | None]:
    """Sources per PATH; a PATH that fails stops the list (its error comes after the reads
    of the PATHs before it, as readers.load_paths would raise it)."""
    found: list[list[Source]] = []
    for path in paths:
        try:
            found.append(discover(path))
        except OverlapCheckError as err:
            return found, err
    return found, None


def _limits(options: Options) -> tuple[Limits | None, OverlapCheckError | None]:
    try:
        return configured_limits(options), None
    except OverlapCheckError as err:  # raised where the core checks begin, after the reads
        return None, err


def _path_order(
    pairs: list[tuple[CaptureFigures, Job]], sizes: list[int], options: Options
) -> list[tuple[CaptureFigures, Job]]:
    """readers.load_paths' order: each PATH's captures by (rank, capture time), PATHs as
    given, or everything by capture time with ``order="time"``."""
    out: list[tuple[CaptureFigures, Job]] = []
    start = 0
    for size in sizes:
        out += sorted(pairs[start : start + size], key=lambda p: capture_order(p[0].capture))
        start += size
    if options.order == "time":
        out.sort(key=lambda p: time_order(p[0].capture))
    return out


# --------------------------------------------------------------------------- workers


def _cpu_count() -> int:
    try:  # the cores this process may use (a CI runner may pin it to fewer)
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _input_bytes(sources: Sequence[Source]) -> int:
    files = {
        f
        for s in sources
        for f in (s.primary, s.kernel_details, *s.op_summary, *s.dbs, *s.traces, *s.task_time)
        if f is not None
    }
    total = 0
    for file in files:
        try:
            total += file.stat().st_size
        except OSError:  # the reader names the file when it cannot read it
            continue
    return total


def _worker_count(sources: Sequence[Source], requested: int | None) -> int:
    if requested is not None:
        return max(1, min(requested, len(sources)))
    if len(sources) < 2 or _input_bytes(sources) < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(_cpu_count(), len(sources)))


class _Reducer:
    """Reduces captures to figures with ``workers`` reducers: this process and
    ``workers - 1`` worker processes, all taking the next capture from one queue.

    This process reduces too (it would only wait otherwise): on 2 cores one worker
    process starts while this one already reads, which hides the ~0.7 s a fresh
    interpreter takes to import polars. Workers are "spawn"ed: forking a process whose
    polars thread pool already runs can deadlock it, and spawn behaves the same on every
    OS (fork would start them in 0.03 s instead of 0.7 s, which this process hides).
    Each worker runs polars on ``cores // workers`` threads (unless POLARS_MAX_THREADS
    is set): this process already runs a pool as wide as the machine, and more threads
    than cores only make every capture slower (measured on 2 cores, 5 x 1M kernels,
    best of 5: ~5.6 s with a 1-thread worker, ~6.6 s with a 2-thread one, ~7.5 s
    serially).
    Captures already in memory are reduced here (shipping them would copy them).
    """

    def __init__(self, workers: int, options: Options, limits: Limits | None) -> None:
        self.options = options
        self.limits = limits
        self.processes = workers - 1
        self.threads = str(max(1, _cpu_count() // max(workers, 1)))
        self.pool = (
            ProcessPoolExecutor(self.processes, mp_context=get_context("spawn"))
            if self.processes > 0
            else None
        )

    def __enter__(self) -> _Reducer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _here(self, job: Job, hints: Hints | None) -> CaptureFigures:
        return source_figures(job, self.options, self.limits, hints)

    def figures(self, jobs: Sequence[tuple[Job, Hints | None]]) -> list[CaptureFigures]:
        """The figures of each job, in order. As in a serial loop, the first job (in order)
        that fails raises its error; no job after a failed one is started."""
        queue = _Queue(k for k, (job, _) in enumerate(jobs) if not isinstance(job, Capture))

        def feed() -> None:  # one more job to a worker process; called again when it is done
            if self.pool is None or (k := queue.take(remote=True)) is None:
                return
            job, hints = jobs[k]
            try:
                future = self.pool.submit(source_figures, job, self.options, self.limits, hints)
            except (BrokenProcessPool, RuntimeError, AssertionError, OSError):
                # no worker can take it (died, shut down, or this is a daemon process
                # that may not start any): the job is done here, below
                queue.record(k, None, remote=True)
                return

            def finished(future: Future[CaptureFigures]) -> None:
                result: CaptureFigures | BaseException | None = None  # None: redo it here
                if not future.cancelled():
                    error = future.exception()
                    result = future.result() if error is None else error
                queue.record(k, result, remote=True)
                feed()

            future.add_done_callback(finished)

        # Workers start on their first job, and take this environment with them.
        with _environment(POLARS_MAX_THREADS=os.environ.get("POLARS_MAX_THREADS", self.threads)):
            for _ in range(self.processes):
                feed()
        mine = [k for k, (job, _) in enumerate(jobs) if isinstance(job, Capture)]
        for k in chain(mine, iter(queue.take, None)):  # lazily: workers take jobs meanwhile
            try:
                queue.record(k, self._here(*jobs[k]))
            except Exception as err:  # raised below, in job order
                queue.record(k, err)
        done = queue.wait()
        out: list[CaptureFigures] = []
        for k, (job, hints) in enumerate(jobs):
            result = done.get(k)
            if result is None or isinstance(result, BrokenProcessPool):
                result = self._here(job, hints)  # a job no living worker finished
            if isinstance(result, BaseException):
                raise result
            out.append(result)
        return out


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _Queue:
    """Job numbers shared by this process and the workers' done-callbacks."""

    def __init__(self, jobs: Iterable[int]) -> None:
        self.jobs = deque(jobs)
        self.done: dict[int, CaptureFigures | BaseException | None] = {}
        self.failed = False
        self.remote = 0  # jobs handed to workers and not finished yet
        self.lock = threading.Condition()

    def take(self, remote: bool = False) -> int | None:
        with self.lock:
            if self.failed or not self.jobs:
                return None
            self.remote += remote
            return self.jobs.popleft()

    def record(
        self, k: int, result: CaptureFigures | BaseException | None, remote: bool = False
    ) -> None:
        with self.lock:
            self.done[k] = result
            self.remote -= remote
            if isinstance(result, BaseException) and not isinstance(result, BrokenProcessPool):
                self.failed = True  # jobs before it are all started: their errors come first
            self.lock.notify_all()

    def wait(self) -> dict[int, CaptureFigures | BaseException | None]:
        """The results once no worker holds a job any more."""
        with self.lock:
            self.lock.wait_for(lambda: self.remote == 0)
            return dict(self.done)
