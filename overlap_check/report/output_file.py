"""Writing an output file (``--output``) so that a reader never sees half of it: a temporary
file in the same folder, fsynced, then renamed over the target. Only a regular file is
replaced; a link, device, FIFO or folder is refused (docs/contract.md)."""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Collection
from pathlib import Path

from overlap_check.model.errors import InputError

# --output FILE: the format its suffix names (analyze and lint; each keeps the ones it has)
SUFFIX_FORMATS = {".json": "json", ".md": "markdown", ".markdown": "markdown", ".xml": "junit"}
SUFFIX_FORMATS |= {".txt": "text", ".log": "text", ".sarif": "sarif"}


def format_of_suffix(path: str | Path, formats: Collection[str]) -> str | None:
    """The format of ``--output FILE``'s suffix among the command's ``formats``, else None."""
    found = SUFFIX_FORMATS.get(Path(path).suffix.lower())
    return found if found in formats else None


def _kind(mode: int) -> str | None:
    """What a file that must not be replaced is, in words; None: a regular file."""
    kinds = [(stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")]  # fmt: skip
    other = None if stat.S_ISREG(mode) else "a special file"
    return next((what for test, what in kinds if test(mode)), other)


def check_target(path: str | Path) -> None:
    """InputError when ``path`` exists and is no regular file (called early: fail at once)."""
    try:
        kind = _kind(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return
    if kind is not None:
        never = "overlap-check writes only a regular file, never through a link or into a device"
        raise InputError(f"is {kind}: {never}", path=path, hint="remove it or name another file")


def write_atomically(path: Path, data: str | bytes) -> None:
    """Replace ``path`` by ``data`` (str: UTF-8) all at once; OSError on failure."""
    check_target(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open with 0o666: the new file gets the usual umask-based mode (mkstemp's is 0600).
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)  # replaces the name itself: never follows a link
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_output(path: str | Path, data: str | bytes, what: str = "the report") -> None:
    if isinstance(data, str):  # a name that is not UTF-8 (file system surrogates): \udcff,
        data = data.encode("utf-8", "backslashreplace")  # in JSON the exact escape
    try:
        write_atomically(Path(path), data)
    except OSError as err:
        raise InputError(f"cannot write {what}: {err.strerror or err}", path=str(path)) from None
