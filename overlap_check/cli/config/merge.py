"""Options from CLI values > environment (``OVERLAP_CHECK_*``) > config file > defaults.

CLI and environment values pass the file's checks; a bad one is named by where it came from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from overlap_check.cli.config.checks import Invalid
from overlap_check.cli.config.settings import MERGED, Config, Setting
from overlap_check.model import DeviceConfig, Options, Plan, Thresholds
from overlap_check.model.errors import ConfigError, OverlapCheckError, UsageError

_CLI_ONLY = ("main_stream", "baseline", "plans", "plan_names", "path", "path_source")
OVERRIDE_KEYS = frozenset(s.name for s in MERGED) | frozenset(_CLI_ONLY)


def merge_options(
    config: Config, overrides: Mapping[str, Any], environ: Mapping[str, str]
) -> Options:
    """Options from CLI values (None: not given) > environment > config > defaults.

    ``overrides``: the merged settings by name, and ``plans`` (one-off plans from the command
    line), ``plan_names`` (``--plan``) and the command-line-only values of :data:`_CLI_ONLY`."""
    unknown = set(overrides) - OVERRIDE_KEYS
    if unknown:
        raise ValueError(f"merge_options: unknown override keys {sorted(unknown)}")
    chosen: dict[type, dict[str, Any]] = {Options: {}, Thresholds: {}, DeviceConfig: {}}
    origin: dict[str, str] = {}
    for setting in MERGED:
        value, origin[setting.name] = _pick(setting, config, overrides, environ)
        try:
            checked = None if value is None else setting.check(value)
        except Invalid as err:
            raise _merged_error(str(err), origin[setting.name], config, setting) from None
        chosen[setting.owner][setting.name] = checked
    real, fake = chosen[Thresholds]["real"], chosen[Thresholds]["fake"]
    if not fake < real:
        message = (
            f"thresholds need 0 <= fake < real <= 1, got real {real} "
            f"({origin['real']}) and fake {fake} ({origin['fake']})"
        )
        raise ConfigError(message)
    return Options(
        plans=_select_plans(
            config, overrides.get("plans") or (), overrides.get("plan_names") or ()
        ),
        thresholds=Thresholds(**chosen[Thresholds]),
        device=DeviceConfig(**chosen[DeviceConfig]),
        main_stream=overrides.get("main_stream"),
        baseline=overrides.get("baseline"),
        path=overrides.get("path"),
        ascend_c=config.ascend_c,
        path_source=overrides.get("path_source"),
        config_path=None if config.source is None else str(config.source),
        **chosen[Options],
    )


def _pick(
    setting: Setting, config: Config, overrides: Mapping[str, Any], environ: Mapping[str, str]
) -> tuple[Any, str]:
    name = setting.name
    if overrides.get(name) is not None:
        return overrides[name], f"option {setting.flag}"
    if setting.variable is not None:
        text = environ.get(setting.variable, "").strip()
        if text:  # an empty variable counts as unset, as with NO_COLOR
            try:
                return setting.parse_env(text), f"environment variable {setting.variable}"
            except ValueError:
                raise ConfigError(
                    f"environment variable {setting.variable}={text!r} is not a valid {name} value"
                ) from None
    value = getattr(config.device if setting.owner is DeviceConfig else config, name)
    if value is not None:
        return value, config.key_origin(setting.section, setting.config_key)
    return setting.value_default, "default"


def _merged_error(message: str, origin: str, config: Config, setting: Setting) -> OverlapCheckError:
    if origin.startswith("option "):
        return UsageError(f"{origin}: {message}")
    if origin.startswith("environment "):
        return ConfigError(f"{origin}: {message}")
    key = f"{config.prefix}{setting.section}.{setting.config_key}"
    return ConfigError(message, path=config.source, key=key)


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
