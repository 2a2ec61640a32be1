"""GitHub Actions workflow commands (``::error file=F,line=N,title=T::message``).

The one escaping of user text for ``--format github`` (analyze and lint). The
runner takes any output line that starts with ``::`` as a command, so text from
a plan name, a kernel name or a path must neither end the line nor end the
property list. The rules are those of GitHub's actions/toolkit (command.ts):
in the message ``%``, CR and LF are percent-encoded; in a property value
``:`` and ``,`` as well. GitHub decodes them again when it shows the annotation.
"""

from __future__ import annotations


def escape_data(text: str) -> str:
    """A command's message (or any plain line printed among commands): one line, always."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value (``file=``, ``title=``): the message escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, **properties: str | int | None) -> str:
    """``::kind key=value,...::message``; properties that are None are left out, in order."""
    given = [f"{key}={escape_property(str(value))}" for key, value in properties.items()
             if value is not None]  # fmt: skip
    head = f"::{kind} {','.join(given)}" if given else f"::{kind}"
    return f"{head}::{escape_data(message)}"
