"""What a config file may hold (section -> key -> check) and :class:`Config`, what it set."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from overlap_check.cli.config import checks
from overlap_check.model import DeviceConfig, FailOn, Order, Per, Plan

CONFIG_NAME = "overlap-check.toml"
PYPROJECT_TABLE = "tool.overlap-check"

# section -> key -> check. Plans ([[plan]]) are parsed apart.
SECTIONS: dict[str, dict[str, Callable[[Any], Any]]] = {
    "thresholds": {
        "real": checks.fraction,
        "fake": checks.fraction,
        "fake_share": checks.fraction,
    },
    "runs": {
        "warmup": checks.integer(0),
        "min_runs": checks.integer(1),
        "per": checks.PER,
        "order": checks.ORDER,
    },
    "gate": {
        "fail_on": checks.FAIL_ON,
        "tolerance": checks.fraction,
        "strict": checks.boolean,
        "fail_on_contention": checks.boolean,
        "reference": checks.text,  # resolved against the config file's folder
        "require_gain": checks.number,
        "max_join_wait_us": checks.non_negative,
    },
    "device": {
        "soc": checks.text,
        "aicore": checks.integer(1),
        "vectorcore": checks.integer(1),
        "ge_aicore_num": checks.ge_aicore_num,
        "soc_ini": checks.text,
        "graph_dump": checks.text,
    },
    "run": {
        "runs": checks.integer(1),
        "profiler": checks.choice("auto", "torch_npu", "torch", "msprof"),
        "level": checks.choice("Level1", "Level2"),
    },
    "lint": {"select": checks.rule_ids, "ignore": checks.rule_ids},
    # operators known to be Ascend C besides cores.rules.ASCEND_C_OPERATORS (docs/advice.md)
    "cores": {"ascend_c": checks.regexes},
}
PLAN_KEYS = (
    "name",
    "side",
    "dominator",
    "side_stream",
    "main_stream",
    "limit_core",
    "main_limit_core",
    "path",
    "side_kind",
    "op_type",
)
LIMIT_KEYS: dict[str, Callable[[Any], Any]] = {
    "aicore": checks.integer(1),
    "vectorcore": checks.integer(1),
    "mode": checks.choice("ge", "npugraph_ex"),
}
# (section, key) -> Config field, where the names differ
FIELD_OF = {("lint", "select"): "lint_select", ("lint", "ignore"): "lint_ignore"}
DEVICE_KEYS = ("soc", "aicore", "vectorcore", "ge_aicore_num")


@dataclass(frozen=True)
class Config:
    """What a config file set; None means "not set" (a lower layer decides)."""

    source: Path | None = None  # the file read; None when no config was found
    prefix: str = ""  # "tool.overlap-check." when read from pyproject.toml
    real: float | None = None
    fake: float | None = None
    fake_share: float | None = None
    warmup: int | None = None
    min_runs: int | None = None
    per: Per | None = None
    order: Order | None = None
    fail_on: FailOn | None = None
    tolerance: float | None = None
    strict: bool | None = None
    fail_on_contention: bool | None = None
    reference: str | None = None  # resolved against the config file's folder
    require_gain: float | None = None
    max_join_wait_us: float | None = None
    device: DeviceConfig = field(default_factory=DeviceConfig)
    soc_ini: str | None = None  # resolved against the config file's folder
    graph_dump: str | None = None
    plans: tuple[Plan, ...] = ()
    runs: int | None = None  # `run --runs`
    profiler: Literal["auto", "torch_npu", "torch", "msprof"] | None = None
    level: Literal["Level1", "Level2"] | None = None
    lint_select: tuple[str, ...] = ()
    lint_ignore: tuple[str, ...] = ()
    ascend_c: tuple[str, ...] = ()  # [cores] ascend_c: more Ascend C operator name regexes

    def key_origin(self, section: str, key: str) -> str:
        """How a message names a value that came from this file."""
        return f"{self.source or 'config'} key {self.prefix}{section}.{key}"
