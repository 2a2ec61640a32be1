"""``manifest.json``: what ``overlap-check run`` did, rewritten atomically after every run, so
that nothing is lost when a run fails or is interrupted and ``analyze <out>`` can judge the same
data later. Its fields, statuses and the reserve file: docs/run.md, "What ends up on disk"."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from overlap_check.model.errors import InputError
from overlap_check.report.output_file import write_atomically

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1

RunStatus = Literal[
    "running", "ok", "failed", "no-profile", "incomplete", "bad-data", "interrupted"
]
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
    problem: str | None = None  # why the session ended early, when not a run's fault
    updated: str | None = None
    runs: tuple[RunRecord, ...] = ()
    tool: str = "overlap-check"
    manifest_version: int = MANIFEST_VERSION

    def with_run(self, record: RunRecord) -> Manifest:
        """A copy with ``record`` added, or replacing the one with its index."""
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


RESERVE_NAME = ".manifest-reserve"
RESERVE_BYTES = 256 * 1024
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def reserve_space(out_dir: Path) -> None:
    """Keep a reserve that :func:`write_manifest` can give up (best effort: under ``ulimit -f``
    or on a full disk the session goes on without one)."""
    reserve = out_dir / RESERVE_NAME
    try:
        with reserve.open("wb") as handle:
            handle.write(bytes(RESERVE_BYTES))  # real blocks, not a sparse file
            handle.flush()
            os.fsync(handle.fileno())
    except OSError:
        with contextlib.suppress(OSError):
            reserve.unlink(missing_ok=True)


def release_reserve(out_dir: Path) -> bool:
    try:
        (out_dir / RESERVE_NAME).unlink()
    except FileNotFoundError:
        return False
    return True


def write_manifest(out_dir: Path, manifest: Manifest, *, closing: bool = False) -> Path:
    """Write ``out_dir/manifest.json`` atomically; ``closing`` (the write that ends a session):
    on a full disk the reserve file is given up for it and the write tried once more."""
    text = json.dumps(to_json(manifest), indent=2, ensure_ascii=False) + "\n"
    try:
        return _write_atomically(out_dir / MANIFEST_NAME, text)
    except OSError as err:
        if not closing or err.errno not in DISK_FULL or not release_reserve(out_dir):
            raise
    return _write_atomically(out_dir / MANIFEST_NAME, text)


def _write_atomically(target: Path, text: str) -> Path:
    write_atomically(target, text)  # never through a link (output_file.py)
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
    except UnicodeDecodeError as err:
        raise InputError("not UTF-8 text, not a run manifest", path=path) from err
    except RecursionError as err:  # a manifest nests three levels
        raise InputError("JSON nested too deeply to be a run manifest", path=path) from err
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
        manifest = Manifest(**fields, runs=runs)
    except (TypeError, AttributeError) as err:
        raise InputError(f"unexpected manifest content: {err}", path=path, key="runs") from err
    _check_result_dirs(manifest, path)
    return manifest


def _inside(folder: Path, name: object) -> bool:
    if not isinstance(name, str) or not name or Path(name).is_absolute():
        return False
    try:
        return folder in (folder / name).resolve().parents
    except (OSError, RuntimeError, ValueError):  # a symbolic link loop, a NUL in the name
        return False


def _check_result_dirs(manifest: Manifest, path: Path) -> None:
    """InputError unless every result dir is a relative path inside the manifest's folder
    (an edited manifest could send analyze to any folder on the machine)."""
    folder = path.parent.resolve()
    for i, run in enumerate(manifest.runs):
        for d in run.result_dirs:
            if not _inside(folder, d):
                raise InputError(
                    f"result dir {d!r} does not lie inside the run folder",
                    path=path,
                    key=f"runs[{i}].result_dirs",
                    hint="a run folder's manifest names its runs' result dirs relative to it",
                )


def run_folder_paths(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """PATHs as ``analyze`` reads them: each ``run`` folder (one holding ``manifest.json``)
    replaced by its ``ok`` runs' result dirs (another may have left a partial profile), and
    notes saying which runs were left out."""
    expanded: list[str] = []
    notes: list[str] = []
    for path in paths:
        folder = Path(path)
        if not (folder / MANIFEST_NAME).is_file():
            expanded.append(path)
            continue
        manifest = read_manifest(folder)
        usable = manifest.usable_runs()
        why = [
            f"run {r.index} not judged ({r.status}: {r.problem or f'exit code {r.exit_code}'})"
            for r in manifest.runs
            if r not in usable
        ]
        if manifest.status == "running":
            why.append(
                f"the run session in {folder} never finished (manifest status running): "
                "only its completed runs are judged"
            )
        dirs = [folder / d for r in usable for d in r.result_dirs] if why else [folder]
        if not dirs:
            raise InputError(
                "no completed run to judge in this run folder",
                path=folder / MANIFEST_NAME,
                hint="; ".join(why) or None,
            )
        expanded += [str(d) for d in dirs]
        notes += why
    return expanded, notes
