"""One discovered Source → one Capture: pick the kernel source, add streams and metadata.

Which file gives the kernels, streams and copy/communication rows: docs/formats.md, "Which file
gives the kernels" and "Streams for Level0 captures"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from overlap_check.model import MAX_INPUT_SIZE, Capture, ProfilerStepTime, SideKind
from overlap_check.model.errors import InputError, NoStreamDataError
from overlap_check.model.intervals import union_length
from overlap_check.model.table import conform, is_compute, is_unplaced
from overlap_check.readers.csvread import MAX_FIELD_BYTES, read_header
from overlap_check.readers.db import read_db
from overlap_check.readers.discover import Source, file_kind
from overlap_check.readers.kernel_csv import read_kernel_csv
from overlap_check.readers.metadata import (
    MAX_ID,
    ProfilerInfo,
    device_info_number,
    dir_timestamp_ns,
    prof_rank,
    read_device_cores,
    read_profiler_info,
)
from overlap_check.readers.step_trace import read_step_trace_csv, read_step_trace_db
from overlap_check.readers.streams import attach_streams
from overlap_check.readers.task_time import looks_like_task_time, read_task_time
from overlap_check.readers.trace import read_trace


@dataclass
class _Kernels:
    """What the kernel source gave, before metadata."""

    frame: pl.DataFrame
    source: str
    has_streams: bool = True
    skipped: list[tuple[Path, tuple[int, ...]]] = field(default_factory=list)
    rank: int | None = None
    time_ns: int | None = None
    devices: tuple[int, ...] = ()
    notes: list[str] = field(default_factory=list)
    files: tuple[Path, ...] = ()  # the files the rows came from (named in the notes)
    malformed: int = 0  # rows the reader skipped without a line number (a Kineto trace's)


def _from_csvs(paths: tuple[Path, ...], source: str, shapes: bool = False) -> _Kernels:
    files = [read_kernel_csv(p, shapes=shapes) for p in paths]
    return _Kernels(
        pl.concat([f.kernels for f in files], how="diagonal_relaxed"),
        source,
        all(f.has_streams for f in files),
        [(f.path, f.skipped_lines) for f in files if f.skipped_lines],
        notes=[f"{len(paths)} {source} files concatenated"] if len(paths) > 1 else [],
        files=paths,
    )


def _from_task_time(paths: tuple[Path, ...]) -> _Kernels:
    read = [(p, *read_task_time(p)) for p in paths]
    frame = pl.concat([frame for _, frame, _ in read], how="diagonal_relaxed")
    skipped = [(p, lines) for p, _, lines in read if lines]
    return _Kernels(frame, "task_time", skipped=skipped, files=paths)


def _from_db(path: Path, shapes: bool = False) -> _Kernels:
    db = read_db(path, shapes=shapes)
    return _Kernels(db.kernels, "db", rank=db.rank, time_ns=db.session_end_ns, files=(path,))


def _from_traces(paths: tuple[Path, ...]) -> _Kernels:
    traces = [read_trace(p) for p in paths]
    frame = pl.concat([t.kernels for t in traces], how="diagonal_relaxed")
    devices = tuple(sorted({d for t in traces for d in t.devices}))
    return _Kernels(frame, "trace_view.json", devices=devices, files=paths)


def _within_limit(paths: tuple[Path, ...], limit: int) -> tuple[Path, ...]:
    """``paths``, or InputError naming the first larger than ``limit`` bytes (0: none)."""
    for path in paths:
        try:
            size = path.stat().st_size
        except OSError:  # the reader names the file when it cannot read it
            continue
        if limit and size > limit:
            raise InputError(
                f"{size / 2**30:.1f} GiB, larger than the input size limit of "
                f"{limit / 2**30:.1f} GiB",
                path=path,
                hint="lift it with --max-input-size 64GiB (or [runs] max_input_size, "
                "OVERLAP_CHECK_MAX_INPUT_SIZE; 0: no limit)",
            )
    return paths


def _primary(src: Source, path: Path, shapes: bool) -> _Kernels:
    """The bare file given as the PATH, read as what it is."""
    kind = file_kind(path)
    if src.kind == "kineto":
        from overlap_check.readers.kineto import read_kineto

        trace = read_kineto(path)
        return _Kernels(
            trace.kernels, "kineto", rank=trace.rank, devices=trace.devices,
            notes=[*trace.notes], malformed=trace.malformed,
        )  # fmt: skip
    if kind == "db":
        return _from_db(path, shapes)
    if kind == "trace":
        return _from_traces((path,))
    if looks_like_task_time(read_header(path)):
        return _from_task_time((path,))
    source = "op_summary" if path.name.lower().startswith("op_summary") else "kernel_details.csv"
    return _from_csvs((path,), source, shapes)


def _read_kernels(src: Source, shapes: bool, limit: int) -> _Kernels:
    """The first kernel source present (module docstring), its size checked first."""
    kernel_sources: tuple[tuple[tuple[Path, ...], Callable[[tuple[Path, ...]], _Kernels]], ...] = (
        ((src.primary,) if src.primary else (), lambda files: _primary(src, files[0], shapes)),
        (
            (src.kernel_details,) if src.kernel_details else (),
            lambda files: _from_csvs(files, "kernel_details.csv", shapes),
        ),
        (src.op_summary, lambda files: _from_csvs(files, "op_summary", shapes)),
        (src.dbs[:1], lambda files: _from_db(files[0], shapes)),
        (src.traces, _from_traces),
        (src.task_time, _from_task_time),
    )
    for files, read in kernel_sources:
        if files:
            return read(_within_limit(files, limit))
    raise InputError(
        "no kernel data: no kernel_details.csv, op_summary, trace or profiler .db",
        path=src.path,
        hint="the profiler's offline parsing may have failed (see its logs/); "
        "torch_npu.profiler.profiler.analyse(<dir>) re-parses it",
    )


def _stream_candidates(src: Source, used: str) -> list[tuple[str, Callable[[], pl.DataFrame]]]:
    """The capture's other files that give tasks with streams, cheapest exact source first."""
    candidates: dict[str, tuple[tuple[Path, ...], Callable[[], pl.DataFrame]]] = {
        "db": (src.dbs, lambda: read_db(src.dbs[0]).kernels),
        "task_time": (src.task_time, lambda: _from_task_time(src.task_time).frame),
        "trace_view.json": (src.traces, lambda: _from_traces(src.traces).frame),
    }
    return [(name, read) for name, (files, read) in candidates.items() if files and name != used]


def _needs_streams(kernels: _Kernels) -> bool:
    """No Stream ID column, or one with no value on any compute row (N/A everywhere)."""
    if not kernels.has_streams:
        return True
    is_compute = ~pl.col("is_communication")
    compute, with_stream = kernels.frame.select(
        is_compute.sum(), (is_compute & pl.col("stream_id").is_not_null()).sum().alias("s")
    ).row(0)
    if compute and with_stream == 0:
        return True
    if with_stream < compute:
        kernels.notes.append(
            f"{compute - with_stream} of {compute} kernel rows have no Stream ID (N/A): "
            "left out of every stream"
        )
    return False


def _add_streams(src: Source, kernels: _Kernels) -> str:
    """Fill Stream IDs from another file; returns its source name or raises."""
    first_error: InputError | None = None
    for name, read in _stream_candidates(src, kernels.source):
        try:
            tasks = read()
        except InputError as err:  # a broken fallback: try the next, report the first
            first_error = first_error or err
            continue
        frame, missing = attach_streams(kernels.frame, tasks)
        compute = int(frame.select((~pl.col("is_communication")).sum()).item())
        if compute and missing == compute:
            kernels.notes.append(f"no kernel row matched a task in {name} by start time; not used")
            continue
        kernels.frame = frame
        if missing:
            kernels.notes.append(
                f"{missing} of {compute} kernel rows matched no task in {name}: no Stream ID"
            )
        return name
    detail = f" ({first_error})" if first_error else ""
    raise NoStreamDataError(
        f"no Stream IDs: {kernels.source} has none (profiler_level=Level0) and no trace_view.json,"
        f" task_time.csv or .db of this capture gives them{detail}",
        path=src.primary or src.kernel_details or src.path,
        hint="re-profile at Level1 (torch_npu: experimental_config profiler_level=Level1; "
        "msprof: --task-time=l1), or keep trace_view.json / the .db next to kernel_details.csv",
    )


_TASK_ROWS: dict[str, str] = {"copy": "is_copy", "communication": "is_communication"}


def _add_tasks(src: Source, kernels: _Kernels, kinds: frozenset[SideKind]) -> str | None:
    """Copy (and communication) rows from the capture's .db, task_time or trace when the
    kernel file lists none of that kind (Level1 kernel_details.csv has no copy task), for
    the plans whose side ops they are. Returns their source (None: not needed, or none)."""
    frame = kernels.frame
    missing = [
        column
        for kind, column in _TASK_ROWS.items()
        if kind in kinds and not (column in frame.columns and frame.get_column(column).any())
    ]
    if not missing:
        return None
    for name, read in _stream_candidates(src, kernels.source):
        try:
            rows = read()
        except InputError as err:  # a broken extra source: say so, try the next
            kernels.notes.append(f"{name} not read for copy/communication tasks: {err}")
            continue
        present = [c for c in missing if c in rows.columns]
        found = rows.filter(pl.any_horizontal(pl.col(c) for c in present)) if present else rows[:0]
        if not found.height:
            continue
        kernels.frame = pl.concat([frame, found], how="diagonal_relaxed")
        words = " and ".join(k for k, c in _TASK_ROWS.items() if c in present)
        kernels.notes.append(
            f"{found.height} {words} task row(s) from {name} ({kernels.source} lists none); "
            f"kernels and their figures from {kernels.source}"
        )
        return name
    return None


def _device(src: Source, kernels: _Kernels) -> int | None:
    if "device" in kernels.frame.columns:
        devices = kernels.frame["device"].drop_nulls().unique()
        if devices.len():
            return int(devices[0]) if devices.len() == 1 else None
    numbers = {device_info_number(p) for p in src.device_info} - {None}
    if len(numbers) == 1:
        return numbers.pop()
    return kernels.devices[0] if len(kernels.devices) == 1 else None


def _skipped(kernels: _Kernels) -> tuple[int, tuple[int, ...], str | None]:
    if not kernels.skipped:
        return 0, (), None
    first_path, first_lines = kernels.skipped[0]
    for path, lines in kernels.skipped[1:]:
        kernels.notes.append(
            f"{path}: {len(lines)} malformed rows skipped (lines {list(lines)[:10]})"
        )
    return sum(len(lines) for _, lines in kernels.skipped), first_lines, str(first_path)


def _capture_time(
    src: Source, info: ProfilerInfo | None, kernels: _Kernels, frame: pl.DataFrame
) -> int | None:
    """The first known of: collectionTimeEnd, dir stamp, db end, PROF stamp, last kernel end."""
    candidates = (
        info.end_ns if info else None,
        dir_timestamp_ns(src.path.name) if src.kind not in ("file", "kineto") else None,
        kernels.time_ns,
        dir_timestamp_ns(src.prof_dirs[0].name) if src.prof_dirs else None,
        frame.select(pl.col("end_ns").max()).item() if frame.height else None,
    )
    return next((int(value) for value in candidates if value is not None), None)


# Times are ns on a Unix-epoch clock: anything at or past 2**62 (year 2116) is not a
# time, and sums of up to a few hundred such values still fit int64.
MAX_TIME_NS = 2**62
# Busy and overlap sums are exact only while a capture spans less than 2**53 ns
# (104 days; float64 weights in the concurrency sweep), far above any real capture.
MAX_SPAN_NS = 2**53


def _possible_times(src: Source, kernels: _Kernels) -> int:
    """Drops and counts the malformed rows (time missing, negative, reversed or past
    MAX_TIME_NS; device past Int32; no name). InputError when the rest spans MAX_SPAN_NS
    or sums past int64, or for a trace / .db text value over MAX_FIELD_BYTES."""
    frame = kernels.frame
    if not frame.height:
        return 0
    texts = [c for c in ("name", "op_type", "input_shapes") if c in frame.columns]
    longest = frame.select(pl.col(texts).str.len_bytes().max()).row(0) if texts else ()
    for column, length in zip(texts, longest, strict=True):
        if length is not None and length > MAX_FIELD_BYTES:
            raise InputError(
                f"a {column} of {length} bytes, over {MAX_FIELD_BYTES >> 20} MiB: "
                "not a value a profiler writes",
                path=kernels.files[0] if len(kernels.files) == 1 else src.path,
                key=column,
            )
    start, end = pl.col("start_ns"), pl.col("end_ns")
    good = (start >= 0) & (end >= start) & (end < MAX_TIME_NS) & pl.col("name").is_not_null()
    if "device" in frame.columns:  # Int32 in the kernel table
        good &= pl.col("device").is_null() | pl.col("device").is_between(0, MAX_ID)
    keep = frame.select(good.fill_null(False)).to_series()
    dropped = frame.height - int(keep.sum())
    if dropped:
        frame = kernels.frame = frame.filter(keep)
        where = ", ".join(map(str, kernels.files)) or f"{src.path} ({kernels.source})"
        kernels.notes.append(
            f"{where}: {dropped} row(s) with impossible times (missing, null, text, negative, "
            "end before start, or past 2**62 ns), device ids or no name skipped as malformed"
        )
    if frame.height:
        span, total = frame.select(
            (end.max() - start.min()).alias("span"), (end - start).cast(pl.Float64).sum()
        ).row(0)
        if span >= MAX_SPAN_NS or total >= MAX_TIME_NS:
            raise InputError(
                f"{kernels.source}: kernel times span {span / 86_400e9:.0f} days "
                f"(sum {total / 86_400e9:.0f} days): not the times of one capture",
                path=src.path,
            )
    return dropped


def _incomplete(
    frame: pl.DataFrame, source: str, steps: tuple[ProfilerStepTime, ...], steps_file: Path | None
) -> str | None:
    """Why the kernel table looks cut short (an export cut at a line boundary reads as a good
    file): steps the profiler's step_trace_time.csv (or analysis.db) lists with no kernel, or
    a cut inside the last one (:func:`_short_of_computing`)."""
    if steps_file is None:
        return None
    why = [_short_of_computing(frame, steps, steps_file.name)]
    listed = {s.step for s in steps if s.step is not None}
    if listed and "step" in frame.columns:
        seen = set(frame.get_column("step").drop_nulls().unique().to_list())
        if missing := sorted(listed - seen) if seen else []:
            shown = ", ".join(map(str, missing[:5])) + (" ..." if len(missing) > 5 else "")
            why.insert(0, f"holds no kernel of {len(missing)} step(s) that {steps_file.name} "
                       f"lists ({shown}): the export looks cut short")  # fmt: skip
    found = [w for w in why if w]
    return f"{source} {'; '.join(found)}" if found else None


def _short_of_computing(
    frame: pl.DataFrame, steps: tuple[ProfilerStepTime, ...], name: str
) -> str | None:
    """The compute kernels of the last step the profiler lists cover less of the time than its
    Computing there (its float sums: by more than 1% and 1 µs), per device it lists."""
    timed = [s for s in steps if s.computing_ns]
    numbered = [s.step for s in timed if s.step is not None]
    if not timed or (numbered and "step" not in frame.columns):
        return None
    last = max(numbered, default=None)
    compute = is_compute(frame.columns) | is_unplaced(frame.columns)  # on a stream or not
    rows = frame.filter(compute if last is None else compute & (pl.col("step") == last))
    for row in (s for s in timed if s.step == last):
        on = rows if row.device is None else rows.filter(pl.col("device") == row.device)
        on = on.drop_nulls(["start_ns", "end_ns"])
        ours, theirs = union_length(on["start_ns"], on["end_ns"]), row.computing_ns or 0
        if on.height and theirs - ours > max(1000, theirs // 100):  # none on it: ids differ
            at = "" if last is None else f" of step {last}"
            return (f"has compute kernels{at} covering {ours / 1000:.3f} µs where {name} counts "
                    f"{theirs / 1000:.3f} µs of Computing: kernel rows are missing (skipped as "
                    "malformed, trimmed, or the export cut short)")  # fmt: skip
    return None


def read_capture(
    src: Source,
    *,
    shapes: bool = False,
    tasks: frozenset[SideKind] = frozenset(),
    limit: int = MAX_INPUT_SIZE,
) -> Capture:
    """Read one capture: kernel table, streams, rank, level, time, device cores.
    ``shapes``: with ``input_shapes``; ``tasks``: side kinds to fetch rows of (_add_tasks);
    ``limit``: the largest kernel file read, in bytes (0: none)."""
    kernels = _read_kernels(src, shapes, limit)
    # impossible rows first: a row is counted once, as malformed, never also as streamless
    impossible = _possible_times(src, kernels)
    stream_source = _add_streams(src, kernels) if _needs_streams(kernels) else None
    task_source = _add_tasks(src, kernels, tasks) if tasks else None
    frame = kernels.frame
    info = read_profiler_info(src.profiler_info) if src.profiler_info else None
    kernels.notes.extend(info.notes if info else ())
    rank = info.rank if info and info.rank is not None else kernels.rank
    if rank is None and src.kind == "prof":
        rank = prof_rank(src.host_info + src.device_info)
    level = info.level if info and info.level else (None if kernels.has_streams else "Level0")
    device = _device(src, kernels)
    if "device" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, pl.Int32).alias("device"))
    if device is not None:  # a one-device capture: rows without Device_id are on it
        frame = frame.with_columns(pl.col("device").fill_null(device))
    frame = frame.with_columns(pl.lit(rank, pl.Int32).alias("rank"))
    cores, core_notes = read_device_cores(src.device_info, device)
    skipped_rows, skipped_lines, skipped_file = _skipped(kernels)
    if stream_source is not None:
        kernels.notes.append(f"Stream IDs from {stream_source} ({kernels.source} has none)")
    steps: tuple[ProfilerStepTime, ...] = ()
    if src.step_trace is not None:
        db = src.step_trace.suffix.lower() == ".db"
        steps = (read_step_trace_db if db else read_step_trace_csv)(src.step_trace)
    return Capture(
        path=str(src.path),
        source=kernels.source,
        rank=rank,
        device=device,
        level=level,
        capture_time_ns=_capture_time(src, info, kernels, frame),
        kernels=conform(frame),
        skipped_rows=skipped_rows + impossible + kernels.malformed,
        skipped_lines=skipped_lines,
        skipped_file=skipped_file,
        device_cores=cores,
        stream_source=stream_source,
        unplaced_rows=frame.filter(is_unplaced(frame.columns)).height,
        task_source=task_source,
        notes=tuple(kernels.notes) + core_notes,
        profiler_steps=steps,
        profiler_steps_file=None if src.step_trace is None else str(src.step_trace),
        incomplete=_incomplete(frame, kernels.source, steps, src.step_trace),
    )
