"""PyTorch profiler (Kineto) Chrome traces from CUDA GPUs → the kernel table.

The format and its rules: docs/formats.md, "PyTorch profiler (Kineto) traces".
``ts`` / ``dur`` are kept as their raw JSON text and parsed exactly, never via float64."""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import polars as pl

from overlap_check.model.errors import InputError, SchemaError
from overlap_check.readers.kineto_events import Event, event_frame, name_texts, threads
from overlap_check.readers.steps import with_steps

DEVICE_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "copy", "memcpy": "copy"}
DEVICE_CATEGORIES |= {"gpu_memset": "copy", "memset": "copy"}
NCCL_KERNEL = r"^(?:void\s+)?nccl\w*Kernel"
MULTI_DEVICE_STRIDE = 1_000_000  # stream id = device * stride + stream with several devices
_HEAD_MARKERS = (b'"schemaVersion"', b'"deviceProperties"', b'"distributedInfo"')


class DeviceProperty(msgspec.Struct, gc=False):
    id: Any = None
    numSms: Any = None
    name: Any = None


class DistributedInfo(msgspec.Struct, gc=False):
    rank: Any = None


class KinetoTrace(msgspec.Struct, gc=False):
    traceEvents: list[Event] = msgspec.field(default_factory=list)
    deviceProperties: list[DeviceProperty] | None = None
    distributedInfo: DistributedInfo | None = None


_DECODER = msgspec.json.Decoder(KinetoTrace)


def _open(path: Path) -> Any:
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else path.open("rb")


def is_kineto_file(path: Path) -> bool:
    """A ``*.pt.trace.json[.gz]``, or a ``.json[.gz]`` object naming a Kineto key in its
    first 4 KiB (docs/formats.md; Ascend traces are bare arrays)."""
    name = path.name.lower()
    if name.endswith((".pt.trace.json", ".pt.trace.json.gz")):
        return True  # tensorboard_trace_handler's name: a broken one is reported as such
    if not name.endswith((".json", ".json.gz")):
        return False
    try:
        with _open(path) as handle:
            head = handle.read(4096)
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
        return False
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and any(marker in head for marker in _HEAD_MARKERS)


def load_kineto(path: Path) -> KinetoTrace:
    """The decoded trace; InputError for an unreadable or invalid file."""
    try:
        with _open(path) as handle:
            data = handle.read()
    except (OSError, EOFError, zlib.error) as err:  # a damaged .gz: zlib.error
        raise InputError(f"cannot read Kineto trace: {err}", path=path) from err
    try:
        return _DECODER.decode(data)
    except msgspec.ValidationError as err:  # valid JSON of another shape
        raise SchemaError(f"not a Kineto trace: {err}", path=path) from err
    except msgspec.DecodeError as err:
        raise InputError(f"invalid or truncated Kineto trace JSON: {err}", path=path) from err


DEVICE_KIND = pl.col("cat").str.to_lowercase().replace_strict(DEVICE_CATEGORIES, default=None)
HOST = pl.col("x") & DEVICE_KIND.is_null()  # host X events: everything but device work


@dataclass(frozen=True)
class KinetoKernels:
    path: Path
    kernels: pl.DataFrame  # kernel-table columns plus ``correlation`` and ``ctas``
    rank: int | None
    devices: tuple[int, ...]  # devices with device work
    num_sms: dict[int, int]  # deviceProperties: device id → SM count
    notes: list[str] = field(default_factory=list)
    malformed: int = 0  # device events without a stream or a valid ts/dur: skipped, counted


def host_steps(frame: pl.DataFrame) -> pl.DataFrame:
    """``ProfilerStep#N`` host ranges: step_start, step_end, step (sorted by start)."""
    # Python's re, which the reader used, lets ``$`` match before a final newline
    number = pl.col("name").str.extract(r"^ProfilerStep#(\d+)\n?$")
    picked = HOST & number.is_not_null() & (pl.col("cat") != "gpu_user_annotation").fill_null(True)
    return (
        frame.filter(picked)
        .select(
            pl.col("start_ns").alias("step_start"),
            (pl.col("start_ns") + pl.col("dur_ns")).alias("step_end"),
            number.cast(pl.Int64).alias("step"),
        )
        .drop_nulls()
        .sort("step_start")
    )


def launches(events: list[Event], frame: pl.DataFrame) -> pl.DataFrame:
    """Host runtime calls that carry a correlation: correlation, launch_ns, thread (pid, tid)."""
    picked = HOST & pl.col("correlation").is_not_null() & pl.col("stream").is_null()
    mask = frame.select(picked).to_series()
    return (
        frame.filter(mask)
        .select("correlation", pl.col("start_ns").alias("launch_ns"))
        .with_columns(threads(events, mask).alias("thread"))
        .unique("correlation", keep="first", maintain_order=True)
    )


def _device_rows(frame: pl.DataFrame) -> pl.DataFrame:
    kind = DEVICE_KIND
    name = pl.col("name").fill_null("")
    return frame.filter(pl.col("x") & kind.is_not_null()).select(
        pl.coalesce("device", "pid").alias("device"),
        pl.when(pl.col("stream_given").fill_null(False) & pl.col("stream").is_null())
        .then(None)
        .otherwise(pl.coalesce("stream", "tid"))
        .alias("stream_id"),
        name.alias("name"),
        pl.col("cat").alias("accelerator_core"),
        ((kind == "kernel") & name.str.contains(NCCL_KERNEL)).alias("is_communication"),
        (kind == "copy").alias("is_copy"),
        "start_ns",
        (pl.col("start_ns") + pl.col("dur_ns")).alias("end_ns"),
        "correlation",
        "ctas",
    )


def same_stream_overlaps(rows: pl.DataFrame) -> str | None:
    """The capture-validity note (docs/formats.md): device events that start before an
    earlier one on the same stream has ended; None when none do."""
    found = (
        rows.sort("device", "stream_id", "start_ns", "end_ns")
        .with_columns(
            pl.col("end_ns").cum_max().shift(1).over("device", "stream_id").alias("before")
        )
        .filter(pl.col("start_ns") < pl.col("before"))
        .with_columns((pl.min_horizontal("end_ns", "before") - pl.col("start_ns")).alias("ns"))
    )
    if found.is_empty():
        return None
    worst = found.sort("ns", descending=True).row(0, named=True)
    streams = sorted(set(found["stream_id"].to_list()))
    return (
        f"capture validity: {found.height} device event(s) overlap an earlier one on the same "
        f"stream (streams {streams}; largest {worst['ns']} ns, {worst['name'][:60]!r} on "
        f"stream {worst['stream_id']} at {worst['start_ns']} ns). A CUDA stream runs its work "
        "in order: this is legitimate only with programmatic dependent launch (Hopper and "
        "later); otherwise the trace's times are wrong. Busy time counts the overlap once"
    )


def _hta_note(frame: pl.DataFrame, rows: pl.DataFrame) -> str | None:
    """Our exact communication/compute overlap beside HTA's; None without communication."""
    from overlap_check.model.intervals import intersection_length, union_length
    from overlap_check.readers.kineto_hta import hta_comm_overlap

    comm = rows.filter(pl.col("is_communication"))
    if comm.is_empty():
        return None
    comp = rows.filter(~pl.col("is_communication") & ~pl.col("is_copy"))
    ends = ("start_ns", "end_ns")
    both = intersection_length(*(comm[c] for c in ends), *(comp[c] for c in ends))
    exact = 100 * both / max(1, union_length(*(comm[c] for c in ends)))
    hta = hta_comm_overlap(frame)
    return (
        f"communication/compute overlap of the whole trace: {exact:.2f}% exact (every kernel, "
        f"ns); HTA-compatible {'n/a' if hta is None else f'{hta:.2f}%'} (HTA "
        "get_comm_comp_overlap: 'ncclKernel' names only, kernels launched before the last "
        "ProfilerStep starts, whole µs when ts has decimals)"
    )


def sm_demand(rows: pl.DataFrame, num_sms: dict[int, int]) -> str | None:
    """The SM demand note (docs/formats.md), advice only; None when no kernels ran
    concurrently or the SM count is unknown."""
    parts = []
    kernels = rows.filter(~pl.col("is_copy") & pl.col("ctas").is_not_null())
    for (device,), group in kernels.group_by("device", maintain_order=True):
        sms = num_sms.get(device) if isinstance(device, int) else None
        if sms is None or group.height < 2:
            continue
        times = np.concatenate([group["start_ns"].to_numpy(), group["end_ns"].to_numpy()])
        ctas = group["ctas"].to_numpy()
        weights = np.concatenate([ctas, -ctas])
        counts = np.concatenate([np.ones(group.height), -np.ones(group.height)])
        order = np.lexsort((weights, times))  # at one instant, ends before starts
        times, demand, running = times[order], np.cumsum(weights[order]), np.cumsum(counts[order])
        spans = np.diff(times)
        together = spans[running[:-1] >= 2]
        over = spans[(running[:-1] >= 2) & (demand[:-1] > sms)]
        if together.sum() > 0:
            peak = int(demand[:-1][running[:-1] >= 2].max())
            parts.append(
                f"GPU {device}: kernels (NCCL too) overlapped {together.sum() / 1000:.3f} µs; for "
                f"{over.sum() / 1000:.3f} µs of it their grids asked for more CTAs than its "
                f"{sms} SMs (peak {peak} CTAs), so they shared SMs there"
            )
    if not parts:
        return None
    return (
        "SM demand (advice only: CTAs per SM depend on occupancy): "
        + "; ".join(parts)
        + ". A partition (green contexts, MPS) or smaller grids keep a side stream's SMs free"
    )


def _kernel_rows(frame: pl.DataFrame) -> tuple[pl.DataFrame, tuple[int, ...], list[str], int]:
    """The usable device rows (streams per device), the devices with work, notes, and how
    many device rows were malformed (no stream, no valid ts/dur)."""
    rows = _device_rows(frame)
    notes: list[str] = []
    usable = (
        pl.col("start_ns").is_not_null()
        & pl.col("stream_id").is_not_null()
        & (pl.col("end_ns") >= pl.col("start_ns"))
    ).fill_null(False)
    bad = rows.height - rows.filter(usable).height
    if bad:
        notes.append(f"{bad} device events without a stream or a valid ts/dur skipped")
    rows = rows.filter(usable)
    devices = tuple(sorted(d for d in rows["device"].unique().to_list() if d is not None))
    if len(devices) > 1:
        rows = rows.with_columns(
            (pl.col("device") * MULTI_DEVICE_STRIDE + pl.col("stream_id")).alias("stream_id")
        )
        notes.append(
            f"device work on GPUs {list(devices)}: stream ids are device * "
            f"{MULTI_DEVICE_STRIDE:,} + stream (streams are per device)"
        )
    return rows, devices, notes, bad


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_kineto(path: Path) -> KinetoKernels:
    """Device kernels, copies and NCCL kernels of one Kineto trace, with steps."""
    trace = load_kineto(path)
    events = trace.traceEvents
    frame = event_frame(events)
    rows, devices, notes, malformed = _kernel_rows(frame)
    num_sms = {
        d: s
        for p in trace.deviceProperties or ()
        if (d := _int(p.id)) is not None and (s := _int(p.numSms)) is not None
    }
    found = (same_stream_overlaps(rows), sm_demand(rows, num_sms), _hta_note(frame, rows))
    notes.extend(note for note in found if note is not None)
    launched = rows.join(
        launches(events, frame), on="correlation", how="left", maintain_order="left"
    )
    rows = rows.with_columns(launching_ops(events, frame, launched).alias("op_type"))
    steps = host_steps(frame)
    if not steps.is_empty():
        at = launched.select(pl.coalesce("launch_ns", "start_ns").alias("start_ns"))
        step = with_steps(at, steps).get_column("step")
        rows = rows.with_columns(step.alias("step"))
    info = trace.distributedInfo
    rank = _int(info.rank) if info is not None else None
    rank = rank if rank is not None and rank >= 0 else None
    return KinetoKernels(path, rows, rank, devices, num_sms, notes, malformed)


MODULE_PREFIX = "nn.Module: "


def host_calls(events: list[Event], frame: pl.DataFrame, picked: pl.Expr) -> pl.DataFrame:
    """thread, start_ns, end_ns, ``str(name)`` of the host X events ``picked`` that have a
    length."""
    mask = frame.select(picked.fill_null(False)).to_series()
    return (
        frame.filter(mask)
        .select(
            threads(events, mask).alias("thread"),
            "start_ns",
            (pl.col("start_ns") + pl.col("dur_ns")).alias("end_ns"),
            name_texts(events, mask).alias("name"),
        )
        .drop_nulls()
        .filter(pl.col("end_ns") > pl.col("start_ns"))
    )


def module_calls(events: list[Event], frame: pl.DataFrame) -> pl.DataFrame:
    """The ``nn.Module: <Name>_<N>`` calls, their names without the prefix."""
    calls = host_calls(events, frame, pl.col("x") & pl.col("name").str.starts_with(MODULE_PREFIX))
    return calls.with_columns(pl.col("name").str.slice(len(MODULE_PREFIX)))


def launching_ops(events: list[Event], frame: pl.DataFrame, launched: pl.DataFrame) -> pl.Series:
    """Each kernel's ``op_type`` (docs/formats.md): the innermost ``cpu_op`` holding its
    launch (``launched``: the rows with ``thread``, ``launch_ns``); null when none does."""
    from overlap_check.readers.calls import innermost_calls

    ops = pl.col("x") & pl.col("cat").str.to_lowercase().is_in(["cpu_op", "operator"])
    calls = host_calls(events, frame, ops)
    points = launched.select("thread", "launch_ns").with_row_index("row")
    known = points.drop_nulls(["thread", "launch_ns"])
    result = pl.Series("op_type", [None] * launched.height, dtype=pl.String)
    if calls.is_empty() or known.is_empty():
        return result
    names = calls.get_column("name").gather(innermost_calls(calls, known))
    return result.scatter(known.get_column("row"), names)


def kineto_launches(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The module calls of one trace, and each kernel's (stream_id, start_ns) with the
    host thread and time of the runtime call that launched it (``args.correlation``)."""
    events = load_kineto(path).traceEvents
    frame = event_frame(events)
    rows = _kernel_rows(frame)[0]
    points = (
        rows.select("stream_id", "start_ns", "correlation")
        .join(launches(events, frame), on="correlation")
        .select("thread", "launch_ns", "stream_id", "start_ns")
    )
    return module_calls(events, frame), points
