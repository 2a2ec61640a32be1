"""Ctrl-C while worker processes read captures: one message, exit 130, no traceback.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group, the workers
included. The command runs from a small driver script in a child process: spawned
workers import the driver's main module too, so its stand-in reader runs in them. The
first capture holds its worker until the worker is ended; the other worker reads the
four others and waits, idle, for more. Both states are covered: an idle worker is where
an unhandled KeyboardInterrupt prints a traceback, a busy one is what the parent must end.
The workers get a SIGINT of their own first, which they must ignore (whether a worker's
traceback reaches stderr before the parent ends it is a race; ignoring it is not).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# process groups and SIGINT to a group: POSIX only
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

DRIVER = """\
import multiprocessing
import os
import sys
import time
from pathlib import Path

from overlap_check.measure import figures, workers

BUSY = Path({busy!r})
HELD = {held!r}  # the capture that holds its worker
_read = figures.source_figures


def slow_read(source, *args, **kwargs):
    if multiprocessing.parent_process() is None:  # this process itself: never reached
        return _read(source, *args, **kwargs)
    if HELD in str(source.path):  # busy until it is ended
        (BUSY / f"held-{{os.getpid()}}").touch()
        time.sleep(600)
    figures_of = _read(source, *args, **kwargs)
    (BUSY / f"read-{{source.path.name}}-{{os.getpid()}}").touch()
    return figures_of


figures.source_figures = slow_read
workers.PARALLEL_MIN_BYTES = 0  # small fixtures still go to the workers
workers.cpu_count = lambda: 2

if __name__ == "__main__":
    from overlap_check.cli import cli

    cli(["analyze", *sys.argv[1:]], prog_name="overlap-check")
"""


SIGINT_BIT = 1 << (signal.SIGINT - 1)


def ignored_signals(pid: int) -> int:
    """The SigIgn mask of a process (Linux /proc; every bit set where there is none)."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return ~0
    for line in status.read_text().splitlines():
        if line.startswith("SigIgn:"):
            return int(line.split()[1], 16)
    return ~0


def test_ctrl_c_during_worker_reads_exits_130_with_one_message(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    driver = tmp_path / "driver.py"
    runs = sorted((FIXTURES / "warm-cold-runs").iterdir())  # five captures, two workers
    driver.write_text(DRIVER.format(busy=str(busy), held=runs[0].name), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(driver), *map(str, runs)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        deadline = time.monotonic() + 120  # starting two interpreters on a busy machine
        while len(list(busy.iterdir())) < 1 + 4:  # one held, four read
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the workers never read the captures"
            time.sleep(0.05)
        time.sleep(0.5)  # the reading worker has sent its last figures and waits for work
        pids = {int(mark.name.rsplit("-", 1)[1]) for mark in busy.iterdir()}
        assert len(pids) == 2  # both workers took part
        for pid in pids:
            assert SIGINT_BIT & ignored_signals(pid), f"worker {pid} does not ignore SIGINT"
            os.kill(pid, signal.SIGINT)  # the workers alone: they must take no notice
        # A worker that took it would end: the held read raising KeyboardInterrupt (its
        # figures an exception, which stops the command), the idle one dying (the pool
        # broken, the captures then read here and the command done).
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the parent and both workers
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.splitlines() == ["overlap-check: interrupted"]
    assert out == ""
    for pid in pids:  # the parent ended its workers before it exited
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"worker {pid} outlived the command")


@pytest.mark.parametrize("group", [False, True], ids=["parent", "process-group"])
def test_sigterm_during_worker_reads_ends_the_workers_and_exits_143(
    tmp_path: Path, group: bool
) -> None:
    """Before: SIGTERM to the parent ended it alone (exit 143, no message) and left the
    workers alive. A SIGTERM to the whole group (a container stop, ``timeout -s TERM``)
    must end the command the same way, not break the pool and read the captures here."""
    busy = tmp_path / "busy"
    busy.mkdir()
    driver = tmp_path / "driver.py"
    runs = sorted((FIXTURES / "warm-cold-runs").iterdir())
    driver.write_text(DRIVER.format(busy=str(busy), held=runs[0].name), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(driver), *map(str, runs)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(busy.glob("held-*")):  # the held capture keeps one worker busy
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no worker took the held capture"
            time.sleep(0.05)
        pids = {int(mark.name.rsplit("-", 1)[1]) for mark in busy.iterdir()}
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 143, err
    assert err.splitlines() == ["overlap-check: terminated"]
    assert out == ""
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"worker {pid} outlived the command")
