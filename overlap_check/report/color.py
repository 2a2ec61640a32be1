"""Terminal colour for the text report: when to use it and how.

``NO_COLOR`` (any non-empty value, https://no-color.org) turns colour off and
wins; otherwise ``FORCE_COLOR`` (non-empty, not ``0``) turns it on, for CI logs
that render ANSI; otherwise colour is used on a terminal whose TERM is not ``dumb``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

_RESET = "\033[0m"
STYLES = {"red": "\033[31m", "yellow": "\033[33m", "green": "\033[32m", "bold": "\033[1m"}
VERDICT_STYLE = {
    "real": "green",
    "pass": "green",
    "partial": "yellow",
    "provisional": "yellow",
    "fake": "red",
    "not-split": "red",
    "no-evidence": "red",
    "fail": "red",
}


class _Stream(Protocol):
    def isatty(self) -> bool: ...


def use_color(stream: _Stream, environ: Mapping[str, str]) -> bool:
    """Whether to colour what is written to ``stream``."""
    if environ.get("NO_COLOR", ""):
        return False
    force = environ.get("FORCE_COLOR", "")
    if force:
        return force != "0"
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # closed or unusual streams
        return False
    return tty and environ.get("TERM", "") != "dumb"


def paint(text: str, style: str | None, enabled: bool) -> str:
    """``text`` in the named style (``red``, ``green`` ... ) when enabled."""
    if not enabled or style is None or style not in STYLES:
        return text
    return f"{STYLES[style]}{text}{_RESET}"


def paint_verdict(verdict: str, enabled: bool) -> str:
    """A verdict word (real, fake, pass ...) in its colour."""
    return paint(verdict, VERDICT_STYLE.get(verdict), enabled)
