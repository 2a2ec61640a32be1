"""Validation of a config table, section by section, into a :class:`Config`.

Errors name the file and the dotted key (``plan[2].side``, 1-based); :mod:`.files` adds the
line. The sections come from :mod:`.settings`; the ``[[plan]]`` keys are here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from overlap_check.cli.config import checks
from overlap_check.cli.config.checks import Invalid
from overlap_check.cli.config.settings import SECTIONS, Config
from overlap_check.model import CoreLimit, DeviceConfig, Plan
from overlap_check.model.errors import ConfigError

# in docs/config.md's order (tests/test_config.py)
PLAN_KEYS = (
    "name",
    "side",
    "op_type",
    "dominator",
    "side_stream",
    "main_stream",
    "path",
    "side_kind",
    "limit_core",
    "main_limit_core",
)
LIMIT_KEYS: dict[str, Callable[[Any], Any]] = {
    "aicore": checks.integer(1),
    "vectorcore": checks.integer(1),
    "mode": checks.choice("ge", "npugraph_ex"),
}
# a message, and the key it is about (without the pyproject prefix) -> the error
Fail = Callable[[Invalid | str, str], ConfigError]


def parse_config(table: Mapping[str, Any], source: Path, prefix: str) -> Config:
    """The config in ``table`` (the whole file, or pyproject's tool table under ``prefix``)."""

    def fail(err: Invalid | str, key: str) -> ConfigError:
        return ConfigError(str(err), path=source, key=prefix + key)

    values: dict[str, Any] = {}
    device: dict[str, Any] = {}
    for section, body in table.items():
        if section == "plan":
            continue
        settings = SECTIONS.get(section)
        if settings is None:
            raise fail(checks.unknown(section, [*SECTIONS, "plan"], "the config"), section)
        if not isinstance(body, dict):
            raise fail(f"expected a table [{prefix}{section}]", section)
        key: str
        for key, value in body.items():
            if key not in settings:
                where = f"[{prefix}{section}]"
                raise fail(checks.unknown(key, list(settings), where), f"{section}.{key}")
            setting = settings[key]
            try:
                checked = setting.check(value)
            except Invalid as err:
                raise fail(err, f"{section}.{key}") from None
            if setting.relative:
                checked = str(source.parent / checked)  # absolute stays absolute
            (device if setting.owner is DeviceConfig else values)[setting.name] = checked
    # one of the two set here may meet the other from a command line: checked once merged
    real, fake = values.get("real"), values.get("fake")
    if real is not None and fake is not None and not fake < real:
        raise fail(f"thresholds need 0 <= fake < real <= 1, got real {real} and fake {fake}",
                   "thresholds.fake")  # fmt: skip
    raw = table.get("plan", [])
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise fail(f"expected an array of tables [[{prefix}plan]]", "plan")
    plans: list[Plan] = []
    for number, body in enumerate(raw, start=1):
        plan = _parse_plan(body, f"plan[{number}]", prefix, fail)
        if any(seen.name == plan.name for seen in plans):
            raise fail(f"duplicate plan name {plan.name!r}", f"plan[{number}].name")
        plans.append(plan)
    return Config(
        source=source, prefix=prefix, device=DeviceConfig(**device), plans=tuple(plans), **values
    )


def _parse_plan(body: Mapping[str, Any], where: str, prefix: str, fail: Fail) -> Plan:
    def check(key: str, checker: Callable[[Any], Any]) -> Any:
        if key not in body:
            return None
        try:
            return checker(body[key])
        except Invalid as err:
            raise fail(err, f"{where}.{key}") from None

    for key in body:
        if key not in PLAN_KEYS:
            raise fail(checks.unknown(key, PLAN_KEYS, f"[[{prefix}plan]]"), f"{where}.{key}")
    name = check("name", checks.text)
    if name is None:
        raise fail("a plan needs a name", f"{where}.name")
    regexes = {
        key: check(key, checks.regex) for key in ("side", "dominator", "op_type") if key in body
    }
    side_stream = check("side_stream", checks.integer(0))
    if "side" not in regexes and "op_type" not in regexes and side_stream is None:
        message = f"plan {name!r} needs `side` (a regex), `op_type` (a regex) or `side_stream`"
        raise fail(message, f"{where}.side")
    main_stream = check("main_stream", checks.integer(0))
    limit_core = _parse_limit(body.get("limit_core"), f"{where}.limit_core", prefix, fail)
    main_limit = _parse_limit(body.get("main_limit_core"), f"{where}.main_limit_core", prefix, fail)
    if main_limit is not None and "main_stream" not in body and "dominator" not in body:
        message = "main_limit_core needs main_stream or dominator (the kernels it governs)"
        raise fail(message, f"{where}.main_limit_core")
    return Plan(
        name=name,
        side=regexes.get("side"),
        dominator=regexes.get("dominator"),
        side_stream=side_stream,
        main_stream=main_stream,
        op_type=regexes.get("op_type"),
        limit_core=limit_core,
        main_limit_core=main_limit,
        path=check("path", checks.EXECUTION_PATH),
        side_kind=check("side_kind", checks.SIDE_KIND) or "compute",
    )


def _parse_limit(raw: Any, where: str, prefix: str, fail: Fail) -> CoreLimit | None:
    """``limit_core`` / ``main_limit_core`` (``where``: ``plan[2].limit_core``)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise fail("expected a table", where)
    values: dict[str, Any] = {}
    table = "plan." + where.rsplit(".", 1)[-1]
    for key, value in raw.items():
        try:
            if key not in LIMIT_KEYS:
                raise checks.unknown(key, list(LIMIT_KEYS), f"[{prefix}{table}]")
            values[key] = LIMIT_KEYS[key](value)
        except Invalid as err:
            raise fail(err, f"{where}.{key}") from None
    if "aicore" not in values and "vectorcore" not in values:
        raise fail("limit_core needs aicore and/or vectorcore", where)
    return CoreLimit(**values)
