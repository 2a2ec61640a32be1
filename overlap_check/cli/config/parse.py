"""Validation of a config table, section by section, into a :class:`Config`.

Errors name the file and the dotted key (``plan[2].side``, 1-based); the
loader (:mod:`overlap_check.cli.config.files`) adds the line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from overlap_check.cli.config import checks
from overlap_check.cli.config.checks import Invalid, validate_regex
from overlap_check.cli.config.schema import (
    DEVICE_KEYS,
    FIELD_OF,
    LIMIT_KEYS,
    PLAN_KEYS,
    SECTIONS,
    Config,
)
from overlap_check.model import CoreLimit, DeviceConfig, Plan, Thresholds
from overlap_check.model.errors import ConfigError


def parse_config(table: Mapping[str, Any], source: Path, prefix: str) -> Config:
    """The config in ``table`` (the whole file, or pyproject's tool table under ``prefix``)."""

    def fail(err: Invalid | str, key: str) -> ConfigError:
        return ConfigError(str(err), path=source, key=prefix + key)

    values: dict[str, Any] = {}
    device: dict[str, Any] = {}
    for section, body in table.items():
        if section == "plan":
            continue
        section_checks = SECTIONS.get(section)
        if section_checks is None:
            raise fail(checks.unknown(section, [*SECTIONS, "plan"], "the config"), section)
        if not isinstance(body, dict):
            raise fail(f"expected a table [{prefix}{section}]", section)
        key: str
        for key, value in body.items():
            if key not in section_checks:
                where = f"[{prefix}{section}]"
                raise fail(checks.unknown(key, list(section_checks), where), f"{section}.{key}")
            try:
                checked = section_checks[key](value)
            except Invalid as err:
                raise fail(err, f"{section}.{key}") from None
            if section == "device" and key in DEVICE_KEYS:
                device[key] = checked
            elif key in ("soc_ini", "graph_dump", "reference"):
                values[key] = str(source.parent / checked)  # absolute stays absolute
            else:
                values[FIELD_OF.get((section, key), key)] = checked
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
        except Invalid as err:
            raise ConfigError(str(err), path=source, key=f"{prefix}{where}.{key}") from None

    for key in body:
        if key not in PLAN_KEYS:
            err = checks.unknown(key, PLAN_KEYS, f"[[{prefix}plan]]")
            raise ConfigError(str(err), path=source, key=f"{prefix}{where}.{key}")
    name = check("name", checks.text)
    if name is None:
        raise ConfigError("a plan needs a name", path=source, key=f"{prefix}{where}.name")
    regexes = {
        key: validate_regex(pattern, key=f"{prefix}{where}.{key}", path=str(source))
        for key in ("side", "dominator", "op_type")
        if (pattern := check(key, checks.text)) is not None
    }
    side_stream = check("side_stream", checks.integer(0))
    if "side" not in regexes and "op_type" not in regexes and side_stream is None:
        raise ConfigError(
            f"plan {name!r} needs `side` (a regex), `op_type` (a regex) or `side_stream`",
            path=source,
            key=f"{prefix}{where}.side",
        )
    return Plan(
        name=name,
        side=regexes.get("side"),
        dominator=regexes.get("dominator"),
        side_stream=side_stream,
        main_stream=check("main_stream", checks.integer(0)),
        op_type=regexes.get("op_type"),
        limit_core=_parse_limit(body.get("limit_core"), f"{where}.limit_core", source, prefix),
        main_limit_core=_main_limit(body, where, source, prefix),
        path=check("path", checks.EXECUTION_PATH),
        side_kind=check("side_kind", checks.SIDE_KIND) or "compute",
    )


def _main_limit(body: Mapping[str, Any], where: str, source: Path, prefix: str) -> CoreLimit | None:
    """``main_limit_core``: the main path's limit, on main_stream or the dominator kernels."""
    limit = _parse_limit(body.get("main_limit_core"), f"{where}.main_limit_core", source, prefix)
    if limit is not None and "main_stream" not in body and "dominator" not in body:
        raise ConfigError(
            "main_limit_core needs main_stream or dominator (the kernels it governs)",
            path=source,
            key=f"{prefix}{where}.main_limit_core",
        )
    return limit


def _table(where: str) -> str:
    """``plan.limit_core`` / ``plan.main_limit_core`` from ``plan[2].limit_core``."""
    return "plan." + where.rsplit(".", 1)[-1]


def _parse_limit(raw: Any, where: str, source: Path, prefix: str) -> CoreLimit | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError("expected a table", path=source, key=prefix + where)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            if key not in LIMIT_KEYS:
                raise checks.unknown(key, list(LIMIT_KEYS), f"[{prefix}{_table(where)}]")
            values[key] = LIMIT_KEYS[key](value)
        except Invalid as err:
            raise ConfigError(str(err), path=source, key=f"{prefix}{where}.{key}") from None
    if "aicore" not in values and "vectorcore" not in values:
        raise ConfigError(
            "limit_core needs aicore and/or vectorcore", path=source, key=prefix + where
        )
    return CoreLimit(**values)
