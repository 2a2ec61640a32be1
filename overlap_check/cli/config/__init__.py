"""The config file: discovery, validation, and merging with environment and CLI.

Discovery (relative to the working directory): ``--config FILE``, else
``./overlap-check.toml``, else ``[tool.overlap-check]`` in ``./pyproject.toml``,
else no config. Precedence of every value: CLI option > environment variable
(``OVERLAP_CHECK_*``) > config file > the default in :class:`~overlap_check.model.Options`.
Every mistake raises :class:`~overlap_check.model.errors.ConfigError` naming the file
and the key (``plan[2].side``, 1-based) and, where it can be found, the line.
docs/config.md lists every key.

The modules, in the order a value meets them:

- :mod:`.files`: find and read the TOML file, and locate a key's line for messages;
- :mod:`.parse`: validate each section into a :class:`Config` (:mod:`.schema` lists
  the sections and keys, :mod:`.checks` the checks of single values);
- :mod:`.merge`: CLI > environment > file > defaults, into :class:`~overlap_check.model.Options`;
- :mod:`.command_line`: the one-off plan of ``--side ...`` and the ``--output`` format.
"""

from __future__ import annotations

from overlap_check.cli.config.command_line import format_for_path, plan_from_cli
from overlap_check.cli.config.files import find_config, load_config
from overlap_check.cli.config.merge import ENVIRONMENT, OVERRIDE_KEYS, merge_options
from overlap_check.cli.config.schema import CONFIG_NAME, PYPROJECT_TABLE, Config

__all__ = [
    "CONFIG_NAME",
    "ENVIRONMENT",
    "OVERRIDE_KEYS",
    "PYPROJECT_TABLE",
    "Config",
    "find_config",
    "format_for_path",
    "load_config",
    "merge_options",
    "plan_from_cli",
]
