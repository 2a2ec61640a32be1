"""What a config file may hold besides the settings (config/settings.py lists those):
the [[plan]] keys, and :class:`Config`, what a file set."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from overlap_check.cli.config import checks
from overlap_check.cli.config.settings import BY_NAME
from overlap_check.model import DeviceConfig, Plan

CONFIG_NAME = "overlap-check.toml"
PYPROJECT_TABLE = "tool.overlap-check"

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


@dataclass(frozen=True, init=False)
class Config:
    """What a config file set: its plans, the device, and each setting it gave (by the
    setting's name: ``config.warmup``; None, or () for a list, when not set: a lower layer
    decides)."""

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
