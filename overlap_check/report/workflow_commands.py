"""GitHub Actions workflow commands (``::error file=F,line=N,title=T::message``), escaped
by actions/toolkit's rules (command.ts), for ``--format github`` of analyze and lint."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def escape_data(text: str) -> str:
    """A command's message (or any plain line printed among commands): one line, always."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (``file=``, ``title=``): the message escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(file: str, environ: Mapping[str, str] = os.environ) -> str:
    """``file`` relative to ``GITHUB_WORKSPACE``, else the repository root, else as given."""
    path = Path(os.path.abspath(file))
    roots = [Path(environ["GITHUB_WORKSPACE"])] if environ.get("GITHUB_WORKSPACE") else []
    roots += [folder for folder in path.parents if (folder / ".git").exists()][:1]
    for root in roots:
        try:
            return path.relative_to(os.path.abspath(root)).as_posix()
        except ValueError:
            continue
    return file


def command(kind: str, message: str, **properties: str | int | None) -> str:
    """``::kind key=value,...::message``, properties that are None left out."""
    if properties.get("file") is not None:
        properties["file"] = workspace_path(str(properties["file"]))
    given = [f"{key}={escape_property(str(value))}" for key, value in properties.items()
             if value is not None]  # fmt: skip
    head = f"::{kind} {','.join(given)}" if given else f"::{kind}"
    return f"{head}::{escape_data(message)}"
