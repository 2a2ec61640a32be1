"""Find the captures under a PATH: result dirs, msprof PROF dirs, bare files.

A PATH is one of (docs/contract.md): a torch_npu result dir, a dir holding several of them
at any depth, an msprof ``PROF_*`` dir, or one bare output file. A result dir is recognised
by ``ASCEND_PROFILER_OUTPUT/`` or a ``profiler_info*.json`` in it, never by its name
(wrappers rename it). A PROF dir is a ``PROF_*`` dir with ``mindstudio_profiler_output/``,
``device_*/`` or ``host/``. A dir holding the output files themselves (an
``ASCEND_PROFILER_OUTPUT`` copied alone) also counts, with the files' exact names. Bare
files of other names are read only when given as the PATH.

Discovery only lists files; ordering (by capture time) and reading happen in
:mod:`overlap_check.readers`."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from overlap_check.model.errors import InputError, regular_file

SourceKind = Literal["ascend_pt", "prof", "output_dir", "file", "kineto"]
FileKind = Literal["csv", "trace", "db"]

OUTPUT_DIR = "ASCEND_PROFILER_OUTPUT"
MSPROF_OUTPUT_DIR = "mindstudio_profiler_output"


@dataclass(frozen=True)
class Source:
    """The files of one capture (one run of one rank), as found on disk.

    ``primary`` is the file given as the PATH, when a bare file was given: it is the kernel source;
    the other lists then hold its same-named siblings, used only for Stream IDs. Otherwise the
    reader picks the kernel source in order: kernel_details, op_summary, db, trace, task_time."""

    path: Path  # what Capture.path reports
    kind: SourceKind
    primary: Path | None = None
    kernel_details: Path | None = None
    op_summary: tuple[Path, ...] = ()
    dbs: tuple[Path, ...] = ()
    traces: tuple[Path, ...] = ()  # trace_view.json, or the msprof_*.json slices of one PROF
    task_time: tuple[Path, ...] = ()
    profiler_info: Path | None = None
    device_info: tuple[Path, ...] = ()  # PROF_*/device_N/info.json.N
    host_info: tuple[Path, ...] = ()  # PROF_*/host/info.json (rank_id of msprof runs)
    prof_dirs: tuple[Path, ...] = ()
    # the profiler's own per-step communication figures (step_trace_time.csv, else the db
    # export's analysis.db): a cross-check, never a kernel source
    step_trace: Path | None = None


def file_kind(path: Path) -> FileKind | None:
    """What a bare file is, by its suffix; None for an unknown kind."""
    name = path.name.lower()
    if name.endswith(".csv"):
        return "csv"
    if name.endswith(".json"):
        return "trace"
    if name.endswith((".db", ".sqlite", ".sqlite3")):
        return "db"
    return None


def _regular(paths: Iterable[Path]) -> tuple[Path, ...]:
    """``paths`` that exist, sorted; InputError for one that is not a regular file."""
    found = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif os.path.lexists(path):  # a FIFO, dir or broken link under a profiler file's name
            regular_file(path, "profiler output file")
    return tuple(sorted(found))


def _files(directory: Path, pattern: str) -> tuple[Path, ...]:
    return _regular(directory.glob(pattern))


def _first(paths: Iterable[Path]) -> Path | None:
    return next(iter(paths), None)


def _torch_outputs(directory: Path) -> dict[str, tuple[Path, ...]]:
    """Exact-named torch_npu output files directly in ``directory``."""
    kernel = directory / "kernel_details.csv"
    trace = directory / "trace_view.json"
    task_time = directory / "task_time.csv"
    return {
        "kernel_details": _regular([kernel]),
        "traces": _regular([trace]),
        "dbs": _files(directory, "ascend_pytorch_profiler*.db"),
        "task_time": _regular([task_time]),
    }


def _msprof_outputs(directory: Path) -> dict[str, tuple[Path, ...]]:
    """msprof output files directly in ``directory`` (a mindstudio_profiler_output)."""
    return {
        "op_summary": _files(directory, "op_summary_*.csv"),
        "traces": _files(directory, "msprof_*.json"),
        "task_time": _files(directory, "task_time_*.csv"),
    }


def _step_trace(directory: Path) -> Path | None:
    """step_trace_time.csv in ``directory``, else its analysis.db (db export)."""
    return _first(_regular([directory / "step_trace_time.csv"])) or _first(
        _regular([directory / "analysis.db"])
    )


def is_result_dir(directory: Path) -> bool:
    return (directory / OUTPUT_DIR).is_dir() or bool(_files(directory, "profiler_info*.json"))


def is_prof_dir(directory: Path) -> bool:
    if not directory.name.startswith("PROF_"):
        return False
    return (
        (directory / MSPROF_OUTPUT_DIR).is_dir()
        or (directory / "host").is_dir()
        or any(p.is_dir() for p in directory.glob("device_*"))
    )


def _prof_parts(prof: Path) -> dict[str, tuple[Path, ...]]:
    outputs = _msprof_outputs(prof / MSPROF_OUTPUT_DIR)
    outputs["dbs"] = _files(prof, "msprof_*.db")
    outputs["device_info"] = _files(prof, "device_*/info.json.*")
    outputs["host_info"] = _files(prof, "host/info.json")
    return outputs


def prof_source(prof: Path) -> Source:
    parts = _prof_parts(prof)
    return Source(
        path=prof,
        kind="prof",
        op_summary=parts["op_summary"],
        dbs=parts["dbs"],
        traces=parts["traces"],
        task_time=parts["task_time"],
        device_info=parts["device_info"],
        host_info=parts["host_info"],
        prof_dirs=(prof,),
    )


def result_source(root: Path) -> Source:
    """A torch_npu result dir; its PROF_* subdirs add op_summary/device info."""
    torch = _torch_outputs(root / OUTPUT_DIR)
    profs = tuple(p for p in sorted(root.glob("PROF_*")) if p.is_dir())
    prof_parts = [_prof_parts(p) for p in profs]

    def from_profs(key: str) -> tuple[Path, ...]:
        # One PROF dir's files of a kind (slices of one export), not a mix of several.
        return next((part[key] for part in prof_parts if part[key]), ())

    return Source(
        path=root,
        kind="ascend_pt",
        kernel_details=_first(torch["kernel_details"]),
        op_summary=from_profs("op_summary"),
        dbs=torch["dbs"] or from_profs("dbs"),
        traces=torch["traces"] or from_profs("traces"),
        task_time=torch["task_time"] or from_profs("task_time"),
        profiler_info=_first(_files(root, "profiler_info*.json")),
        device_info=tuple(p for part in prof_parts for p in part["device_info"]),
        host_info=tuple(p for part in prof_parts for p in part["host_info"]),
        prof_dirs=profs,
        step_trace=_step_trace(root / OUTPUT_DIR),
    )


def output_dir_source(directory: Path) -> Source | None:
    """A dir holding exactly-named output files itself; None when it holds none."""
    torch = _torch_outputs(directory)
    msprof = _msprof_outputs(directory)
    dbs = torch["dbs"] or _files(directory, "msprof_*.db")
    if not any(torch.values()) and not any(msprof.values()) and not dbs:
        return None
    return Source(
        path=directory,
        kind="output_dir",
        kernel_details=_first(torch["kernel_details"]),
        op_summary=msprof["op_summary"],
        dbs=dbs,
        traces=torch["traces"] or msprof["traces"],
        task_time=torch["task_time"] or msprof["task_time"],
        step_trace=_step_trace(directory),
    )


def kineto_sources(directory: Path) -> list[Source]:
    """The PyTorch profiler (Kineto) traces directly in ``directory``, one capture each
    (``*.pt.trace.json[.gz]`` or any ``.json[.gz]``, recognised by content)."""
    from overlap_check.readers.kineto import is_kineto_file

    names = sorted(p for p in directory.glob("*.json*") if p.is_file() and is_kineto_file(p))
    return [Source(path=p, kind="kineto", primary=p) for p in names]


def file_source(path: Path) -> Source:
    """A bare file; same-named siblings in its directory may give Stream IDs (Level0)."""
    from overlap_check.readers.kineto import is_kineto_file

    if is_kineto_file(path):
        return Source(path=path, kind="kineto", primary=path)
    if file_kind(path) is None:
        raise InputError(
            "not a profiler output file (expected .csv, .json or .db)",
            path=path,
            hint="give a *_ascend_pt dir, a PROF_* dir, kernel_details.csv, op_summary_*.csv, "
            "trace_view.json, a profiler .db or a PyTorch profiler trace (*.pt.trace.json[.gz])",
        )
    siblings = output_dir_source(path.parent) or Source(path.parent, "output_dir")

    def others(paths: tuple[Path, ...]) -> tuple[Path, ...]:
        return tuple(p for p in paths if p != path)

    return Source(
        path=path,
        kind="file",
        primary=path,
        dbs=others(siblings.dbs),
        traces=others(siblings.traces),
        task_time=others(siblings.task_time),
        step_trace=siblings.step_trace,
    )


def _classify(directory: Path) -> Source | None:
    if is_result_dir(directory):
        return result_source(directory)
    if is_prof_dir(directory):
        return prof_source(directory)
    parent = directory.parent
    if directory.name == OUTPUT_DIR and is_result_dir(parent):
        return result_source(parent)
    if directory.name == MSPROF_OUTPUT_DIR and is_prof_dir(parent):
        return prof_source(parent)
    return output_dir_source(directory)


def _subdirs(directory: Path) -> list[Path]:
    """Subdirectories (not links to them), in reverse name order (a stack pops the first)."""
    try:
        with os.scandir(directory) as entries:
            names = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError as err:
        raise InputError(f"cannot read directory: {err.strerror or err}", path=directory) from err
    return [directory / name for name in sorted(names, reverse=True)]


def discover(path: str | Path) -> list[Source]:
    """Every capture under one PATH (unordered; readers order them by capture time)."""
    root = Path(path)
    if not root.exists():
        raise InputError("no such file or directory", path=root)
    if root.is_file():
        return [file_source(root)]
    if not root.is_dir():
        raise InputError("not a regular file or directory", path=root)
    top = _classify(root)
    if top is not None:
        return [top]
    found = kineto_sources(root)
    # Depth first in name order, without recursion (os.walk recurses: a tree a thousand
    # levels deep would end in RecursionError); a capture's subdirs belong to it.
    pending = _subdirs(root)
    while pending:
        here = pending.pop()
        try:
            source = _classify(here)
        except OSError as err:  # a name too long for the system, a dir gone meanwhile
            raise InputError(f"cannot read directory: {err.strerror or err}", path=here) from err
        if source is not None:
            found.append(source)
        else:
            found.extend(kineto_sources(here))
            pending.extend(_subdirs(here))
    if not found:
        raise InputError(
            "no profiler output found in this directory",
            path=root,
            hint="expected *_ascend_pt dirs (ASCEND_PROFILER_OUTPUT/ or profiler_info*.json), "
            "PROF_* dirs, kernel_details.csv / trace_view.json / a profiler .db, "
            "or PyTorch profiler traces (*.pt.trace.json[.gz])",
        )
    return found
