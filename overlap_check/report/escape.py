"""The one escaping layer for names someone else wrote (kernel, plan, path): one function
per reader kind, used by every renderer and message (docs/contract.md). Workflow-command
escapes are in workflow_commands.py, XML's forbidden characters in junit.py."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

T = TypeVar("T")

# Cc, Cf, Zl, Zp and Cs of Unicode 15 (tests/test_escape.py checks them against unicodedata):
# controls (C0, DEL, C1), soft hyphen, bidi marks and overrides, zero-width characters,
# line/paragraph separators, the BOM, tag characters.
_FORMAT = (
    "\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
_INVISIBLE = re.compile(f"[\x00-\x1f\x7f-\x9f{_FORMAT}]")
_COMMAND_START = re.compile(r"^(\s*)([:#])(?=:|#\[)", re.MULTILINE)
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _code(match: re.Match[str], group: int = 0) -> str:
    char = match.group(group)
    point = ord(char)
    if char in _SHORT:
        return _SHORT[char]
    if point < 0x100:
        return f"\\x{point:02x}"
    return f"\\u{point:04x}" if point < 0x10000 else f"\\U{point:08x}"


def shown(text: str) -> str:
    """``text`` for a terminal or a log line: every invisible character escaped, newlines too."""
    return text if text.isprintable() else _INVISIBLE.sub(_code, text)


def displayed(value: T) -> T:
    """A Report (any tree of dataclasses and containers) with every string :func:`shown`."""
    return _walk(value)  # type: ignore[no-any-return]


def _walk(value: Any) -> Any:
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, tuple | list):
        items = [_walk(item) for item in value]
        same = all(new is old for new, old in zip(items, value, strict=True))
        return value if same else type(value)(items)
    if isinstance(value, dict):
        pairs = list(value.items())
        walked = _walk(pairs)  # the same list when no key or value changed
        return value if walked is pairs else dict(walked)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS.get(type(value))
        if names is None:
            names = tuple(f.name for f in dataclasses.fields(value) if f.init)
            _FIELDS[type(value)] = names
        changed = {}
        for name in names:
            old = getattr(value, name)
            if not isinstance(old, int | float | bool | None):  # most fields: nothing to do
                new = _walk(old)
                if new is not old:
                    changed[name] = new
        return dataclasses.replace(value, **changed) if changed else value
    return value


_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass's init fields, by type


def guarded(text: str) -> str:
    """Text whose lines cannot start a workflow command (``::``, ``##[``): ``\\x3a:error``."""
    return _COMMAND_START.sub(lambda m: m.group(1) + _code(m, 2), text)


# CommonMark markup (backslash-escapable ASCII punctuation that can start markup), and what
# GitHub links without markup: mentions and e-mail (@), issues (#), URLs (://), www. names
_MARKDOWN = re.compile(
    r"[\\`*\[\]<>!|~&]|(?<![^\W_])_|_(?![^\W_])|[@#]|:(?=//)|(?<=www)\.", re.IGNORECASE
)  # ``_`` inside a word (hidden_pct) is no markup


def markdown(text: str) -> str:
    """``text`` as literal Markdown: markup escaped, ``@``, ``#``, the ``:`` of ``://`` and the
    ``.`` of ``www.`` each a code span, so that GitHub links no one and nothing."""
    return _MARKDOWN.sub(_markdown_code, shown(text))


def _markdown_code(match: re.Match[str]) -> str:
    char = match.group()
    return f"`{char}`" if char in "@#:." else "\\" + char


_JSON_INVISIBLE = re.compile(f"[\x7f-\x9f{_FORMAT}]")  # the encoder escapes C0 itself
_ASCII_BUT_DEL = bytes(range(0x7F))


def json_text(document: str) -> str:
    """The JSON document with every invisible character its encoder left raw as ``\\uXXXX``."""
    if document.isascii() and "\x7f" not in document:  # a flag, then a memchr (70 MB: ~3 ms)
        return document
    # else the pattern scans only the non-ASCII characters (a regex scan costs a second)
    rest = document.encode("utf-8", "surrogatepass").translate(None, _ASCII_BUT_DEL)
    if not _JSON_INVISIBLE.search(rest.decode("utf-8", "surrogatepass")):
        return document
    return _JSON_INVISIBLE.sub(_json_code, document)


def _json_code(match: re.Match[str]) -> str:
    encoded = match.group().encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{encoded[i]:02x}{encoded[i + 1]:02x}" for i in range(0, len(encoded), 2))
