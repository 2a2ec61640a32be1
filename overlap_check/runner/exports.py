"""Is a run's profiler export whole? Files cut short are found before anything judges them.

A profiler that hits a file-size limit (RLIMIT_FSIZE) or a full disk stops
writing mid-file, often without failing the workload. Judging what is left
would pass or fail on a fraction of the kernels, so a run whose export looks
cut short is recorded ``incomplete`` and never judged. The checks are about
the file ends only (cheap on big exports): a text table ends with a newline,
a JSON document with ``}`` or ``]``, an SQLite file holds every page its
header counts.
"""

from __future__ import annotations

from pathlib import Path

CHECKED = (".csv", ".json", ".db")
SQLITE_MAGIC = b"SQLite format 3\x00"
TAIL = 64  # bytes read from the end of each file


def cut_short(root: Path) -> str | None:
    """Why the export under ``root`` is not whole (naming the first bad file), or None."""
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in CHECKED or not path.is_file():
            continue
        try:
            why = _file_problem(path)
        except OSError as err:
            why = f"cannot be read ({err.strerror})"
        if why is not None:
            return f"{path} {why}: the export was cut short (a file-size limit, a full disk?)"
    return None


def _file_problem(path: Path) -> str | None:
    size = path.stat().st_size
    if size == 0:
        return "is empty"
    suffix = path.suffix.lower()
    with path.open("rb") as handle:
        if suffix == ".db":
            return _sqlite_problem(handle.read(100), size)
        handle.seek(max(0, size - TAIL))
        tail = handle.read()
    if suffix == ".csv" and not tail.endswith(b"\n"):
        return "ends in the middle of a line"
    if suffix == ".json" and tail.rstrip()[-1:] not in (b"}", b"]"):
        return "ends in the middle of its JSON"
    return None


def _sqlite_problem(header: bytes, size: int) -> str | None:
    if not header.startswith(SQLITE_MAGIC) or len(header) < 100:
        return "is not a whole SQLite file"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The page count is valid only when the change counter equals the version-valid-for number.
    counted = header[24:28] == header[92:96]
    if counted and pages and size < pages * page_size:
        return f"holds {size} of the {pages * page_size} bytes its header counts"
    return None
