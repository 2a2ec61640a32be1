"""Every setting (a value the config file, the environment or an option can give) defined once.

The file's sections and checks, the environment variables, the merge, the click options and
docs/config.md's tables (a test compares them) all derive from :data:`SETTINGS`. Type and
default are those of the field of the same name in its ``owner`` (``model.Options`` unless
said), so the library's defaults and the CLI's are one. Adding one: docs/config.md, "Keys"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

from overlap_check.cli.config import checks
from overlap_check.model import DeviceConfig, Options, Plan, Thresholds

Scope = Literal["analysis", "run", "lint"]  # the commands whose options it is
PROFILERS = ("auto", "torch_npu", "torch", "msprof")  # `run --profiler`, the first the default
LEVELS = ("Level1", "Level2")  # `run --level`, likewise


@dataclass(frozen=True)
class Setting:
    name: str  # the Options field, click parameter and config key (unless ``key``)
    section: str  # the config file's [section]
    check: Callable[[Any], Any]  # judges a value from the file, the environment or the option
    help: str = ""  # the option's --help text; ``{default}`` is the default
    metavar: str | None = None
    option: bool = True  # a command-line option --name (``_`` as ``-``)
    env: bool = False  # the environment variable OVERLAP_CHECK_<NAME>
    key: str | None = None  # the config key, where not ``name``
    relative: bool = False  # a path in the file is relative to the file's folder
    owner: type = Options  # the dataclass holding its type and default
    scope: Scope = "analysis"  # the command whose options it is (run/lint: their own)
    default: Any = None  # where ``owner`` has no such field (run, lint)
    text: bool = False  # the option and variable take text that ``check`` converts ("16GiB")

    @property
    def config_key(self) -> str:
        return self.key or self.name

    @property
    def flag(self) -> str:
        return f"--{self.config_key.replace('_', '-')}"

    @property
    def variable(self) -> str | None:
        return f"OVERLAP_CHECK_{self.name.upper()}" if self.env else None

    @property
    def value_type(self) -> Any:
        """The field's type without ``| None``: a Literal vocabulary, bool, int, float, str."""
        hint = _hints(self.owner).get(self.name)
        members = [arg for arg in get_args(hint) if arg is not type(None)]
        return members[0] if get_origin(hint) is not Literal and members else hint

    @property
    def value_default(self) -> Any:
        return getattr(_defaults(self.owner), self.name, self.default)

    def parse_env(self, text: str) -> Any:
        """The environment variable's text as a value (ValueError: not one)."""
        kind = self.value_type
        if self.text:
            return text
        if kind is bool:
            if text.lower() in _TRUE | _FALSE:
                return text.lower() in _TRUE
            raise ValueError(text)
        return kind(text) if kind in (int, float) else text


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


@cache
def _hints(owner: type) -> dict[str, Any]:
    return get_type_hints(owner)


@cache
def _defaults(owner: type) -> object:
    return owner()  # Options(), Thresholds(), DeviceConfig(): every field has a default


def _th(name: str, help: str, metavar: str | None) -> Setting:
    """A verdict threshold: a fraction in [thresholds] (Thresholds' default)."""
    return Setting(name, "thresholds", checks.fraction, help, metavar, env=True, owner=Thresholds)


def _device(name: str, check: Callable[[Any], Any], help: str = "", **more: Any) -> Setting:
    return Setting(name, "device", check, help, owner=DeviceConfig, option=bool(help), **more)


# In --help order (among the command-only options of cli/options.py) and in the order of
# each config section.
SETTINGS: tuple[Setting, ...] = (
    Setting("warmup", "runs", checks.integer(0), "Runs (or steps with --per step) discarded as "
            "cold starts [{default}].", "K", env=True),
    Setting("min_runs", "runs", checks.integer(1), "Runs the method asks for; fewer gives a "
            "provisional result [{default}].", "N", env=True),
    Setting("strict", "gate", checks.boolean, "A provisional result fails the gate.", env=True),
    Setting("allow_missing_wait", "gate", checks.boolean, "Accept a missing wait (a join that "
            "did not wait, a side stream a layer behind): reported, but it does not fail the "
            "gate.", env=True),
    Setting("per", "runs", checks.PER, "Unit the median is taken over [{default}]."),
    _th("real", "A plan's hidden_pct (a stream pair's overlap_pct) at or above which it is "
        "real [{default}].", "X"),
    _th("fake", "A plan's hidden_pct (a stream pair's overlap_pct) at or below which it is "
        "fake [{default}].", "Y"),
    Setting("fake_share", "thresholds", checks.fraction, option=False, env=True),
    Setting("fail_on", "gate", checks.FAIL_ON, "Which plan verdicts fail the gate [{default}].",
            env=True),
    Setting("tolerance", "gate", checks.fraction, "Allowed absolute drop of a plan's hidden_pct "
            "against the baseline [{default}].", "X", env=True),
    Setting("reference", "gate", checks.text, "The same workload captured without the "
            "multi-stream change: report layer and step wall before/after (docs/gain.md).",
            "PATH", relative=True),
    Setting("require_gain", "gate", checks.number, "With --reference: fail unless the step is "
            "at least X% faster [off].", "X"),
    Setting("max_join_wait_us", "gate", checks.non_negative, "Fail when the main stream waits "
            "more than X µs per layer for the side tail (new waits against --reference when "
            "given) [off].", "X"),
    Setting("order", "runs", checks.ORDER, "Run order of several PATHs: by capture time, or "
            "as given on the command line (a note says when they differ) [{default}]."),
    Setting("max_input_size", "runs", checks.size, "Refuse a kernel file larger than SIZE, "
            "e.g. 64GiB; 0: no limit [16GiB].", "SIZE", env=True, text=True),
    _device("soc", checks.text, "SoC name for the device cores when the capture lacks "
            "info.json (e.g. Ascend910B2).", metavar="NAME"),
    _device("aicore", checks.integer(1)),
    _device("vectorcore", checks.integer(1)),
    _device("ge_aicore_num", checks.ge_aicore_num),
    Setting("soc_ini", "device", checks.text, "CANN platform config <SoC>.ini giving the device "
            "cores.", "FILE", relative=True),
    Setting("graph_dump", "device", checks.text, "GE graph dump (file or folder) with "
            "_op_aicore_num / _op_vectorcore_num.", "PATH", relative=True),
    Setting("fail_on_contention", "gate", checks.boolean, "Block demand above the device cores "
            "fails the gate."),
    # the `run` command's own options (cli/run.py) and the `lint` command's (cli/lint.py)
    Setting("runs", "run", checks.integer(1), scope="run", default=5),
    Setting("profiler", "run", checks.choice(*PROFILERS), scope="run", default=PROFILERS[0]),
    Setting("level", "run", checks.choice(*LEVELS), scope="run", default=LEVELS[0]),
    Setting("lint_select", "lint", checks.rule_ids, key="select", scope="lint", default=()),
    Setting("lint_ignore", "lint", checks.rule_ids, key="ignore", scope="lint", default=()),
    # "PATH[:LINE]:RULE" findings suppressed knowingly (config only; inline comments too)
    Setting("lint_suppress", "lint", checks.lint_suppressions, key="suppress", scope="lint",
            default=(), option=False),
    # operators known to be Ascend C besides cores.rules.ASCEND_C_OPERATORS (docs/advice.md)
    Setting("ascend_c", "cores", checks.regexes, option=False),
)  # fmt: skip

BY_NAME = {setting.name: setting for setting in SETTINGS}
# section -> config key -> setting, in the file's order; [[plan]] is parsed apart
# (config/parse.py)
SECTIONS: dict[str, dict[str, Setting]] = {
    section: {s.config_key: s for s in SETTINGS if s.section == section}
    for section in ("thresholds", "runs", "gate", "device", "run", "lint", "cores")
}
# the settings merged into Options: option > environment > file > default (config/merge.py)
MERGED = tuple(s for s in SETTINGS if s.scope == "analysis" and s.section != "cores")


@dataclass(frozen=True, init=False)
class Config:
    """What a config file set: its plans, the device, and each setting it gave (by the setting's
    name: ``config.warmup``; None, or () for a list, when not set: a lower layer decides)."""

    source: Path | None  # the file read; None when no config was found
    prefix: str  # "tool.overlap-check." when read from pyproject.toml
    device: DeviceConfig
    plans: tuple[Plan, ...]
    values: dict[str, Any]

    def __init__(
        self,
        source: Path | None = None,
        prefix: str = "",
        device: DeviceConfig | None = None,
        plans: tuple[Plan, ...] = (),
        values: dict[str, Any] | None = None,  # as dataclasses.replace passes them
        **settings: Any,
    ) -> None:
        values = {**(values or {}), **settings}
        unknown = set(values) - set(BY_NAME)
        if unknown:
            raise TypeError(f"Config: unknown settings {sorted(unknown)}")
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "prefix", prefix)
        object.__setattr__(self, "device", device or DeviceConfig())
        object.__setattr__(self, "plans", plans)
        object.__setattr__(self, "values", values)

    def __getattr__(self, name: str) -> Any:
        setting = BY_NAME.get(name)
        if setting is None or name == "values":
            raise AttributeError(name)
        unset = () if isinstance(setting.value_default, tuple) else None
        return self.values.get(name, unset)

    def key_origin(self, section: str, key: str) -> str:
        """How a message names a value that came from this file."""
        return f"{self.source or 'config'} key {self.prefix}{section}.{key}"
