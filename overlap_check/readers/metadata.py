"""Capture metadata: profiler_info*.json, device info.json, dir-name stamps.

Auxiliary (docs/formats.md, "Metadata"): a broken file is a note, not an error."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from overlap_check.model import DeviceCores

_RANK_IN_NAME = re.compile(r"^profiler_info_(-?\d+)\.json$")
_DIR_TIMESTAMP = re.compile(r"(?:^|_)(\d{17})(?=_|$)")
_DEVICE_INFO_NAME = re.compile(r"^info\.json\.(\d+)$")


@dataclass(frozen=True)
class ProfilerInfo:
    rank: int | None
    level: str | None
    end_ns: int | None
    notes: tuple[str, ...] = ()


MAX_ID = 2**31 - 1  # ranks and device ids are Int32 in the kernel table


def _as_int(value: object) -> int | None:
    """An int from an int or integer text; None otherwise (bools are not ints here)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(value.strip()) if isinstance(value, str) else None
    except ValueError:
        return None


def rank_value(value: object) -> int | None:
    """``rank_id`` as written (int or text); -1 and other negatives mean no rank."""
    rank = _as_int(value)
    return rank if rank is not None and 0 <= rank <= MAX_ID else None


def _load_json(path: Path) -> tuple[Any, str | None]:
    try:
        return json.loads(path.read_bytes()), None
    except (OSError, ValueError) as err:
        return None, f"{path}: unreadable ({type(err).__name__}: {err}); ignored"
    except RecursionError:  # nested deeper than the decoder goes: no metadata file is
        return None, f"{path}: unreadable (JSON nested too deeply); ignored"


def read_profiler_info(path: Path) -> ProfilerInfo:
    """Rank, profiler level and end of collection from one profiler_info*.json."""
    name_match = _RANK_IN_NAME.match(path.name)
    rank_from_name = rank_value(name_match.group(1)) if name_match else None
    data, problem = _load_json(path)
    if not isinstance(data, dict):
        note = problem or f"{path}: not a JSON object; ignored"
        return ProfilerInfo(rank=rank_from_name, level=None, end_ns=None, notes=(note,))
    rank = rank_value(data["rank_id"]) if "rank_id" in data else rank_from_name
    notes: tuple[str, ...] = ()
    if rank is None and _as_int(data.get("rank_id")) not in (None, -1):
        notes = (f"{path}: rank_id {data['rank_id']!r} is not a rank; ignored",)
    config = data.get("config")
    experimental = config.get("experimental_config") if isinstance(config, dict) else None
    experimental = experimental if isinstance(experimental, dict) else {}
    level = experimental.get("_profiler_level", experimental.get("profiler_level"))
    end_info = data.get("end_info")
    end_ns = _as_int(end_info.get("collectionTimeEnd")) if isinstance(end_info, dict) else None
    return ProfilerInfo(rank, level if isinstance(level, str) and level else None, end_ns, notes)


def dir_timestamp_ns(name: str) -> int | None:
    """The ``YYYYmmddHHMMSSfff`` stamp in a result / PROF dir name, as ns, read as UTC
    (torch_npu ≤ 7.x wrote UTC, master local time; the name carries no zone): it only
    orders runs that lack ``collectionTimeEnd``."""
    stamps = _DIR_TIMESTAMP.findall(name)
    if len(stamps) != 1:
        return None
    try:
        moment = datetime.strptime(stamps[0], "%Y%m%d%H%M%S%f").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return int(moment.replace(microsecond=0).timestamp()) * 10**9 + moment.microsecond * 1_000


def device_info_number(path: Path) -> int | None:
    """N of ``device_N/info.json.N``."""
    match = _DEVICE_INFO_NAME.match(path.name)
    return int(match.group(1)) if match else None


def read_device_cores(
    paths: tuple[Path, ...], device: int | None
) -> tuple[DeviceCores | None, tuple[str, ...]]:
    """AI Core / AI Vector core counts from ``device_N/info.json.N`` (``DeviceInfo[]``): the
    file of ``device`` when known, else the first file that has counts."""
    ordered = sorted(paths, key=lambda p: (device_info_number(p) != device, str(p)))
    notes: list[str] = []
    for path in ordered:
        data, problem = _load_json(path)
        if problem:
            notes.append(problem)
            continue
        infos = data.get("DeviceInfo") if isinstance(data, dict) else None
        for info in infos if isinstance(infos, list) else ():
            aicore = _as_int(info.get("ai_core_num")) if isinstance(info, dict) else None
            if aicore is not None and aicore > 0:
                vector = _as_int(info.get("aiv_num")) or 0
                return DeviceCores(aicore, max(vector, 0), "info.json", str(path)), tuple(notes)
    return None, tuple(notes)


def info_json_cores(paths: Iterable[Path]) -> list[DeviceCores]:
    """The cores each ``device_N/info.json.N`` file gives (others left out)."""
    return [cores for path in paths if (cores := read_device_cores((path,), None)[0])]


def prof_rank(paths: tuple[Path, ...]) -> int | None:
    """``rank_id`` of an msprof PROF dir's info.json files (host/info.json, device info)."""
    for path in paths:
        data, _ = _load_json(path)
        rank = rank_value(data.get("rank_id")) if isinstance(data, dict) else None
        if rank is not None:
            return rank
    return None
