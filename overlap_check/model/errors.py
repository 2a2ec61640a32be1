"""Errors that carry their exit code (docs/contract.md, "Exit codes"): the library raises
them, only the CLI prints them. A gate failure (exit 1) is not an error: it is a result."""

from __future__ import annotations

import os
from pathlib import Path


class OverlapCheckError(Exception):
    """Base class. ``str(err)`` is the one-line message a user sees."""

    exit_code: int = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.key = key
        self.hint = hint

    def __str__(self) -> str:
        line = f":{self.line}" if self.line is not None else ""
        where = f"{self.path}{line}: " if self.path is not None else ""
        key = f" (key {self.key!r})" if self.key is not None else ""
        return where + self.message + key + (f"; {self.hint}" if self.hint else "")


class InputError(OverlapCheckError):
    """Profiler output that is missing, unreadable or malformed."""


class SchemaError(InputError):
    """A file whose header or structure is not one the readers know."""


class NoStreamDataError(InputError):
    """A capture with no per-stream data in any source (Level0 without trace/db)."""


class ConfigError(OverlapCheckError):
    """A config file or option value that is wrong; names the file and key."""


class UsageError(OverlapCheckError):
    """Options that do not fit together."""


class MissingDependencyError(UsageError):
    """An optional dependency is not installed; the hint names the extra to install."""


class WorkloadError(OverlapCheckError):
    """`run`: the profiled command failed."""

    exit_code = 3


class Interrupted(OverlapCheckError):
    """Ctrl-C; the runs completed so far are kept."""

    exit_code = 130


class Terminated(KeyboardInterrupt):
    """SIGTERM while worker processes read captures: a KeyboardInterrupt, so that whatever
    ends work on Ctrl-C ends it too; the CLI answers with one line and exit 143."""

    exit_code = 143


def regular_file(path: str | Path, what: str = "file") -> Path:
    """``path``, or InputError (exit 2) naming it when it exists but is not a regular file:
    a FIFO would block forever, a directory or a broken link cannot be read."""
    path = Path(path)
    if path.is_file() or not os.path.lexists(path):  # absent: the reader says so itself
        return path
    if not path.exists():
        kind = "a broken symbolic link"
    elif path.is_dir():
        kind = "a directory"
    elif path.is_fifo():
        kind = "a FIFO"
    else:
        kind = "not a regular file"
    raise InputError(f"is {kind}, not a {what}", path=path)
