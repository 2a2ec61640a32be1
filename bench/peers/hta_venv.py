"""The separate venv Holistic Trace Analysis runs in (never a project dependency).

Created once under the cache (``bench/.cache/hta-venv``) with the interpreter
the benchmark runs on. HTA 0.5.0 declares jupyterlab and pytest as install
requirements; it needs neither to load a trace and analyse it, and jupyterlab
alone takes minutes to install, so HTA is installed with ``--no-deps`` plus the
packages its analysis modules import (``hta/common``, ``hta/analyzers``,
``hta/utils``): pandas, numpy, plotly, networkx, psutil, pyyaml.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HTA_REQUIREMENT = "HolisticTraceAnalysis==0.5.0"
HTA_IMPORTS = ("pandas", "numpy", "plotly", "networkx", "psutil", "pyyaml")
INSTALL_TIMEOUT_S = 480


@dataclass(frozen=True)
class HtaVenv:
    python: Path | None  # None: not usable (see note)
    note: str
    install_s: float  # 0.0 when it was already there
    versions: dict[str, str]


def _base_python() -> str:
    """The interpreter the project venv was made from (a venv of a venv is fragile)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _versions(python: Path) -> dict[str, str]:
    code = (
        "import json, importlib.metadata as m, sys, hta.trace_analysis;"
        "names = ['HolisticTraceAnalysis', 'pandas', 'numpy'];"
        "print(json.dumps({n: m.version(n) for n in names} | {'python': sys.version.split()[0]}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    versions: dict[str, str] = json.loads(out.stdout)
    return versions


def ensure_hta_venv(cache: Path) -> HtaVenv:
    """The HTA venv's python, installing it first when missing or incomplete."""
    venv = cache / "hta-venv"
    python = venv / "bin" / "python"
    marker = venv / "installed.json"
    if marker.is_file() and python.exists():
        try:
            return HtaVenv(python, "cached", 0.0, _versions(python))
        except (subprocess.CalledProcessError, ValueError):
            pass  # broken: build it again
    shutil.rmtree(venv, ignore_errors=True)
    start = time.perf_counter()
    steps = [
        [_base_python(), "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "-q", "--no-deps", HTA_REQUIREMENT],
        [str(python), "-m", "pip", "install", "-q", *HTA_IMPORTS],
    ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as err:
            return HtaVenv(None, f"`{' '.join(step[-3:])}` failed: {err}", 0.0, {})
        if done.returncode != 0:
            lines = [
                line
                for line in (done.stderr + done.stdout).splitlines()
                if line.strip() and "is ignored" not in line
            ]
            reason = " / ".join(lines[-3:]) or f"exit code {done.returncode}"
            return HtaVenv(None, f"`pip install` failed: {reason}", 0.0, {})
    elapsed = time.perf_counter() - start
    try:
        versions = _versions(python)
    except (subprocess.CalledProcessError, ValueError) as err:
        return HtaVenv(None, f"HTA installed but not importable: {err}", elapsed, {})
    marker.write_text(json.dumps({"requirement": HTA_REQUIREMENT, "versions": versions}))
    return HtaVenv(python, "installed", elapsed, versions)
