"""Helpers for the `run` tests: an environment that puts the stand-ins in place.

Loaded by path from the tests (tests/standins is never on the test process's
sys.path, so the fake torch_npu cannot leak into the overlap-check process).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

STANDINS = Path(__file__).resolve().parent
REPO = STANDINS.parents[1]
WORKLOAD = STANDINS / "workload.py"
USER_SITE = STANDINS / "user_site"


def standin_env(
    tmp: Path, *, scenario: str = "warm_cold_runs", extra_path: str = ""
) -> dict[str, str]:
    """os.environ plus: the fake torch_npu importable, a fake `msprof` on PATH, call logs in tmp."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    msprof = bin_dir / "msprof"
    msprof.write_text(
        f"#!{sys.executable}\nimport runpy, sys\n"
        f"sys.argv[0] = {str(msprof)!r}\n"
        f"runpy.run_path({str(STANDINS / 'msprof.py')!r}, run_name='__main__')\n"
    )
    msprof.chmod(msprof.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OVERLAP_CHECK_")}
    for key in ("RANK", "PYTHONSTARTUP", "FAKE_TORCH_NPU_PARSE_FAIL", "FAKE_TORCH_SERIAL"):
        env.pop(key, None)
    python_path = [str(STANDINS), str(REPO)] + ([extra_path] if extra_path else [])
    env["PYTHONPATH"] = os.pathsep.join(python_path)
    env["PATH"] = (
        str(bin_dir)
        + os.pathsep
        + str(Path(sys.executable).parent)
        + os.pathsep
        + env.get("PATH", "")
    )
    env["FAKE_TORCH_NPU_LOG"] = str(tmp / "torch_npu-calls.jsonl")
    env["FAKE_TORCH_LOG"] = str(tmp / "torch-calls.jsonl")
    env["FAKE_MSPROF_LOG"] = str(tmp / "msprof-calls.jsonl")
    env["FAKE_TORCH_NPU_SCENARIO"] = scenario
    env["FAKE_MSPROF_SCENARIO"] = scenario
    env["PYTHONUNBUFFERED"] = "1"
    return env


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def calls(tmp: Path, name: str) -> list[dict[str, Any]]:
    """The fake torch_npu's recorded calls named ``name``."""
    return [c for c in read_jsonl(tmp / "torch_npu-calls.jsonl") if c["call"] == name]
