"""``manifest.json``: what ``overlap-check run`` did, rewritten atomically after every run.

It records the command, where and when each run happened, how it ended and
which result dirs it left, so that nothing is lost when a run fails or is
interrupted, and ``overlap-check analyze <out>`` can judge the same data later.
Paths inside are relative to the folder holding the manifest.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from overlap_check.errors import InputError

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1

RunStatus = Literal["running", "ok", "failed", "no-profile", "interrupted"]
SessionStatus = Literal["running", "complete", "failed", "interrupted"]


@dataclass(frozen=True)
class RunRecord:
    index: int  # 1-based
    dir: str  # relative to the manifest, e.g. "run-1"
    started: str  # ISO 8601, local time with offset
    ended: str | None = None
    seconds: float | None = None
    exit_code: int | None = None  # negative: killed by that signal (subprocess convention)
    status: RunStatus = "running"
    result_dirs: tuple[str, ...] = ()  # relative to the manifest
    problem: str | None = None  # why the run is not usable
    processes: int = 0  # Python processes the payload saw (torch_npu profiler)
    log: str | None = None  # the workload's output, when it was not shown (-q)


@dataclass(frozen=True)
class Manifest:
    tool_version: str
    command: tuple[str, ...]
    cwd: str
    profiler: str  # "torch_npu" | "msprof"
    profiler_reason: str
    level: str
    window: str
    runs_requested: int
    created: str
    options: dict[str, Any] = field(default_factory=dict)  # the CLI parameters
    analyze_args: tuple[str, ...] = ()  # `overlap-check analyze <out> ...` equivalent
    profiler_argv: tuple[str, ...] = ()  # the first run's full argv (msprof ... COMMAND)
    status: SessionStatus = "running"
    updated: str | None = None
    runs: tuple[RunRecord, ...] = ()
    tool: str = "overlap-check"
    manifest_version: int = MANIFEST_VERSION

    def with_run(self, record: RunRecord) -> Manifest:
        """A copy with ``record`` added, or replacing the record with the same index."""
        others = tuple(r for r in self.runs if r.index != record.index)
        runs = tuple(sorted((*others, record), key=lambda r: r.index))
        return replace(self, runs=runs, updated=now_iso())

    def usable_runs(self) -> tuple[RunRecord, ...]:
        """Runs that finished and left a profile, in run order."""
        return tuple(r for r in self.runs if r.status == "ok" and r.result_dirs)


def now_iso() -> str:
    return datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")


def to_json(manifest: Manifest) -> dict[str, Any]:
    data = asdict(manifest)
    # Keys a reader looks for first.
    ordered = {k: data.pop(k) for k in ("tool", "manifest_version", "tool_version", "status")}
    ordered.update(data)
    return ordered


def write_manifest(out_dir: Path, manifest: Manifest) -> Path:
    """Write ``out_dir/manifest.json`` atomically (temporary file, fsync, os.replace)."""
    target = out_dir / MANIFEST_NAME
    text = json.dumps(to_json(manifest), indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".manifest-", suffix=".tmp", dir=out_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def read_manifest(path: Path) -> Manifest:
    """Read a manifest (the file, or the folder holding it)."""
    if path.is_dir():
        path = path / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise InputError(f"cannot read the run manifest: {err.strerror}", path=path) from err
    except json.JSONDecodeError as err:
        raise InputError(f"malformed JSON: {err.msg}", path=path, line=err.lineno) from err
    if not isinstance(data, dict) or data.get("tool") != "overlap-check":
        raise InputError("not an overlap-check run manifest", path=path, key="tool")
    version = data.get("manifest_version")
    if version != MANIFEST_VERSION:
        raise InputError(
            f"unsupported manifest_version {version!r} (this tool reads {MANIFEST_VERSION})",
            path=path,
            key="manifest_version",
        )
    try:
        runs = tuple(
            RunRecord(**{**r, "result_dirs": tuple(r.get("result_dirs", ()))})
            for r in data.get("runs", ())
        )
        fields = {k: v for k, v in data.items() if k not in ("runs",)}
        for key in ("command", "analyze_args", "profiler_argv"):
            fields[key] = tuple(fields.get(key, ()))
        return Manifest(**fields, runs=runs)
    except TypeError as err:
        raise InputError(f"unexpected manifest content: {err}", path=path, key="runs") from err
