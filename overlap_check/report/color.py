"""Terminal colour for the text reports: when to use it (docs/contract.md) and how.
Renderers take a plain ``color: bool``; painting only wraps the visible text in escapes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

COLOR_MODES = ("auto", "always", "never")

_RESET = "\033[0m"
# SGR parameters; a style is one name or several separated by spaces ("bold red").
_CODES = {"bold": "1", "red": "31", "green": "32", "yellow": "33"}
VERDICT_STYLE = dict.fromkeys(("real", "pass"), "green")
VERDICT_STYLE |= dict.fromkeys(("partial", "provisional"), "yellow")
VERDICT_STYLE |= dict.fromkeys(("fake", "not-split", "no-evidence", "fail"), "red")
BASELINE_STYLE = {"improved": "green", "missing-in-base": "yellow"}
BASELINE_STYLE |= dict.fromkeys(("regressed", "missing-in-head"), "red")


class _Stream(Protocol):
    def isatty(self) -> bool: ...


def use_color(stream: _Stream, environ: Mapping[str, str]) -> bool:
    """``auto``: NO_COLOR wins, then FORCE_COLOR, else a terminal whose TERM is not dumb."""
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


def color_for(mode: str, stream: _Stream, environ: Mapping[str, str]) -> bool:
    """``--color MODE``: ``always``/``never`` as said, ``auto`` by :func:`use_color`."""
    if mode not in COLOR_MODES:
        raise ValueError(f"colour mode {mode!r} is not one of {', '.join(COLOR_MODES)}")
    if mode == "auto":
        return use_color(stream, environ)
    return mode == "always"


def paint(text: str, style: str | None, enabled: bool) -> str:
    """``text`` in the named style (``red``, ``bold``, ``bold green`` ...) when enabled."""
    if not enabled or not style or not text:
        return text
    codes = [_CODES.get(name) for name in style.split()]
    if not all(codes):
        return text
    return f"\033[{';'.join(c for c in codes if c)}m{text}{_RESET}"


def paint_verdict(verdict: str, enabled: bool) -> str:
    return paint(verdict, VERDICT_STYLE.get(verdict), enabled)


def bold(text: str, enabled: bool) -> str:
    return paint(text, "bold", enabled)
