"""Files are never written through a link or into a device (output_file.py, issue 26).

``--output`` (analyze, lint, plot) and ``run --out`` refuse a symbolic link (to a
file, dangling, to a FIFO standing in for a device node) and anything that is not a
regular file, with exit 2 naming the path; the link's target is left as it was. Two
``run``s into the same ``--out`` at once: one runs, the other exits 2 at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.model.errors import InputError, UsageError
from overlap_check.report.output_file import write_output
from overlap_check.runner.session import LOCK_NAME, prepare_out_dir

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = str(ROOT / "fixtures" / "fake-dual-stream")
LINT = str(ROOT / "tests" / "data" / "lint" / "moe_ge")


def _places(tmp_path: Path) -> dict[str, Path]:
    """Each kind of output path that must be refused; the link targets are in tmp_path."""
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    fifo = tmp_path / "device.json"
    os.mkfifo(fifo)  # a node like /dev/null that an unprivileged test can make
    places = {
        "link to a file": tmp_path / "to-file.json",
        "dangling link": tmp_path / "dangling.json",
        "link to a device": tmp_path / "to-device.json",
        "device": fifo,
        "folder": tmp_path / "folder.json",
    }
    places["link to a file"].symlink_to(target)
    places["dangling link"].symlink_to(tmp_path / "created-through-link.json")
    places["link to a device"].symlink_to(fifo)
    places["folder"].mkdir()
    return places


def _untouched(tmp_path: Path) -> None:
    assert (tmp_path / "precious.txt").read_text() == "keep me"
    assert not (tmp_path / "created-through-link.json").exists()
    assert (tmp_path / "device.json").is_fifo()
    assert [p.name for p in tmp_path.glob(".*.tmp")] == []


def test_write_output_refuses_every_place_that_is_not_a_regular_file(tmp_path: Path) -> None:
    for kind, path in _places(tmp_path).items():
        with pytest.raises(InputError) as caught:
            write_output(path, "{}")
        assert str(caught.value).startswith(f"{path}: is "), kind
        assert os.path.islink(path) == ("link" in kind), kind  # the link itself is kept
    _untouched(tmp_path)
    with pytest.raises(InputError, match="is a character device"):
        write_output("/dev/null", "{}")  # refused before any write, as root too
    assert Path("/dev/null").is_char_device()
    plain = tmp_path / "plain.json"
    write_output(plain, "{}")  # a new file, then replacing a regular one, still work
    write_output(plain, "[]")
    assert plain.read_text() == "[]"


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", FIXTURE, "--output"],
        ["lint", LINT, "--output"],
    ],
)
def test_output_options_exit_2_naming_the_path(tmp_path: Path, command: list[str]) -> None:
    for kind, path in _places(tmp_path).items():
        if kind == "folder" and command[0] == "lint":
            continue  # click itself refuses a folder for lint's --output (dir_okay=False)
        result = CliRunner().invoke(cli, [*command, str(path)])
        assert result.exit_code == 2, (kind, result.output)
        assert f"overlap-check: error: {path}: is " in result.stderr, kind
        assert "capture(s)" not in result.stderr  # refused before the analysis
        assert "Traceback" not in result.output
    _untouched(tmp_path)


def test_plot_refuses_a_link(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    link = tmp_path / "timeline.png"
    link.symlink_to(tmp_path / "precious.txt")
    (tmp_path / "precious.txt").write_text("keep me")
    args = ["plot", FIXTURE, "--side", "SharedExpert", "--dominator", "GroupedMatmul"]
    result = CliRunner().invoke(cli, [*args, "-o", str(link), "--chart", "timeline"])
    assert result.exit_code == 2, result.output
    assert str(link) in result.stderr
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_run_out_refuses_a_symbolic_link(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "runs"
    link.symlink_to(tmp_path / "elsewhere")
    result = CliRunner().invoke(cli, ["run", "--out", str(link), "--", "python", "x.py"])
    assert result.exit_code == 2, result.output
    assert f"--out {link} is a symbolic link" in result.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []
    with pytest.raises(UsageError, match="symbolic link"):
        prepare_out_dir(link)


def test_a_second_session_into_a_locked_out_folder_stops_at_once(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    prepare_out_dir(out)  # this process holds the lock now
    assert (out / LOCK_NAME).is_file()
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from overlap_check.runner.session import prepare_out_dir\n"
        "from overlap_check.model.errors import UsageError\n"
        "try:\n    prepare_out_dir(Path(sys.argv[1]))\n"
        "except UsageError as err:\n    print(err)\n"
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    assert f"--out {out} is in use by another overlap-check run" in done.stdout
    assert time.monotonic() - started < 30


def test_two_runs_into_the_same_out_at_once(tmp_path: Path) -> None:
    """Both start together; one runs the workload, the other exits 2 at once (by the lock, or
    by finding the folder taken), and the one manifest is the first run's alone."""
    out = tmp_path / "runs"
    workload = [sys.executable, "-c", "import time; time.sleep(4)"]
    argv = [sys.executable, "-m", "overlap_check", "run", "--profiler", "torch_npu",
            "--runs", "1", "--out", str(out), "--", *workload]  # fmt: skip
    procs = [subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    results = [(p.wait(timeout=120), p.communicate()[1]) for p in procs]
    refused = [stderr for code, stderr in results if code == 2 and f"--out {out}" in stderr]
    assert len(refused) == 1, results
    assert "in use by another overlap-check run" in refused[0] or "is not empty" in refused[0]
    assert [p.name for p in out.iterdir() if p.name.startswith("run-")] == ["run-1"]
