"""Checks of single config values, shared by the file parser and the merge of CLI/env values.

A check returns the value (converted where needed) or raises :class:`Invalid`
with a message; the caller adds the file, key and line."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from typing import Any

from overlap_check.model import ExecutionPath, FailOn, Order, Per, SideKind, choices_of
from overlap_check.model.errors import ConfigError


class Invalid(Exception):
    """A value that fails its check; the caller adds the file, key and line."""


def number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Invalid(f"expected a number, got {value!r}")
    return float(value)


def non_negative(value: Any) -> float:
    checked = number(value)
    if checked < 0:
        raise Invalid(f"expected a number >= 0, got {value!r}")
    return checked


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(i?)b?|b?)\s*$", re.IGNORECASE)


def size(value: Any) -> int:
    """A size in bytes: a whole number, or text such as ``"20GB"`` / ``"16GiB"`` / ``"512M"``
    (K/M/G/T: powers of 1000, with ``i``: of 1024); 0 means no limit."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    found = _SIZE.match(value) if isinstance(value, str) else None
    if found is None:
        raise Invalid(f'expected a size such as "16GiB", "500MB" or 0 (no limit), got {value!r}')
    number, unit, binary = found.groups()
    power = "kmgt".index(unit.lower()) + 1 if unit else 0
    return int(float(number) * (1024 if binary else 1000) ** power)


def fraction(value: Any) -> float:
    checked = number(value)
    if not 0.0 <= checked <= 1.0:
        raise Invalid(f"expected a fraction between 0 and 1, got {value!r}")
    return checked


def integer(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"expected an integer, got {value!r}")
        if value < minimum:
            raise Invalid(f"expected an integer >= {minimum}, got {value}")
        return value

    return check


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"expected true or false, got {value!r}")
    return value


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Invalid(f"expected a non-empty string, got {value!r}")
    return value


def choice(*allowed: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in allowed:
            raise Invalid(f"expected one of {', '.join(map(repr, allowed))}, got {value!r}")
        return str(value)

    return check


def ge_aicore_num(value: Any) -> str:
    # one parser for config files and pasted strings: overlap_check.readers.graph_dump
    from overlap_check.readers.graph_dump import parse_aicore_num

    if not isinstance(value, str):
        raise Invalid(f'expected "aic|aiv" such as "24|48", got {value!r}')
    try:
        parse_aicore_num(value)
    except ConfigError as err:
        raise Invalid(err.message) from None
    return value


def rule_ids(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Invalid(f'expected a list of rule ids such as ["OC103"], got {value!r}')
    for item in value:
        if not re.fullmatch(r"OC\d{1,3}", item):  # a full id (OC103) or a prefix (OC1)
            raise Invalid(f"expected rule ids like 'OC103' or prefixes like 'OC1', got {item!r}")
    return tuple(value)


def lint_suppressions(value: Any) -> tuple[str, ...]:
    """``["models/glm.py:1405:OC108", "common_utils.py:OC105"]``: a path pattern, an
    optional line and a rule (or prefix), each a finding suppressed knowingly."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Invalid(f'expected a list such as ["models/glm.py:1405:OC108"], got {value!r}')
    for item in value:
        if not re.fullmatch(r"[^:]+(:\d+)?:OC\d{1,3}", item):
            raise Invalid(f"expected 'PATH[:LINE]:RULE' such as 'model.py:12:OC104', got {item!r}")
    return tuple(value)


def regex(value: Any) -> str:
    """A regular expression that can select kernel names (:func:`regex_problem`)."""
    problem = regex_problem(text(value))
    if problem:
        raise Invalid(problem)
    return str(value)


def regexes(value: Any) -> tuple[str, ...]:
    """A list of regular expressions (kernel-name patterns), each one compiling."""
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise Invalid(f'expected a list of regular expressions such as ["MyOp"], got {value!r}')
    for item in value:
        problem = regex_problem(item)
        if problem:
            raise Invalid(problem)
    return tuple(value)


_LOOK_AROUND = (
    "look-ahead and look-behind are not supported; match the names themselves "
    "(an alternation such as 'A|B'), or narrow the plan with op_type or side_stream"
)
# What Python's re takes and the engine's regex syntax (Rust's regex crate, as polars
# uses it) does not, with what to write instead.
_GROUPS = {
    "(?=": _LOOK_AROUND,
    "(?!": _LOOK_AROUND,
    "(?<=": _LOOK_AROUND,
    "(?<!": _LOOK_AROUND,
    "(?P=": "back-references are not supported; write the repeated text out",
    "(?>": "atomic groups are not supported; write a plain group '(...)'",
    "(?(": "conditional groups are not supported; write an alternation 'A|B'",
    "(?#": "comment groups are not supported; remove the comment",
}


def _engine_problem(pattern: str) -> str | None:
    """Why the engine's regex syntax refuses a pattern Python's re compiles, or None."""
    i, in_class = 0, False
    while i < len(pattern):
        char, after = pattern[i], pattern[i + 1 : i + 2]
        if char == "\\":
            if not in_class and after == "Z":
                return "\\Z is not supported; write $ for the end of the name"
            if not in_class and after and after in "123456789":
                return "back-references are not supported; write the repeated text out"
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            i += 1 + (pattern[i + 1 : i + 2] == "^")
            i += pattern[i : i + 1] == "]"  # a leading ] is literal
            continue
        elif char == "(":
            for start, problem in _GROUPS.items():
                if pattern.startswith(start, i):
                    return problem
        elif char in "*+?}" and after == "+" and pattern[i - 1 : i] != "(":
            return "possessive quantifiers (*+, ++, ?+) are not supported; drop the second +"
        i += 1
    return None


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot select kernel names (it does not compile, or uses a feature
    the engine's regex syntax lacks), or None."""
    try:
        re.compile(pattern)
    except re.error as err:
        return f"bad regular expression {pattern!r}: {err}"
    problem = _engine_problem(pattern)
    return f"regular expression {pattern!r}: {problem}" if problem else None


def unknown(key: str, known: tuple[str, ...] | list[str], where: str) -> Invalid:
    """An unknown key, with the closest known one as a hint."""
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return Invalid(f"unknown key {key!r} in {where}; {hint}known: {', '.join(known)}")


FAIL_ON = choice(*choices_of(FailOn))
PER = choice(*choices_of(Per))
EXECUTION_PATH = choice(*choices_of(ExecutionPath))
ORDER = choice(*choices_of(Order))
SIDE_KIND = choice(*choices_of(SideKind))


def validate_regex(pattern: str, *, key: str, path: str | None = None) -> str:
    """Return the pattern, or raise ConfigError naming the key when it does not compile or
    uses a feature the engine lacks (:func:`regex_problem`)."""
    problem = regex_problem(pattern)
    if problem:
        raise ConfigError(problem, path=path, key=key)
    return pattern
