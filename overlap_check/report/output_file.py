"""Writing an output file (``--output``) so that a reader never sees half of it.

The text goes to a temporary file in the target's folder (same file system, so
the rename is atomic), is flushed to disk, and then replaces the target with
:func:`os.replace`. A failure at any point leaves the old file as it was and no
temporary file behind.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Collection
from pathlib import Path

from overlap_check.model.errors import InputError

# --output FILE: the format its suffix names (analyze and lint; each keeps the ones it has)
SUFFIX_FORMATS = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".xml": "junit",
    ".txt": "text",
    ".log": "text",
    ".sarif": "sarif",
}


def format_of_suffix(path: str | Path, formats: Collection[str]) -> str | None:
    """The format ``--output FILE`` writes by its suffix, when it is one of ``formats`` (the
    command's); None: the suffix names none of them."""
    found = SUFFIX_FORMATS.get(Path(path).suffix.lower())
    return found if found in formats else None


def write_atomically(path: Path, data: str | bytes) -> None:
    """Replace ``path`` by a file holding ``data`` (str: UTF-8) all at once; OSError on failure."""
    target = path.resolve() if path.is_symlink() else path  # write through a link, keep it
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open with 0o666: the new file gets the usual umask-based mode (mkstemp's is 0600).
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_output(path: str | Path, data: str | bytes, what: str = "the report") -> None:
    """:func:`write_atomically`, with a failure as an InputError naming the file (exit 2)."""
    if isinstance(data, str):  # a name that is not UTF-8 (file system surrogates): \udcff,
        data = data.encode("utf-8", "backslashreplace")  # in JSON the exact escape
    try:
        write_atomically(Path(path), data)
    except OSError as err:
        raise InputError(f"cannot write {what}: {err.strerror or err}", path=str(path)) from None
