"""Ranks that share one kernel_details.csv by hard link (a cluster copied from one capture)
are parsed once per process, and judged exactly as if each had its own copy."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from overlap_check.judge import pipeline
from overlap_check.measure import workers
from overlap_check.model import Options, Plan
from overlap_check.readers import kernel_csv
from overlap_check.readers.discover import discover
from tests.test_scale import write_capture

# its main stream given: no capture is reduced a second time for its rank's (test_scale.py)
PLAN = Plan("swiglu", side="SwiGlu", dominator="GroupedMatmul", main_stream=2)
KERNEL_FILE = Path("ASCEND_PROFILER_OUTPUT") / "kernel_details.csv"


def _cluster(root: Path, link: bool) -> Path:
    """2 runs x 3 ranks; every rank of a run holds run's rank-0 kernel file."""
    for run in range(2):
        dirs = [write_capture(root, rank=r, run=run, streams=(2, 3), seed=run) for r in range(3)]
        for other in dirs[1:]:
            (other / KERNEL_FILE).unlink()
            (os.link if link else shutil.copyfile)(dirs[0] / KERNEL_FILE, other / KERNEL_FILE)
    return root


def test_hard_linked_ranks_are_parsed_once_and_judged_as_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    linked = _cluster(tmp_path / "linked", link=True)
    copied = _cluster(tmp_path / "copied", link=False)
    parsed: list[Path] = []
    parse = kernel_csv._read_kernel_csv

    def counted(path: Path, shapes: bool) -> kernel_csv.KernelFile:
        parsed.append(path)
        return parse(path, shapes)

    monkeypatch.setattr(kernel_csv, "_read_kernel_csv", counted)
    options = Options(plans=(PLAN,), warmup=0)
    expected = pipeline.check([copied], options, workers=1)
    assert len(parsed) == 6  # one link each: every file parsed
    parsed.clear()
    report = pipeline.check([linked], options, workers=1)
    assert len(parsed) == 2  # one per run
    assert [c.rank for c in pipeline.check_paths([linked], options, workers=1).captures] == [
        c.rank for c in pipeline.check_paths([copied], options, workers=1).captures
    ]
    assert report.plans == expected.plans and report.ranks == expected.ranks
    unnamed = [[replace(run, path="") for run in r.runs] for r in (report, expected)]
    assert unnamed[0] == unnamed[1]  # the same figures, but for the folder's name


def test_workers_take_the_ranks_of_one_file_one_after_another(tmp_path: Path) -> None:
    sources = discover(_cluster(tmp_path, link=True))
    order = [sources[i] for i in workers._largest_first(sources)]
    files = [(s.kernel_details or s.path).stat().st_ino for s in order]
    # each file's ranks together: as many changes of file as there are files, less one
    assert sum(a != b for a, b in pairwise(files)) == len(set(files)) - 1
