"""Fault injection for `overlap-check run`: SIGINT / SIGTERM at seeded random moments.

Each trial starts a short stand-in session (2 runs of a workload that imports the
fake torch_npu), sends one or two signals at a moment drawn from a seeded
generator (anywhere from the command's first line to past its end), and checks
what the contract promises at every moment: no traceback; exit 130 (or the
gate's 0/1 when the signal came after the report); a manifest that is never left
``running``, whose completed runs are listed with their result dirs.
"""

from __future__ import annotations

import importlib.util
import random
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from overlap_check.runner.manifest import MANIFEST_NAME, read_manifest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").is_file(), reason="needs /proc to see the handlers installed"
)

_spec = importlib.util.spec_from_file_location(
    "overlap_check_fault_harness", Path(__file__).parent / "standins" / "harness.py"
)
assert _spec is not None and _spec.loader is not None
HARNESS = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(HARNESS)

SEED = 17
TRIALS = 24
PARALLEL = 4
LATEST_S = 4.0  # signals are drawn in [0, LATEST_S] s after the command's first line
WORKLOAD = "import time, torch_npu\ntorch_npu.phase('generate')\ntime.sleep(0.2)\n"


@dataclass(frozen=True)
class Trial:
    number: int
    signals: tuple[signal.Signals, ...]
    delay_s: float  # after the first progress line
    gap_s: float  # between the first and a second signal


def draw(rng: random.Random, number: int) -> Trial:
    first = rng.choice((signal.SIGINT, signal.SIGTERM))
    signals = (
        (first,) if rng.random() < 0.75 else (first, rng.choice((signal.SIGINT, signal.SIGTERM)))
    )
    return Trial(number, signals, rng.uniform(0.0, LATEST_S), rng.uniform(0.0, 0.3))


def handling_sigterm(pid: int) -> None:
    """Wait until the process catches SIGTERM (only `run`'s handler does: Python does not)."""
    status = Path(f"/proc/{pid}/status")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            caught = next(x for x in status.read_text().splitlines() if x.startswith("SigCgt:"))
        except (OSError, StopIteration):
            return  # it has already exited
        if int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.01)
    raise AssertionError("the command never installed its SIGTERM handler")


REPORT_STATUS = re.compile(r"^overlap-check \S+: (PASS|FAIL) \(exit [01]\)$", re.M)


def run_trial(trial: Trial, root: Path) -> str | None:
    """One trial; the reason it broke the contract, or None."""
    tmp = root / f"trial-{trial.number}"
    tmp.mkdir()
    out = tmp / "out"
    # -q: the workload's output (its own KeyboardInterrupt traceback) goes to its log.
    argv = ["run", "-q", "--out", str(out), "--runs", "2", "--", sys.executable, "-c", WORKLOAD]
    proc = subprocess.Popen(
        [sys.executable, "-m", "overlap_check", *argv],
        env=HARNESS.standin_env(tmp),
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    handling_sigterm(proc.pid)  # the command runs: its handlers are in place
    time.sleep(trial.delay_s)
    sent = False
    for number, signum in enumerate(trial.signals):
        if number:
            time.sleep(trial.gap_s)
        if proc.poll() is None:
            proc.send_signal(signum)
            sent = True
    stdout, stderr = proc.communicate(timeout=120)
    where = f"trial {trial} (rc {proc.returncode}):\n{stderr[-1500:]}"
    if "Traceback" in stderr:
        return f"a traceback in {where}"
    # the report's status line (two runs: a PROVISIONAL line comes before it)
    finished = proc.returncode in (0, 1) and bool(REPORT_STATUS.search(stdout))
    if proc.returncode != 130 and not finished:
        return f"exit code not 130 in {where}"
    if not sent and not finished:
        return f"no signal sent, yet not finished: {where}"
    if not out.exists():
        return None  # interrupted before the session began: nothing written
    if not (out / MANIFEST_NAME).is_file():
        return f"{out} without a manifest in {where}"
    manifest = read_manifest(out)
    if manifest.status == "running" or any(r.status == "running" for r in manifest.runs):
        return f"manifest left running in {where}"
    if finished and manifest.status != "complete":
        return f"a report but the manifest says {manifest.status} in {where}"
    for record in manifest.runs:
        if record.status == "ok" and not all((out / d).is_dir() for d in record.result_dirs):
            return f"run {record.index} listed ok without its result dirs in {where}"
    if proc.returncode == 130 and "interrupted" not in stderr:
        return f"exit 130 without saying so in {where}"
    return None


def test_signals_at_random_moments_always_end_cleanly(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    trials = [draw(rng, n) for n in range(TRIALS)]
    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = [p for p in pool.map(lambda t: run_trial(t, tmp_path), trials) if p]
    assert problems == [], "\n\n".join(problems)
