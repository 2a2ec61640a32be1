"""Benchmark inputs, generated with the project's own generator and cached.

Every input is a folder under the cache (``bench/.cache`` by default) with a
``done.json`` written last: it holds the input's key (its sizes and a hash of
the generator's source) and facts measured while generating (file sizes, exact
figures). A folder whose ``done.json`` is missing or holds another key is
generated again, so an interrupted or outdated input is never used.

Generation is the slow part of a first ``make bench`` (writing a million rows
of kernel_details.csv takes tens of seconds), so big files are written once and
hard-linked where only the metadata differs: the runs of case 3 share case 1's
kernel_details.csv, and the ranks of case 4 share each run's file. Each run and
rank still gets its own result dir (own profiler_info with its rank and capture
time, own PROF_* dir) written by ``synth.layout``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from synth import layout
from synth.big import big_capture, big_frames
from synth.model import Scenario, Variant

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = REPO / "bench" / ".cache"
KERNEL_DETAILS = "kernel_details.csv"
TRACE_VIEW = "trace_view.json"
OUTPUT = "ASCEND_PROFILER_OUTPUT"
MINUTE_NS = 60_000_000_000
BASE_PID = 3_096_504
LEVEL0 = Variant(level="Level0", trace=True)  # kernel_details without Stream ID + trace_view
METADATA_ONLY = Variant(trace=False, kernel_details=False)
_KEY_VERSION = 1  # bump when the layout of the cache changes
GENERATION_S: list[float] = []  # seconds spent building inputs in this process


def generator_hash() -> str:
    """Hash of the generator's and the Kineto writer's source: a change regenerates inputs."""
    digest = hashlib.sha256()
    sources = sorted((REPO / "overlap_check" / "synth").glob("*.py"))
    sources += [REPO / "bench" / "inputs.py", REPO / "bench" / "peers" / "kineto.py"]
    for path in sources:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cached(
    folder: Path, key: dict[str, Any], build: Callable[[Path], dict[str, Any]]
) -> dict[str, Any]:
    """``folder``'s facts: read from its done.json when the key matches, else built afresh.

    The returned dict holds ``generated_s`` (0.0 when it came from the cache).
    """
    import time

    full_key = {**key, "generator": generator_hash(), "layout": _KEY_VERSION}
    done = folder / "done.json"
    if done.is_file():
        try:
            saved = json.loads(done.read_text())
        except ValueError:
            saved = {}
        if saved.get("key") == full_key:
            return {**saved["facts"], "generated_s": 0.0}
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    start = time.perf_counter()
    facts = build(folder)
    elapsed = time.perf_counter() - start
    GENERATION_S.append(elapsed)
    done.write_text(json.dumps({"key": full_key, "facts": facts}, indent=1))
    return {**facts, "generated_s": elapsed}


# ------------------------------------------------------------------ exact figures


def _busy_sets(kernels: pl.DataFrame) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per stream, the merged (start, end) int64 ns intervals of its compute kernels."""
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    compute = kernels.filter(pl.col("stream_id").is_not_null())
    for (sid,), group in compute.group_by(["stream_id"]):  # a few streams
        group = group.sort("start_ns")
        start = group.get_column("start_ns").to_numpy()
        end = start + group.get_column("dur_ns").to_numpy()
        reach = np.maximum.accumulate(end)
        new = np.concatenate([[True], start[1:] > reach[:-1]])
        blocks = np.cumsum(new) - 1
        merged_end = np.full(int(blocks[-1]) + 1, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(merged_end, blocks, end)
        out[int(str(sid))] = (start[new], merged_end)
    return out


def _intersection_ns(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """Length of the intersection of two disjoint sorted interval sets (exact int64)."""
    times = np.concatenate([a[0], a[1], b[0], b[1]])
    delta = np.concatenate(
        [np.ones(a[0].size), -np.ones(a[0].size), np.ones(b[0].size), -np.ones(b[0].size)]
    ).astype(np.int64)
    order = np.lexsort((delta, times))
    times, level = times[order], np.cumsum(delta[order])
    return int(np.diff(times)[level[:-1] >= 2].sum())


def exact_figures(kernels: pl.DataFrame) -> dict[str, Any]:
    """Ground truth from the generated int64 ns frame: busy ns per stream, and the
    overlap of the two busiest streams (what overlap-check calls main and side)."""
    sets = _busy_sets(kernels)
    busy = {sid: int((e - s).sum()) for sid, (s, e) in sets.items()}
    ranked = sorted(busy, key=lambda sid: -busy[sid])
    overlap = _intersection_ns(sets[ranked[0]], sets[ranked[1]]) if len(ranked) > 1 else 0
    names = kernels.get_column("name")
    return {
        "busy_ns": {str(sid): ns for sid, ns in sorted(busy.items())},
        "main": ranked[0],
        "side": ranked[1] if len(ranked) > 1 else None,
        "overlap_ns": overlap,
        "avg_name_bytes": float(names.str.len_bytes().cast(pl.Float64).mean() or 0.0),  # type: ignore[arg-type]
        "rows": kernels.height,
    }


# ------------------------------------------------------------------ the inputs


def _result_dir(root: Path) -> Path:
    (found,) = [p for p in root.iterdir() if p.is_dir()]
    return found


def _link_tree(src: Path, dst: Path) -> None:
    """Hard-link ``src``'s files into ``dst`` (same relative paths)."""
    for path in src.rglob("*"):
        target = dst / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)


def level1_capture(cache: Path, kernels: int) -> dict[str, Any]:
    """Case 1: a Level1 result dir with ``kernels`` kernels (big_capture, seed 0) and the
    exact figures of its kernels."""

    def build(folder: Path) -> dict[str, Any]:
        result = big_capture(folder / "capture", kernels)
        frames = big_frames(kernels)  # the same frames big_capture wrote (same seed)
        return {
            "result_dir": str(result.relative_to(folder)),
            "csv_bytes": (result / OUTPUT / KERNEL_DETAILS).stat().st_size,
            "exact": exact_figures(frames.kernels),
        }

    folder = cache / f"level1-{kernels}"
    facts = cached(folder, {"kernels": kernels}, build)
    facts["path"] = str(folder / facts["result_dir"])
    facts["csv"] = str(folder / facts["result_dir"] / OUTPUT / KERNEL_DETAILS)
    return facts


def kineto_trace(cache: Path, kernels: int) -> dict[str, Any]:
    """Case 7: the kernels of :func:`level1_capture` (same seed) as a Kineto trace, alone in
    its folder (HTA reads every ``*.json`` of a folder, one per rank)."""

    def build(folder: Path) -> dict[str, Any]:
        from bench.peers.kineto import write_kineto_trace

        frames = big_frames(kernels)
        trace = write_kineto_trace(frames.kernels, folder / "trace" / "rank0.json")
        return {"bytes": trace.stat().st_size}

    folder = cache / f"kineto-{kernels}"
    facts = cached(folder, {"kernels": kernels}, build)
    facts["path"] = str(folder / "trace")
    return facts


def _trace_bytes_per_kernel(probe_kernels: int, scratch: Path) -> float:
    probe = big_capture(scratch, probe_kernels, variant=LEVEL0)
    size = (probe / OUTPUT / TRACE_VIEW).stat().st_size
    shutil.rmtree(scratch)
    return size / probe_kernels


def level0_capture(cache: Path, trace_mb: float) -> dict[str, Any]:
    """Case 2: a Level0 result dir (kernel_details.csv without Stream ID, streams from
    trace_view.json) whose trace_view.json is about ``trace_mb`` MB (10^6 bytes)."""

    def build(folder: Path) -> dict[str, Any]:
        probe = max(1_000, min(20_000, int(trace_mb * 1_000)))
        per_kernel = _trace_bytes_per_kernel(probe, folder / "probe")
        kernels = max(1_000, round(trace_mb * 1e6 / per_kernel))
        result = big_capture(folder / "capture", kernels, variant=LEVEL0)
        frames = big_frames(kernels)
        return {
            "result_dir": str(result.relative_to(folder)),
            "kernels": kernels,
            "trace_bytes": (result / OUTPUT / TRACE_VIEW).stat().st_size,
            "csv_bytes": (result / OUTPUT / KERNEL_DETAILS).stat().st_size,
            "exact": exact_figures(frames.kernels),
        }

    folder = cache / f"level0-{trace_mb:g}MB"
    facts = cached(folder, {"trace_mb": trace_mb}, build)
    facts["path"] = str(folder / facts["result_dir"])
    facts["trace"] = str(folder / facts["result_dir"] / OUTPUT / TRACE_VIEW)
    return facts


@dataclass(frozen=True)
class _RunMeta:
    run: int  # 0-based
    rank: int


def _metadata_dir(root: Path, frames_end_ns: int, name: str, meta: _RunMeta, frames: Any) -> Path:
    """A result dir with the run's / rank's own metadata and no data files yet."""
    scenario = Scenario(
        name=name,
        kernels=(),
        rank=meta.rank,
        device=meta.rank,
        capture_end_ns=frames_end_ns + meta.run * MINUTE_NS,
        pid=BASE_PID + meta.rank,
    )
    return layout.write_frames_result_dir(scenario, frames, root, METADATA_ONLY)


def _capture_end(frames: Any) -> int:
    ends = frames.kernels.get_column("start_ns") + frames.kernels.get_column("dur_ns")
    return int(ends.max()) + 1_000_000


def _link_outputs(src_dir: Path, dst_dir: Path) -> None:
    (dst_dir / OUTPUT).mkdir(parents=True, exist_ok=True)
    for path in (src_dir / OUTPUT).iterdir():
        target = dst_dir / OUTPUT / path.name
        if not target.exists():
            os.link(path, target)


def repeated_runs(cache: Path, kernels: int, runs: int) -> dict[str, Any]:
    """Case 3: ``runs`` runs of ``kernels`` kernels. Run 1 is case 1's capture; runs 2..
    get their own metadata (capture time one minute apart) and share its kernel_details.csv
    through hard links (same bytes; the analysis of each run is independent)."""
    base = level1_capture(cache, kernels)

    def build(folder: Path) -> dict[str, Any]:
        frames = big_frames(kernels)
        end = _capture_end(frames)
        paths = []
        for run in range(runs):
            root = folder / f"run{run + 1}"
            if run == 0:
                target = root / Path(base["path"]).name
                _link_tree(Path(base["path"]), target)
            else:
                target = _metadata_dir(root, end, f"big-{kernels}", _RunMeta(run, 0), frames)
                _link_outputs(Path(base["path"]), target)
            paths.append(str(target.relative_to(folder)))
        return {"paths": paths}

    folder = cache / f"runs-{runs}x{kernels}"
    facts = cached(folder, {"kernels": kernels, "runs": runs}, build)
    facts["paths"] = [str(folder / p) for p in facts["paths"]]
    facts["exact"] = base["exact"]
    return facts


def cluster(cache: Path, ranks: int, runs: int, kernels: int) -> dict[str, Any]:
    """Case 4: ``ranks`` ranks x ``runs`` runs of ``kernels`` kernels under one folder.
    Each run has its own kernels (seed = run); the ranks of one run share that run's
    kernel_details.csv through hard links, each with its own profiler_info (rank_id)."""

    def build(folder: Path) -> dict[str, Any]:
        csv_bytes = 0
        for run in range(runs):
            frames = big_frames(kernels, seed=run)
            end = _capture_end(frames)
            first: Path | None = None
            for rank in range(ranks):
                root = folder / f"run{run + 1}" / f"rank{rank}"
                target = _metadata_dir(root, end, f"cluster-{kernels}", _RunMeta(run, rank), frames)
                if first is None:
                    scenario_variant = Variant(trace=False)
                    scenario = Scenario(
                        name=f"cluster-{kernels}",
                        kernels=(),
                        capture_end_ns=end + run * MINUTE_NS,
                        pid=BASE_PID,
                    )
                    written = layout.write_frames_result_dir(
                        scenario, frames, folder / "proto" / f"run{run + 1}", scenario_variant
                    )
                    first = written
                    csv_bytes += (written / OUTPUT / KERNEL_DETAILS).stat().st_size
                _link_outputs(first, target)
            if first is not None:
                shutil.rmtree(first.parent)  # the links keep the data
        shutil.rmtree(folder / "proto", ignore_errors=True)
        return {"csv_bytes_distinct": csv_bytes}

    folder = cache / f"cluster-{ranks}x{runs}x{kernels}"
    facts = cached(folder, {"ranks": ranks, "runs": runs, "kernels": kernels}, build)
    facts["path"] = str(folder)
    facts["captures"] = ranks * runs
    facts["kernels_total"] = ranks * runs * kernels
    return facts
