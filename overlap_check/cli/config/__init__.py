"""The config file: discovery, validation, and merging with environment and CLI (docs/config.md).

Every setting is defined once in :mod:`.settings`; :mod:`.files` finds and reads the file,
:mod:`.parse` validates its sections and ``[[plan]]`` tables, :mod:`.checks` single values,
:mod:`.merge` applies the precedence, :mod:`.command_line` the ``--side ...`` plan and
``--output``."""

from __future__ import annotations

from overlap_check.cli.config.command_line import format_for_path, plan_from_cli
from overlap_check.cli.config.files import find_config, load_config
from overlap_check.cli.config.merge import merge_options
from overlap_check.cli.config.settings import Config

__all__ = [
    "Config",
    "find_config",
    "format_for_path",
    "load_config",
    "merge_options",
    "plan_from_cli",
]
