"""Shared test fixtures.

Real Ascend captures live beside the repository in ../shared/real-profiles
(third-party data, never copied here); tests that need them are skipped when
the folder is absent, so a plain clone still passes.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from overlap_check.report import text_table

REPO_ROOT = Path(__file__).resolve().parents[1]
UNWRAPPED = 100_000  # the width tests render the text report at
REAL_PROFILES = REPO_ROOT.parent / "shared" / "real-profiles"

# No timed tests: hypothesis' 200 ms deadline per example failed property tests on a loaded
# 2-core machine without any change in the code (speed targets live in `make bench`)
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")


@pytest.fixture(autouse=True)
def _plain_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports are compared as exact text: the user's NO_COLOR/FORCE_COLOR must not colour them,
    nor COLUMNS wrap them. Tests read whole lines: the text report is not fitted to a
    terminal (text_table.DEFAULT_WIDTH) but where tests/test_text_width.py sets a width."""
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", str(UNWRAPPED))
    monkeypatch.setattr(text_table, "DEFAULT_WIDTH", UNWRAPPED)


@pytest.fixture(autouse=True)
def _signal_handlers() -> Iterator[None]:
    # `run` leaves its handlers installed (SIGINT and SIGTERM ignored once it ends) until the
    # process exits: a test that runs it in this process must not leave them to the tests
    # after it, whose subprocesses would inherit the ignored signals
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for number, handler in saved.items():
        signal.signal(number, handler)


@pytest.fixture(scope="session")
def real_profiles() -> Path:
    """Path of ../shared/real-profiles; skips the test when it is absent."""
    if not REAL_PROFILES.is_dir():
        pytest.skip("../shared/real-profiles is not present")
    return REAL_PROFILES


@pytest.fixture
def deep_dir(tmp_path: Path) -> Iterator[Path]:
    """tmp_path/deep with 1000 nested ``d`` dirs below it, removed again after the test
    without recursion (pytest's own clean-up of old temp dirs uses shutil.rmtree,
    which recurses once per level and would fail on it in a later session)."""
    root = tmp_path / "deep"
    here = str(root)
    os.mkdir(here)
    for _ in range(1000):
        here += "/d"
        os.mkdir(here)
    yield root
    while here != str(tmp_path):
        os.rmdir(here)
        here = os.path.dirname(here)
