"""Finding and reading the config file, and the line of a key for error messages.

The discovery rule (the nearest folder up to the repository root): docs/config.md."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from overlap_check.cli.config.parse import parse_config
from overlap_check.cli.config.settings import Config
from overlap_check.model.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_NAME = "overlap-check.toml"
PYPROJECT_TABLE = "tool.overlap-check"


def find_config(cwd: Path) -> Path | None:
    """The config of the nearest folder from ``cwd`` up to the repository root."""
    start = cwd.absolute()
    for folder in (start, *start.parents):
        found = _config_in(folder)
        if found is not None:
            return found
        if _is_repository_root(folder):
            return None
    return None


def _config_in(folder: Path) -> Path | None:
    own = folder / CONFIG_NAME
    if own.is_file():
        return own
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file() and _pyproject_table(_read_toml(pyproject)[0]) is not None:
        return pyproject
    return None


def _is_repository_root(folder: Path) -> bool:
    try:
        return (folder / ".git").exists()  # a folder, or a file in a worktree or submodule
    except OSError:
        return False


def load_config(path: str | None, cwd: Path) -> Config:
    """Read and validate the config named by ``--config`` (relative to cwd) or found from cwd
    up; errors name the file relative to cwd when it lies there (as a user typed it)."""
    try:
        return _load(path, cwd)
    except ConfigError as err:
        if err.path is not None:
            err.path = _shown(Path(err.path), cwd)
        raise


def _shown(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _load(path: str | None, cwd: Path) -> Config:
    if path is not None:
        source = Path(path) if Path(path).is_absolute() else cwd / path
        if not source.is_file():
            raise ConfigError("config file not found", path=source)
    else:
        found = find_config(cwd)
        if found is None:
            return Config()
        source = found
    document, text = _read_toml(source)
    prefix = ""
    table: Mapping[str, Any] = document
    if source.name == "pyproject.toml":
        tool_table = _pyproject_table(document)
        if tool_table is None:
            raise ConfigError(f"no [{PYPROJECT_TABLE}] table", path=source)
        table, prefix = tool_table, PYPROJECT_TABLE + "."
    try:
        config = parse_config(table, source, prefix)
    except ConfigError as err:
        if err.line is None and err.key is not None:
            err.line = line_of(text, err.key, prefix)
        raise
    # each plan remembers its [[plan]] header, for CI annotations on the config file
    located = (
        replace(plan, config_file=_shown(source, cwd), config_line=line_of(text, key, prefix))
        for key, plan in ((f"{prefix}plan[{n}]", p) for n, p in enumerate(config.plans, 1))
    )
    return replace(config, plans=tuple(located))


def _read_toml(source: Path) -> tuple[dict[str, Any], str]:
    try:
        text = source.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read the config file: {err}", path=source) from err
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as err:
        message = str(err)
        where = re.search(r"\s*\(at line (\d+), column \d+\)$", message)
        line = int(where.group(1)) if where else None
        if where:
            message = message[: where.start()]
        raise ConfigError(f"TOML syntax error: {message}", path=source, line=line) from err
    except RecursionError as err:  # a config nests two or three levels
        raise ConfigError(
            "TOML nested too deeply to be a config (arrays or tables inside one another)",
            path=source,
            line=_deep_line(text),
        ) from err


def _deep_line(text: str, depth: int = 100) -> int | None:
    """The line where brackets and braces first nest ``depth`` deep (strings not skipped:
    a guess for the error message only)."""
    level = 0
    for number, line in enumerate(text.splitlines(), start=1):
        for char in line:
            level += (char in "[{") - (char in "]}")
            if level >= depth:
                return number
    return None


def _pyproject_table(document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    tool = document.get("tool")
    table = tool.get("overlap-check") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


_HEADER = re.compile(r"^\s*\[(\[)?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_INDEX = re.compile(r"\[(\d+)\]")


def line_of(text: str, key: str, prefix: str) -> int | None:
    """Best-effort line of a dotted key such as ``tool.overlap-check.plan[2].side``."""
    path = key[len(prefix) :] if key.startswith(prefix) else key
    number = _INDEX.search(path)
    occurrence = int(number.group(1)) if number else None
    parts = _INDEX.sub("", path).split(".")
    table, leaf = prefix + ".".join(parts[:-1]), parts[-1]
    table = table.rstrip(".")
    current, plans = "", 0
    key_line = re.compile(rf"^\s*[\"']?{re.escape(leaf)}[\"']?\s*=")
    for line_number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            current = ".".join(part.strip().strip("\"'") for part in header.group(2).split("."))
            if header.group(1) is not None and current == prefix + "plan":
                plans += 1
            if current == f"{table}.{leaf}".lstrip(".") and occurrence in (None, plans):
                return line_number  # the key names a table: its header
            continue
        if (
            current == table
            and (occurrence is None or plans == occurrence)
            and key_line.match(line)
        ):
            return line_number
    return None
