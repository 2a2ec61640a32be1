"""Every command's help has examples, and every default the help shows is Options()'s."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import get_args

import click
import pytest
from click.testing import CliRunner

from overlap_check.cli import COMMANDS, cli
from overlap_check.cli.config import checks
from overlap_check.cli.config.checks import Invalid
from overlap_check.judge.verdict import FAILING
from overlap_check.model import FailOn, Options, Order, Per, Plan

# option -> the Options() value its help shows in [brackets]
DEFAULTS = Options()
SHOWN = {
    "--warmup": DEFAULTS.warmup,
    "--min-runs": DEFAULTS.min_runs,
    "--per": DEFAULTS.per,
    "--real": DEFAULTS.thresholds.real,
    "--fake": DEFAULTS.thresholds.fake,
    "--fail-on": DEFAULTS.fail_on,
    "--tolerance": DEFAULTS.tolerance,
    "--order": DEFAULTS.order,
    "--side-kind": Plan("one-off").side_kind,
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help_with_an_example(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout
    assert f"overlap-check {name} " in result.stdout.split("Examples:", 1)[1]


def _options(name: str) -> dict[str, click.Option]:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return {
        flag: param
        for param in command.params
        if isinstance(param, click.Option)
        for flag in param.opts
    }


@pytest.mark.parametrize("name", ["analyze", "run"])
def test_help_defaults_are_the_options_defaults(name: str) -> None:
    options = _options(name)
    for flag, value in SHOWN.items():
        if flag not in options:
            continue
        shown = re.findall(r"\[([^\]]+)\]\.?$", options[flag].help or "")
        assert shown == [str(value)], (name, flag, options[flag].help)


def test_compare_tolerance_default_is_the_options_default() -> None:
    shown = _options("compare")["--tolerance"].help or ""
    assert f"[default: {DEFAULTS.tolerance}, or the config's]" in shown


def test_choices_come_from_the_literal_types() -> None:
    options = _options("analyze")
    for flag, kind in (("--fail-on", FailOn), ("--per", Per), ("--order", Order)):
        choice = options[flag].type
        assert isinstance(choice, click.Choice)
        assert tuple(choice.choices) == get_args(kind)
    assert set(FAILING) == set(get_args(FailOn))  # the gate's table covers every value
    for check, kind in ((checks.FAIL_ON, FailOn), (checks.PER, Per), (checks.ORDER, Order)):
        assert [check(value) for value in get_args(kind)] == list(get_args(kind))
        with pytest.raises(Invalid):
            check("sometimes")


def test_a_spawned_worker_importing_an_unguarded_script_runs_nothing(tmp_path: Path) -> None:
    # "spawn" imports the parent's main script as __mp_main__ in every worker; a console
    # script without a __main__ guard must not analyse everything again there
    import runpy

    script = tmp_path / "overlap-check"
    script.write_text("from overlap_check.cli import main\nmain(['--version'])\n")
    runpy.run_path(str(script), run_name="__mp_main__")  # no SystemExit: nothing ran
    with pytest.raises(SystemExit):
        runpy.run_path(str(script), run_name="__main__")


def test_the_cli_and_its_workers_collect_garbage_alike() -> None:
    # cli.main (the parent) and measure.workers (each worker) set the same GC thresholds;
    # the literal is written twice because --help must not import the engine
    import gc

    from overlap_check.cli import main
    from overlap_check.measure.workers import GC_THRESHOLDS

    saved = gc.get_threshold()
    try:
        with pytest.raises(SystemExit):
            main(["--version"])
        assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.set_threshold(*saved)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["analyze", "fixtures/fake-dual-stream", "--side", "SharedExpert",
          "--dominator", "GroupedMatmul", "--format", "json", "-q"], 1),
        (["analyze", "fixtures/real-dual-stream", "--side", "SharedExpert",
          "--dominator", "GroupedMatmul", "--format", "json", "-q"], 0),
        (["analyze", "fixtures/no-such-capture"], 2),
        (["analyze", "--no-such-option"], 2),
    ],
)  # fmt: skip
def test_the_console_script_ends_with_its_code_and_all_its_output(
    args: list[str], code: int
) -> None:
    # main() (no argv: the console script) ends the process with os._exit after flushing
    # stdout and stderr: the exit code and every byte of the report must survive it
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "overlap_check", *args], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == code, done.stderr
    if code in (0, 1):
        assert json.loads(done.stdout)["exit_code"] == code
    else:
        assert done.stdout == "" and done.stderr.strip()


def test_an_in_process_caller_of_main_keeps_its_interpreter() -> None:
    from overlap_check.cli import main

    with pytest.raises(SystemExit) as ended:
        main(["--version"])  # argv given: SystemExit, as click raises it
    assert ended.value.code == 0


def test_the_entry_point_sets_polars_allocator_unless_the_user_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from overlap_check.cli import ALLOCATOR, main

    key, ours = ALLOCATOR
    monkeypatch.setenv(key, "")  # recorded, so that the teardown restores what was there
    # polars' own defaults, as a parent process that imported polars passes them on, are no
    # user's setting
    polars_defaults = "dirty_decay_ms:500,muzzy_decay_ms:1000"
    for given, expected in ((None, ours), (polars_defaults, ours), ("narenas:2", "narenas:2")):
        if given is None:
            monkeypatch.delenv(key)
        else:
            monkeypatch.setenv(key, given)
        with pytest.raises(SystemExit):
            main(["--version"])
        assert os.environ[key] == expected


def test_worker_processes_keep_polars_allocator_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    # the setting the console entry made (after polars' own defaults, as polars writes it)
    # leaves the environment the workers are spawned with; a user's own setting stays
    from overlap_check import ALLOCATOR
    from overlap_check.measure import workers

    key, ours = ALLOCATOR
    for value, kept in ((f"dirty_decay_ms:500,{ours}", False), ("narenas:2", True)):
        monkeypatch.setenv(key, value)
        with workers._pool(2) as pool:
            assert pool is not None
            assert os.environ.get(key) == (value if kept else None)


@pytest.mark.parametrize("descriptor", [1, 2])
def test_the_console_script_keeps_its_code_with_stdout_or_stderr_closed(descriptor: int) -> None:
    # Started with stdout (1) or stderr (2) closed, the shell's `>&-`, sys.stdout or
    # sys.stderr is None: the exit code is the gate's (0: a plan that works), not 1 from
    # a traceback at exit.
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    plan = ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]
    command = f'"$0" -m overlap_check analyze fixtures/real-dual-stream "$@" {descriptor}>&-'
    done = subprocess.run(
        ["sh", "-c", command, sys.executable, *plan], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
