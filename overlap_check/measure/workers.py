"""Captures reduced to their figures, by worker processes when the input pays for them.

One ``ProcessPoolExecutor`` task per capture read from disk, the biggest first and the captures
that share one kernel file (hard-linked ranks) one after another, so that each reducer parses
such a file once (readers.kernel_csv); the same pool takes the second reductions
(:func:`reduce_all`'s ``again``). A failure is data: the worker returns the tool's error, the
parent raises the first one in capture order. Workers are "spawn"ed: fork, or a forkserver
preloading polars, would copy a process whose polars threads already run (and on 2 cores a
forkserver saves CPU, not time: one interpreter imports polars before the first fork). A worker
sets its polars thread count (:func:`_start_worker`) before its first task starts polars' thread
pool."""

from __future__ import annotations

import atexit
import gc
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import replace
from multiprocessing import get_context
from types import FrameType
from typing import TYPE_CHECKING

from overlap_check import ALLOCATOR, allocator_is_ours
from overlap_check.model import Capture, DeviceCores, Options
from overlap_check.model.errors import InputError, OverlapCheckError, Terminated
from overlap_check.readers.discover import Source

if TYPE_CHECKING:
    from overlap_check.measure.cores import Limits
    from overlap_check.measure.figures import CaptureFigures, Mains

    Outcome = CaptureFigures | OverlapCheckError  # a reduction's figures, or its error

# Below this much kernel input (bytes of the kernel files, all captures together) the
# captures are reduced in this process alone: a worker costs ~0.7 s of a core to start
# (a fresh interpreter importing polars), and this process's polars already reads on
# every core. Measured on 2 cores (best of 3, kernel_details.csv): 4 x 126 MB serial
# 2.97 s, with a worker 3.22 s; 2 x 328 MB 3.67 s / 3.08 s; 5 x 328 MB 8.25 s / 6.22 s.
PARALLEL_MIN_BYTES = 600 * 2**20

# Importing polars, numpy and the engine allocates objects by the hundred thousand; at the
# default threshold (700) an analyze process ran ~120 collections while importing, ~4 %
# of a 1M-kernel analysis' CPU. The engine's work is in columns: it makes few objects.
# cli.main sets the same for the parent process.
GC_THRESHOLDS = (100_000, 50, 100)

WAIT_SLICE_S = 0.25  # how soon a Ctrl-C is answered while workers read

Job = Source | Capture  # a capture to read, or one in memory


def cpu_count() -> int:
    try:  # the cores this process may use (a CI runner may pin it to fewer)
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def input_bytes(jobs: Sequence[Job]) -> int:
    files = {
        f
        for s in jobs
        if isinstance(s, Source)
        for f in (s.primary, s.kernel_details, *s.op_summary, *s.dbs, *s.traces, *s.task_time)
        if f is not None
    }
    total = 0
    for file in files:
        with suppress(OSError):  # the reader names the file when it cannot read it
            total += file.stat().st_size
    return total


def worker_count(sources: Sequence[Source], requested: int | None) -> int:
    """Processes to reduce ``sources`` with (1: this process alone): as requested (at most
    one per capture), else one per core when there are several captures and enough input."""
    if requested is not None:
        return max(1, min(requested, len(sources)))
    if len(sources) < 2 or input_bytes(sources) < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(cpu_count(), len(sources)))


def _start_worker(threads: str) -> None:
    # Ctrl-C reaches the whole process group: the parent alone answers it (one message,
    # exit 130) and ends the workers (_end_workers); a worker would print a traceback.
    # SIGTERM keeps its default: the pool ends a broken pool's workers with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Before polars starts its pool: more polars threads than cores only make every capture
    # slower (2 cores, 5 x 1M kernels: ~5.6 s with 1-thread workers, ~6.6 s with 2-thread).
    os.environ.setdefault("POLARS_MAX_THREADS", threads)
    gc.set_threshold(*GC_THRESHOLDS)  # the worker's process is ours for good
    # spawn ends a worker with sys.exit after multiprocessing's own finalizers: a teardown
    # of its heap object by object, which the parent's shutdown waits for (~0.2 s)
    atexit.register(os._exit, 0)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Interrupted: drop the queued captures and end the workers (they ignore SIGINT)."""
    # no public handle on the processes before Python 3.14's terminate_workers()
    processes = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def _sigterm_ends_workers() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` here while captures are read, so that the parent
    ends its workers and says so before it exits. Left as it is where a caller handles
    SIGTERM itself (``run``'s forwarder) or off the main thread."""
    try:
        mine = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        previous = signal.signal(signal.SIGTERM, _terminated) if mine else None
    except ValueError:  # not the main thread: signals are not ours to handle
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def reduce_one(
    job: Job,
    options: Options,
    limits: Limits | None,
    info_cores: Sequence[Sequence[DeviceCores]] = (),
    mains: Mains | None = None,
) -> Outcome:
    """The figures of one capture (figures.capture_figures), or the tool's error (as data)."""
    from overlap_check.measure.figures import source_figures

    try:
        return source_figures(job, options, limits, info_cores, mains)
    except OverlapCheckError as err:
        return err


def reduce_all(
    jobs: Sequence[Job],
    options: Options,
    limits: Limits | None,
    workers: int,
    info_cores: Sequence[Sequence[DeviceCores]] = (),
    again: Callable[[Sequence[CaptureFigures]], dict[int, Mains]] | None = None,
) -> list[CaptureFigures]:
    """The figures of each job, in order; the first job (in order) that failed raises.
    ``info_cores``: every capture's info.json cores (figures.capture_figures). With
    ``workers`` > 1 the captures to read go to that many processes; captures in memory,
    and any a dead worker left, are reduced here. ``again``: given every job's figures, the
    jobs to reduce a second time, each with its mains (judge.decide.undecided)."""
    first: dict[int, Mains | None] = dict.fromkeys(_largest_first(jobs))
    remote = sum(not isinstance(job, Capture) for job in jobs)
    with _sigterm_ends_workers(), _pool(workers if remote > 1 else 1) as pool:
        outcomes = _reduce(pool, jobs, first, options, limits, info_cores)
        reduced = [o for k in range(len(jobs)) if not isinstance(o := outcomes[k], Exception)]
        if again is not None and len(reduced) == len(jobs):
            wanted = again(reduced)
            tasks = {k: wanted.get(k) for k in _largest_first(jobs) if k in wanted}
            for k, figures in _reduce(pool, jobs, tasks, options, limits, info_cores).items():
                outcomes[k] = _second(reduced[k], figures, jobs[k])
    out: list[CaptureFigures] = []
    for k in range(len(jobs)):  # the first failure in job order, as a serial read meets it
        outcome = outcomes[k]
        if isinstance(outcome, OverlapCheckError):
            raise outcome
        out.append(outcome)
    return out


def _second(first: CaptureFigures, second: Outcome, job: Job) -> Outcome:
    """The first reduction with the samples' figures of the second (which builds no others),
    unless the capture changed in between (the decisions were taken from the first)."""
    if isinstance(second, OverlapCheckError):
        return second
    if (first.streams, first.communication) != (second.streams, second.communication):
        return InputError(f"{job.path}: changed while it was read (read twice, streams differ)")
    return replace(first, samples=second.samples)


def _reduce(
    pool: ProcessPoolExecutor | None,
    jobs: Sequence[Job],
    tasks: dict[int, Mains | None],
    options: Options,
    limits: Limits | None,
    info_cores: Sequence[Sequence[DeviceCores]],
) -> dict[int, Outcome]:
    """The outcome of each task (job position -> its mains), in ``pool`` where one is given
    and it can take them, else here."""
    done: dict[int, Outcome] = {}
    if pool is not None:
        try:
            futures = {
                k: pool.submit(reduce_one, jobs[k], options, limits, info_cores, mains)
                for k, mains in tasks.items()
                if not isinstance(jobs[k], Capture)
            }
            for k, future in futures.items():
                # in short slices: a SIGINT that lands on one of the pool's threads is
                # acted on only when this thread wakes up
                while not future.done():
                    wait([future], timeout=WAIT_SLICE_S)
                done[k] = future.result()
        except (BrokenProcessPool, RuntimeError, OSError):
            pass  # no worker could take them (died, or a daemon may not start any): here
    for k, mains in tasks.items():
        if k not in done:
            done[k] = reduce_one(jobs[k], options, limits, info_cores, mains)
    return done


@contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor | None]:
    """A pool of ``workers`` processes (None: one, this process), ended on an interrupt."""
    if workers < 2:
        yield None
        return
    threads = str(max(1, cpu_count() // workers))
    # Workers keep polars' allocator defaults: with a 0.1 s decay they fault pages in again
    # for each capture (40 x 200k: +0.5 s). Their environment is this process's at spawn.
    if allocator_is_ours():  # this process read it as polars loaded: it goes for good
        del os.environ[ALLOCATOR[0]]
    try:
        pool = ProcessPoolExecutor(
            workers, mp_context=get_context("spawn"), initializer=_start_worker, initargs=(threads,)
        )
    except (RuntimeError, OSError):  # no semaphores here, or a daemon: no pool
        yield None
        return
    with pool:
        try:
            yield pool
        except KeyboardInterrupt:  # Terminated (SIGTERM) too
            _end_workers(pool)
            raise  # the CLI's one message and exit 130 (143)


def _largest_first(jobs: Sequence[Job]) -> list[int]:
    """Positions of ``jobs`` in the order they are reduced: the biggest input first (the
    last capture read decides when all are done), the captures of one kernel file together."""
    groups: dict[object, list[int]] = {}
    for i, job in enumerate(jobs):
        key: object = i
        kernel_file = job.primary or job.kernel_details if isinstance(job, Source) else None
        with suppress(OSError):  # unreadable: a group of its own (the reader names it)
            if kernel_file is not None:
                stat = kernel_file.stat()
                key = (stat.st_dev, stat.st_ino)
        groups.setdefault(key, []).append(i)
    ranked = sorted(groups.values(), key=lambda group: -input_bytes([jobs[i] for i in group]))
    return [i for group in ranked for i in group]
