"""A stand-in for the msprof CLI: ``msprof [options] <app> [app args]`` (docs/formats.md).

Records its argv as a JSON line in ``$FAKE_MSPROF_LOG``, runs the app, then
writes ``PROF_*`` into ``--output`` with ``synth.write_msprof_dir``
(scenario ``FAKE_MSPROF_SCENARIO``, default ``warm_cold_runs``; run
``OVERLAP_CHECK_RUN_INDEX`` gets the i-th) and exits with the app's code.
Tests install it as an executable named ``msprof`` on PATH.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    options: dict[str, str] = {}
    position = 0
    while position < len(argv) and argv[position].startswith("--"):
        key, _, value = argv[position].partition("=")
        options[key] = value
        position += 1
    app = argv[position:]
    log = os.environ.get("FAKE_MSPROF_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"argv": argv, "pid": os.getpid()}) + "\n")
    if not app or "--output" not in options:
        print("msprof: usage: msprof --output=DIR [options] <app>", file=sys.stderr)
        return 1
    code = subprocess.call(app)
    from synth import scenarios, write_msprof_dir

    built = getattr(scenarios, os.environ.get("FAKE_MSPROF_SCENARIO", "warm_cold_runs"))()
    index = int(os.environ.get("OVERLAP_CHECK_RUN_INDEX", "1"))
    scenario = built.scenarios[(index - 1) % len(built.scenarios)]
    write_msprof_dir(dataclasses.replace(scenario, pid=os.getpid()), Path(options["--output"]))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
