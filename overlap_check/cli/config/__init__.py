"""The config file: discovery, validation, and merging with environment and CLI.

Discovery (relative to the working directory): ``--config FILE``, else the nearest
``overlap-check.toml`` or ``pyproject.toml`` with ``[tool.overlap-check]`` (:mod:`.files`).
Precedence of every value: CLI option > environment variable (``OVERLAP_CHECK_*``) > config
file > the default in :class:`~overlap_check.model.Options` (:mod:`.merge`). Every mistake
raises :class:`~overlap_check.model.errors.ConfigError` naming the file, the key
(``plan[2].side``, 1-based) and, where it can be found, the line. Every setting is defined
once in :mod:`.settings` (the click options, sections, merge and docs/config.md's tables
derive from it); :mod:`.parse` validates a file's sections and ``[[plan]]`` tables,
:mod:`.checks` single values, :mod:`.command_line` the ``--side ...`` plan and ``--output``.
"""

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
