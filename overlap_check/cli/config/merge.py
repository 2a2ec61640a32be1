"""Options from CLI values > environment (``OVERLAP_CHECK_*``) > config file > defaults.

CLI and environment values pass the same checks as the file's, and a bad one
is named by where it came from (option, variable, or file and key).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from overlap_check.cli.config import checks
from overlap_check.cli.config.checks import Invalid
from overlap_check.cli.config.schema import DEVICE_KEYS, Config
from overlap_check.model import DeviceConfig, Options, Plan, Thresholds
from overlap_check.model.errors import ConfigError, OverlapCheckError, UsageError

# option -> (environment variable, parser of its text)
ENVIRONMENT: dict[str, tuple[str, Callable[[str], Any]]] = {
    "real": ("OVERLAP_CHECK_REAL", float),
    "fake": ("OVERLAP_CHECK_FAKE", float),
    "fake_share": ("OVERLAP_CHECK_FAKE_SHARE", float),
    "warmup": ("OVERLAP_CHECK_WARMUP", int),
    "min_runs": ("OVERLAP_CHECK_MIN_RUNS", int),
    "tolerance": ("OVERLAP_CHECK_TOLERANCE", float),
    "fail_on": ("OVERLAP_CHECK_FAIL_ON", str),
    "strict": ("OVERLAP_CHECK_STRICT", lambda text: _parse_flag(text)),
    "max_input_size": ("OVERLAP_CHECK_MAX_INPUT_SIZE", str),
}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _parse_flag(text: str) -> bool:
    if text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    raise ValueError(text)


# option -> (config section, check); the checks also judge CLI and environment values
_MERGED: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "real": ("thresholds", checks.fraction),
    "fake": ("thresholds", checks.fraction),
    "fake_share": ("thresholds", checks.fraction),
    "warmup": ("runs", checks.integer(0)),
    "min_runs": ("runs", checks.integer(1)),
    "per": ("runs", checks.PER),
    "order": ("runs", checks.ORDER),
    "max_input_size": ("runs", checks.size),
    "fail_on": ("gate", checks.FAIL_ON),
    "tolerance": ("gate", checks.fraction),
    "strict": ("gate", checks.boolean),
    "fail_on_contention": ("gate", checks.boolean),
    "reference": ("gate", checks.text),
    "require_gain": ("gate", checks.number),
    "max_join_wait_us": ("gate", checks.non_negative),
    "soc_ini": ("device", checks.text),
    "graph_dump": ("device", checks.text),
}
_CLI_ONLY = ("main_stream", "baseline", "plans", "plan_names", "path", "path_source")
OVERRIDE_KEYS = frozenset(_MERGED) | frozenset(DEVICE_KEYS) | frozenset(_CLI_ONLY)


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
        except Invalid as err:
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
            for key in DEVICE_KEYS
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
        path=_path(overrides.get("path")),
        ascend_c=config.ascend_c,
        path_source=overrides.get("path_source"),
        config_path=None if config.source is None else str(config.source),
        **chosen,
    )


def _path(value: Any) -> Any:
    """``--path``: one of model.ExecutionPath (None: not given)."""
    if value is None:
        return None
    try:
        return checks.EXECUTION_PATH(value)
    except Invalid as err:
        raise UsageError(f"option --path: {err}") from None


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
