"""Directory trees as torch_npu and msprof write them (docs/formats.md).

``<host>_<pid>_<YYYYmmddHHMMSSfff>_ascend_pt/`` with ``profiler_info_{rank}.json``,
``profiler_metadata.json``, ``ASCEND_PROFILER_OUTPUT/``, empty ``FRAMEWORK/`` and
``logs/`` and ``PROF_000001_<17 digits>_<16 alnum>/``. Timestamps are UTC (as in
torch_npu <= 7.x) so output is the same bytes on every machine.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from synth import db, kernel_csv, msprof, op_statistic, rows, step_trace, trace
from synth.model import Scenario, Variant

HOST = "localhost.localdomain"
SESSION_LEAD_NS = 150_000_000  # profiling starts this long before the first device task
EXPORT_LAG_NS = 7_000_000_000  # msprof's export stamp comes a few seconds after the capture
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def default_pid(scenario: Scenario) -> int:
    if scenario.pid is not None:
        return scenario.pid
    return 3_000_000 + zlib.crc32(f"{scenario.name}/rank{scenario.rank}".encode()) % 600_000


def stamp17(ns: int) -> str:
    """YYYYmmddHHMMSSfff (UTC)."""
    moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc)
    return moment.strftime("%Y%m%d%H%M%S") + f"{(ns // 1_000_000) % 1000:03d}"


def session_start_ns(scenario: Scenario) -> int:
    return scenario.start_ns() - SESSION_LEAD_NS


def result_dir_name(scenario: Scenario, worker: str | None = None) -> str:
    worker_name = worker if worker is not None else HOST
    return f"{worker_name}_{default_pid(scenario)}_{stamp17(scenario.end_ns())}_ascend_pt"


def prof_dir_name(scenario: Scenario) -> str:
    pid = default_pid(scenario)
    code = zlib.crc32(f"{scenario.name}/{scenario.rank}/{scenario.end_ns()}".encode())
    letters = "".join(_LETTERS[(code >> (4 * i)) % 26] for i in range(8))
    return f"PROF_000001_{stamp17(session_start_ns(scenario))}_{pid:08d}{letters}"


def _schedule(steps: Sequence[tuple[int, int, int]], old: bool) -> dict[str, int]:
    first = steps[0][0] if steps else 0
    warmup = min(10, first)
    values = {
        "wait": 0,
        "active": max(len(steps), 1),
        "warmup": warmup,
        "repeat": 1,
        "skip_first": max(first - warmup, 0),
    }
    if old:
        order = ("wait", "warmup", "active", "repeat", "skip_first")
        return {f"_{key}": values[key] for key in order}
    return values


def _export_type(variant: Variant) -> list[str]:
    text = variant.kernel_details or variant.trace
    return (["text"] if text else []) + (["db"] if variant.db else [])


def profiler_info(
    scenario: Scenario, variant: Variant, steps: Sequence[tuple[int, int, int]]
) -> dict[str, Any]:
    """profiler_info_{rank}.json with the key set of the version (docs/formats.md)."""
    end = scenario.end_ns()
    start = session_start_ns(scenario)
    monotonic_end = 170_000_000_000_000 + end % 1_000_000_000_000
    monotonic_start = monotonic_end - (end - start)
    level = variant.level
    activities = ["ProfilerActivity.CPU", "ProfilerActivity.NPU"]
    common: dict[str, Any] = {
        "activities": activities,
        "schedule": _schedule(steps, variant.version == "2023"),
    }
    if variant.version == "2023":
        metrics = "ACL_AICORE_NONE" if variant.level0 else "ACL_AICORE_L0B_AND_WIDTH"
        common["on_trace_ready"] = {
            "_worker_name": f"{HOST}_{default_pid(scenario)}",
            "_dir_name": "/work/profiling",
        }
        common.update(
            record_shapes=True,
            profile_memory=False,
            with_stack=False,
            with_flops=False,
            with_modules=False,
        )
        experimental: dict[str, Any] = {
            "_profiler_level": level,
            "_aic_metrics": metrics,
            "_l2_cache": False,
            "_data_simplification": None,
            "record_op_args": False,
        }
        return {
            "config": {"common_config": common, "experimental_config": experimental},
            "end_info": {"collectionTimeEnd": end, "MonotonicTimeEnd": monotonic_end},
            "rank_id": scenario.rank,
        }
    common.update(
        record_shapes=True,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
    )
    metrics = "ACL_AICORE_NONE" if variant.level0 else "ACL_AICORE_PIPE_UTILIZATION"
    exports = _export_type(variant)
    experimental = {
        "_profiler_level": level,
        "_aic_metrics": metrics,
        "_l2_cache": False,
        "_msprof_tx": False,
    }
    if variant.version == "2026":
        experimental["_mstx"] = False
    experimental.update(_data_simplification=not variant.msprof_output, record_op_args=False)
    # older torch_npu stores one export type as a string
    experimental["_export_type"] = (
        exports if variant.version == "2026" else (exports or ["text"])[0]
    )
    experimental.update(_op_attr=False, _gc_detect_threshold=None)
    if variant.version == "2026":
        experimental.update(
            _host_sys=[],
            _mstx_domain_include=[],
            _mstx_domain_exclude=[],
            _sys_io=False,
            _sys_interconnection=False,
        )
    info: dict[str, Any] = {
        "config": {"common_config": common, "experimental_config": experimental},
        "start_info": {
            "syscnt_enable": True,
            "freq": 100,
            "start_cnt": monotonic_start // 10,
            "start_monotonic": monotonic_start,
        },
        "end_info": {"collectionTimeEnd": end, "MonotonicTimeEnd": monotonic_end},
    }
    if variant.version == "2026":
        info.update(torch_npu_version="2.8.0", cann_version="8.5.0", rank_id=str(scenario.rank))
    else:
        info["rank_id"] = scenario.rank
    return info


_METADATA = {
    "ENV_VARIABLES": {
        key: ""
        for key in (
            "ASCEND_GLOBAL_LOG_LEVEL",
            "HCCL_RDMA_TC",
            "HCCL_RDMA_SL",
            "ACLNN_CACHE_LIMIT",
            "HOST_CACHE_CAPACITY",
            "ASCEND_ENHANCE_ENABLE",
            "PYTORCH_NPU_ALLOC_CONF",
            "ASCEND_LAUNCH_BLOCKING",
        )
    }
}


def profiler_metadata(scenario: Scenario) -> dict[str, Any]:
    """profiler_metadata.json: the env-var block torch_npu records, plus the string
    entries a workload adds with ``prof.add_metadata(key, value)`` (here: which
    generated scenario, rank and device this is, so every file is our own)."""
    return {
        **_METADATA,
        "overlap_check_scenario": scenario.name,
        "rank": str(scenario.rank),
        "device": str(scenario.device),
    }


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=4))


def write_frames_result_dir(
    scenario: Scenario, frames: rows.Frames, root: Path, variant: Variant, worker: str | None = None
) -> Path:
    """Write a result dir from precomputed frames (``scenario`` supplies metadata only)."""
    out_dir = Path(root) / result_dir_name(scenario, worker)
    output = out_dir / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True, exist_ok=True)
    for empty in ("FRAMEWORK", "logs"):
        (out_dir / empty).mkdir(exist_ok=True)
    pid = default_pid(scenario)
    steps = rows.step_ranges(frames.kernels)
    _write_json(
        out_dir / f"profiler_info_{scenario.rank}.json", profiler_info(scenario, variant, steps)
    )
    _write_json(out_dir / "profiler_metadata.json", profiler_metadata(scenario))
    start, end = session_start_ns(scenario), scenario.end_ns()
    spec = trace.TraceSpec(variant.version, variant.level0, pid, scenario.device, steps, start, end)
    if variant.kernel_details:
        kernel_csv.write_kernel_details(
            output / "kernel_details.csv", frames.kernels, variant, scenario.device
        )
    if variant.trace:
        trace.write_trace(output / "trace_view.json", frames, spec)
    if variant.kernel_details or variant.trace:
        step_trace.write_step_trace(
            output / "step_trace_time.csv",
            frames,
            steps,
            variant.version,
            scenario.device,
            variant.crlf,
        )
    if variant.kernel_details and not variant.level0:
        op_statistic.write_op_statistic(output / "op_statistic.csv", frames.kernels)
    if variant.task_time:
        msprof.write_task_time(output / "task_time.csv", frames, scenario.device, crlf=variant.crlf)
    if variant.db:
        db_spec = db.DbSpec(
            variant.version, variant.level0, scenario.rank, scenario.device, pid, steps, start, end
        )
        db.write_db(output / f"ascend_pytorch_profiler_{scenario.rank}.db", frames, db_spec)
    if variant.version == "2026":
        (output / "analyse.done").write_bytes(b"")
    if variant.prof_dir or variant.msprof_output:
        prof = out_dir / prof_dir_name(scenario)
        msprof.write_prof_skeleton(prof, scenario, pid, scenario.rank)
        if variant.msprof_output:
            stamp = stamp17(end + EXPORT_LAG_NS)[:14]
            msprof.write_mindstudio_output(
                prof, frames, spec, stamp, "2026" if variant.version == "2026" else "2025"
            )
    return out_dir


DEFAULT_VARIANT = Variant()


def write_result_dir(
    scenario: Scenario, root: Path, variant: Variant = DEFAULT_VARIANT, *, worker: str | None = None
) -> Path:
    """Write ``<root>/<host>_<pid>_<YYYYmmddHHMMSSfff>_ascend_pt/`` as torch_npu does; return it."""
    return write_frames_result_dir(scenario, rows.frames(scenario), Path(root), variant, worker)


def write_runs(
    scenarios: Sequence[Scenario], root: Path, variant: Variant = DEFAULT_VARIANT
) -> list[Path]:
    """One result dir per scenario (run) under ``root``, in the given order."""
    return [write_result_dir(scenario, root, variant) for scenario in scenarios]


def write_msprof_dir(scenario: Scenario, root: Path, *, version: str = "2026") -> Path:
    """Write ``<root>/PROF_000001_<ts>_<16 alnum>/`` as the msprof CLI does; return it."""
    frames = rows.frames(scenario)
    pid = default_pid(scenario)
    prof = Path(root) / prof_dir_name(scenario)
    msprof.write_prof_skeleton(prof, scenario, pid, -1)
    steps = rows.step_ranges(frames.kernels)
    spec = trace.TraceSpec(
        version, False, pid, scenario.device, steps, session_start_ns(scenario), scenario.end_ns()
    )
    msprof.write_mindstudio_output(
        prof, frames, spec, stamp17(scenario.end_ns() + EXPORT_LAG_NS)[:14], version
    )
    return prof
