"""The config file: discovery, validation, and merging with environment and CLI.

Discovery (relative to the working directory): ``--config FILE``, else
``./overlap-check.toml``, else ``[tool.overlap-check]`` in ``./pyproject.toml``,
else no config. Precedence of every value: CLI option > environment variable
(``OVERLAP_CHECK_*``) > config file > the default in :class:`~overlap_check.model.Options`.
Every mistake raises :class:`~overlap_check.errors.ConfigError` naming the file
and the key (``plan[2].side``, 1-based) and, where it can be found, the line.
docs/config.md lists every key.
"""

from __future__ import annotations

import difflib
import math
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from overlap_check.errors import ConfigError, OverlapCheckError, UsageError
from overlap_check.model import CoreLimit, DeviceConfig, Options, Plan, Thresholds
from overlap_check.selection import validate_regex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_NAME = "overlap-check.toml"
PYPROJECT_TABLE = "tool.overlap-check"


class _Invalid(Exception):
    """A value that fails its check; the caller adds the file, key and line."""


# --------------------------------------------------------------------------- value checks


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Invalid(f"expected a number, got {value!r}")
    return float(value)


def _fraction(value: Any) -> float:
    number = _number(value)
    if not 0.0 <= number <= 1.0:
        raise _Invalid(f"expected a fraction between 0 and 1, got {value!r}")
    return number


def _integer(minimum: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Invalid(f"expected an integer, got {value!r}")
        if value < minimum:
            raise _Invalid(f"expected an integer >= {minimum}, got {value}")
        return value

    return check


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"expected true or false, got {value!r}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"expected a non-empty string, got {value!r}")
    return value


def _choice(*allowed: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if value not in allowed:
            raise _Invalid(f"expected one of {', '.join(map(repr, allowed))}, got {value!r}")
        return str(value)

    return check


def _ge_aicore_num(value: Any) -> str:
    # one parser for config files and pasted strings: overlap_check.limits
    from overlap_check.limits import parse_aicore_num

    if not isinstance(value, str):
        raise _Invalid(f'expected "aic|aiv" such as "24|48", got {value!r}')
    try:
        parse_aicore_num(value)
    except ConfigError as err:
        raise _Invalid(err.message) from None
    return value


def _rule_ids(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Invalid(f'expected a list of rule ids such as ["OC103"], got {value!r}')
    for item in value:
        if not re.fullmatch(r"OC\d{1,3}", item):  # a full id (OC103) or a prefix (OC1)
            raise _Invalid(f"expected rule ids like 'OC103' or prefixes like 'OC1', got {item!r}")
    return tuple(value)


_FAIL_ON = _choice("fake", "partial", "never")

# section -> key -> check. Plans ([[plan]]) are parsed apart.
_SECTIONS: dict[str, dict[str, Callable[[Any], Any]]] = {
    "thresholds": {"real": _fraction, "fake": _fraction},
    "runs": {
        "warmup": _integer(0),
        "min_runs": _integer(1),
        "per": _choice("run", "step"),
        "order": _choice("given", "time"),
    },
    "gate": {
        "fail_on": _FAIL_ON,
        "tolerance": _fraction,
        "strict": _boolean,
        "fail_on_contention": _boolean,
    },
    "device": {
        "soc": _text,
        "aicore": _integer(1),
        "vectorcore": _integer(1),
        "ge_aicore_num": _ge_aicore_num,
        "soc_ini": _text,
        "graph_dump": _text,
    },
    "run": {
        "runs": _integer(1),
        "profiler": _choice("auto", "torch_npu", "msprof"),
        "level": _choice("Level1", "Level2"),
    },
    "lint": {"select": _rule_ids, "ignore": _rule_ids},
}
_PLAN_KEYS = ("name", "side", "dominator", "side_stream", "main_stream", "limit_core")
_LIMIT_KEYS: dict[str, Callable[[Any], Any]] = {
    "aicore": _integer(1),
    "vectorcore": _integer(1),
    "mode": _choice("ge", "npugraph_ex"),
}
# (section, key) -> Config field, where the names differ
_FIELD_OF = {("lint", "select"): "lint_select", ("lint", "ignore"): "lint_ignore"}
_DEVICE_KEYS = ("soc", "aicore", "vectorcore", "ge_aicore_num")


@dataclass(frozen=True)
class Config:
    """What a config file set; None means "not set" (a lower layer decides)."""

    source: Path | None = None  # the file read; None when no config was found
    prefix: str = ""  # "tool.overlap-check." when read from pyproject.toml
    real: float | None = None
    fake: float | None = None
    warmup: int | None = None
    min_runs: int | None = None
    per: Literal["run", "step"] | None = None
    order: Literal["given", "time"] | None = None
    fail_on: Literal["fake", "partial", "never"] | None = None
    tolerance: float | None = None
    strict: bool | None = None
    fail_on_contention: bool | None = None
    device: DeviceConfig = field(default_factory=DeviceConfig)
    soc_ini: str | None = None  # resolved against the config file's folder
    graph_dump: str | None = None
    plans: tuple[Plan, ...] = ()
    runs: int | None = None  # `run --runs`
    profiler: Literal["auto", "torch_npu", "msprof"] | None = None
    level: Literal["Level1", "Level2"] | None = None
    lint_select: tuple[str, ...] = ()
    lint_ignore: tuple[str, ...] = ()

    def key_origin(self, section: str, key: str) -> str:
        """How a message names a value that came from this file."""
        return f"{self.source or 'config'} key {self.prefix}{section}.{key}"


# --------------------------------------------------------------------------- discovery


def find_config(cwd: Path) -> Path | None:
    """``cwd/overlap-check.toml``, else ``cwd/pyproject.toml`` if it has the tool table."""
    own = cwd / CONFIG_NAME
    if own.is_file():
        return own
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file() and _pyproject_table(_read_toml(pyproject)[0]) is not None:
        return pyproject
    return None


def load_config(path: str | None, cwd: Path) -> Config:
    """Read and validate the config named by ``--config`` (relative to cwd) or found in cwd.

    Errors name the file relative to cwd when it lies there (as a user typed it).
    """
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
        return _parse(table, source, prefix)
    except ConfigError as err:
        if err.line is None and err.key is not None:
            err.line = _line_of(text, err.key, prefix)
        raise


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


def _pyproject_table(document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    tool = document.get("tool")
    table = tool.get("overlap-check") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


# --------------------------------------------------------------------------- parsing


def _unknown(key: str, known: tuple[str, ...] | list[str], where: str) -> _Invalid:
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return _Invalid(f"unknown key {key!r} in {where}; {hint}known: {', '.join(known)}")


def _parse(table: Mapping[str, Any], source: Path, prefix: str) -> Config:
    def fail(err: _Invalid | str, key: str) -> ConfigError:
        return ConfigError(str(err), path=source, key=prefix + key)

    values: dict[str, Any] = {}
    device: dict[str, Any] = {}
    for section, body in table.items():
        if section == "plan":
            continue
        checks = _SECTIONS.get(section)
        if checks is None:
            raise fail(_unknown(section, [*_SECTIONS, "plan"], "the config"), section)
        if not isinstance(body, dict):
            raise fail(f"expected a table [{prefix}{section}]", section)
        key: str
        for key, value in body.items():
            if key not in checks:
                raise fail(_unknown(key, list(checks), f"[{prefix}{section}]"), f"{section}.{key}")
            try:
                checked = checks[key](value)
            except _Invalid as err:
                raise fail(err, f"{section}.{key}") from None
            if section == "device" and key in _DEVICE_KEYS:
                device[key] = checked
            elif key in ("soc_ini", "graph_dump"):
                values[key] = str(source.parent / checked)  # absolute stays absolute
            else:
                values[_FIELD_OF.get((section, key), key)] = checked
    real = values.get("real", Thresholds().real)
    fake = values.get("fake", Thresholds().fake)
    if not fake < real:
        bad = "thresholds.fake" if "fake" in values else "thresholds.real"
        raise fail(f"thresholds need 0 <= fake < real <= 1, got real {real} and fake {fake}", bad)
    plans = _parse_plans(table.get("plan", []), source, prefix)
    return Config(
        source=source, prefix=prefix, device=DeviceConfig(**device), plans=plans, **values
    )


def _parse_plans(raw: Any, source: Path, prefix: str) -> tuple[Plan, ...]:
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise ConfigError(
            f"expected an array of tables [[{prefix}plan]]", path=source, key=prefix + "plan"
        )
    plans: list[Plan] = []
    for number, body in enumerate(raw, start=1):
        where = f"plan[{number}]"
        plan = _parse_plan(body, where, source, prefix)
        if any(seen.name == plan.name for seen in plans):
            raise ConfigError(
                f"duplicate plan name {plan.name!r}", path=source, key=f"{prefix}{where}.name"
            )
        plans.append(plan)
    return tuple(plans)


def _parse_plan(body: Mapping[str, Any], where: str, source: Path, prefix: str) -> Plan:
    def check(key: str, checker: Callable[[Any], Any]) -> Any:
        if key not in body:
            return None
        try:
            return checker(body[key])
        except _Invalid as err:
            raise ConfigError(str(err), path=source, key=f"{prefix}{where}.{key}") from None

    for key in body:
        if key not in _PLAN_KEYS:
            err = _unknown(key, _PLAN_KEYS, f"[[{prefix}plan]]")
            raise ConfigError(str(err), path=source, key=f"{prefix}{where}.{key}")
    name = check("name", _text)
    if name is None:
        raise ConfigError("a plan needs a name", path=source, key=f"{prefix}{where}.name")
    regexes = {
        key: validate_regex(pattern, key=f"{prefix}{where}.{key}", path=str(source))
        for key in ("side", "dominator")
        if (pattern := check(key, _text)) is not None
    }
    side_stream = check("side_stream", _integer(0))
    if "side" not in regexes and side_stream is None:
        raise ConfigError(
            f"plan {name!r} needs `side` (a regex) or `side_stream`",
            path=source,
            key=f"{prefix}{where}.side",
        )
    return Plan(
        name=name,
        side=regexes.get("side"),
        dominator=regexes.get("dominator"),
        side_stream=side_stream,
        main_stream=check("main_stream", _integer(0)),
        limit_core=_parse_limit(body.get("limit_core"), f"{where}.limit_core", source, prefix),
    )


def _parse_limit(raw: Any, where: str, source: Path, prefix: str) -> CoreLimit | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError("expected a table", path=source, key=prefix + where)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            if key not in _LIMIT_KEYS:
                raise _unknown(key, list(_LIMIT_KEYS), f"[{prefix}plan.limit_core]")
            values[key] = _LIMIT_KEYS[key](value)
        except _Invalid as err:
            raise ConfigError(str(err), path=source, key=f"{prefix}{where}.{key}") from None
    if "aicore" not in values and "vectorcore" not in values:
        raise ConfigError(
            "limit_core needs aicore and/or vectorcore", path=source, key=prefix + where
        )
    return CoreLimit(**values)


_HEADER = re.compile(r"^\s*\[(\[)?\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_INDEX = re.compile(r"\[(\d+)\]")


def _line_of(text: str, key: str, prefix: str) -> int | None:
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


# --------------------------------------------------------------------------- merging

# option -> (environment variable, parser of its text)
ENVIRONMENT: dict[str, tuple[str, Callable[[str], Any]]] = {
    "real": ("OVERLAP_CHECK_REAL", float),
    "fake": ("OVERLAP_CHECK_FAKE", float),
    "warmup": ("OVERLAP_CHECK_WARMUP", int),
    "min_runs": ("OVERLAP_CHECK_MIN_RUNS", int),
    "tolerance": ("OVERLAP_CHECK_TOLERANCE", float),
    "fail_on": ("OVERLAP_CHECK_FAIL_ON", str),
    "strict": ("OVERLAP_CHECK_STRICT", lambda text: _parse_flag(text)),
}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _parse_flag(text: str) -> bool:
    if text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    raise ValueError(text)


# option -> (config section, check); the checks also judge CLI and environment values
_MERGED: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "real": ("thresholds", _fraction),
    "fake": ("thresholds", _fraction),
    "warmup": ("runs", _integer(0)),
    "min_runs": ("runs", _integer(1)),
    "per": ("runs", _choice("run", "step")),
    "order": ("runs", _choice("given", "time")),
    "fail_on": ("gate", _FAIL_ON),
    "tolerance": ("gate", _fraction),
    "strict": ("gate", _boolean),
    "fail_on_contention": ("gate", _boolean),
    "soc_ini": ("device", _text),
    "graph_dump": ("device", _text),
}
_CLI_ONLY = ("main_stream", "baseline", "plans", "plan_names")
OVERRIDE_KEYS = frozenset(_MERGED) | frozenset(_DEVICE_KEYS) | frozenset(_CLI_ONLY)


def merge_options(
    config: Config, overrides: Mapping[str, Any], environ: Mapping[str, str]
) -> Options:
    """Options from CLI values (None: not given) > environment > config > defaults.

    ``overrides`` keys: the :data:`OVERRIDE_KEYS` (Options field names, ``real``/``fake``,
    the device keys ``soc``/``aicore``/``vectorcore``/``ge_aicore_num``, ``plans``: one-off
    plans from the command line, ``plan_names``: the ``--plan`` selection).
    """
    unknown = set(overrides) - OVERRIDE_KEYS
    if unknown:
        raise ValueError(f"merge_options: unknown override keys {sorted(unknown)}")
    defaults = Options()
    default_values = {f.name: getattr(defaults, f.name) for f in fields(Options)}
    default_values |= {"real": defaults.thresholds.real, "fake": defaults.thresholds.fake}
    chosen: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for name, (section, check) in _MERGED.items():
        value, origin[name] = _pick(name, section, config, overrides, environ, default_values)
        try:
            chosen[name] = None if value is None else check(value)
        except _Invalid as err:
            raise _merged_error(str(err), origin[name], config, section, name) from None
    if not chosen["fake"] < chosen["real"]:
        message = (
            f"thresholds need 0 <= fake < real <= 1, got real {chosen['real']} "
            f"({origin['real']}) and fake {chosen['fake']} ({origin['fake']})"
        )
        raise ConfigError(message)
    device = DeviceConfig(
        **{
            key: overrides[key] if overrides.get(key) is not None else getattr(config.device, key)
            for key in _DEVICE_KEYS
        }
    )
    real, fake = chosen.pop("real"), chosen.pop("fake")
    return Options(
        plans=_select_plans(
            config, overrides.get("plans") or (), overrides.get("plan_names") or ()
        ),
        thresholds=Thresholds(real=real, fake=fake),
        device=device,
        main_stream=overrides.get("main_stream"),
        baseline=overrides.get("baseline"),
        **chosen,
    )


def _pick(
    name: str,
    section: str,
    config: Config,
    overrides: Mapping[str, Any],
    environ: Mapping[str, str],
    default_values: Mapping[str, Any],
) -> tuple[Any, str]:
    if overrides.get(name) is not None:
        return overrides[name], f"option --{name.replace('_', '-')}"
    if name in ENVIRONMENT:
        variable, parse = ENVIRONMENT[name]
        text = environ.get(variable, "").strip()
        if text:  # an empty variable counts as unset, as with NO_COLOR
            try:
                return parse(text), f"environment variable {variable}"
            except ValueError:
                raise ConfigError(
                    f"environment variable {variable}={text!r} is not a valid {name} value"
                ) from None
    value = getattr(config, name)
    if value is not None:
        return value, config.key_origin(section, name)
    return default_values[name], "default"


def _merged_error(
    message: str, origin: str, config: Config, section: str, name: str
) -> OverlapCheckError:
    if origin.startswith("option "):
        return UsageError(f"{origin}: {message}")
    if origin.startswith("environment "):
        return ConfigError(f"{origin}: {message}")
    return ConfigError(message, path=config.source, key=f"{config.prefix}{section}.{name}")


def _select_plans(
    config: Config, cli_plans: tuple[Plan, ...], names: tuple[str, ...]
) -> tuple[Plan, ...]:
    """``--plan NAME`` picks config plans; one-off CLI plans replace the rest."""
    cli_plans = tuple(cli_plans)
    if not names:
        return cli_plans or config.plans
    by_name = {plan.name: plan for plan in config.plans}
    for name in names:
        if name not in by_name:
            where = f"in {config.source}" if config.source else "(no config file found)"
            known = ", ".join(by_name) or "none"
            raise UsageError(f"--plan {name!r}: no such plan {where}", hint=f"plans: {known}")
    selected = tuple(by_name[name] for name in dict.fromkeys(names))
    clash = {plan.name for plan in selected} & {plan.name for plan in cli_plans}
    if clash:
        raise UsageError(f"--name {sorted(clash)[0]!r} is also a config plan; choose another name")
    return selected + cli_plans


def plan_from_cli(
    *,
    side: str | None,
    dominator: str | None,
    name: str | None = None,
    side_stream: int | None = None,
    main_stream: int | None = None,
) -> Plan | None:
    """The one-off plan of ``--side/--dominator/--name/--side-stream/--main-stream``.

    None when none of them is given. Its default name is the side regex (or
    ``stream N``), stable between runs so that baselines line up.
    """
    if side is None and dominator is None and side_stream is None:
        if name is not None or main_stream is not None:
            raise UsageError("--name/--main-stream describe a plan: give --side or --side-stream")
        return None
    if side is None and side_stream is None:
        raise UsageError("--dominator needs --side REGEX or --side-stream N")
    if side is not None:
        validate_regex(side, key="--side")
    if dominator is not None:
        validate_regex(dominator, key="--dominator")
    default_name = side if side is not None else f"stream {side_stream}"
    return Plan(
        name=name or default_name,
        side=side,
        dominator=dominator,
        side_stream=side_stream,
        main_stream=main_stream,
    )


_FORMAT_OF_SUFFIX = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".xml": "junit",
    ".txt": "text",
    ".log": "text",
}


def format_for_path(path: str | Path) -> str:
    """The report format ``--output FILE`` writes, from the file's suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMAT_OF_SUFFIX:
        raise UsageError(
            f"--output {path}: cannot tell the report format from the suffix {suffix!r}",
            hint="use .json, .md, .xml (JUnit) or .txt",
        )
    return _FORMAT_OF_SUFFIX[suffix]
