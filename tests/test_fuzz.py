"""Seeded mutation fuzzing of the CLI over the fixtures and the real captures.

Each case copies one capture (a fixture run, or a real capture from
../shared/real-profiles when present) to a temporary directory, damages it in one
way (byte flips, truncation, header edits, N/A / huge / negative / NaN values,
non-UTF-8 bytes, deep JSON, corrupt SQLite, odd directories, a bad TOML config)
and runs ``overlap-check analyze`` on it. The contract for every case:

- exit 0 or 1 with a JSON report that parses and holds no impossible figure, or
- exit 2 with one ``overlap-check: error:`` line naming a file of the case,

and never a traceback, an "internal error" or a hang. ``make test`` runs
FUZZ_CASES_QUICK cases; ``make fuzz`` runs ``FUZZ_CASES`` (default 2000).
Case ``n`` is always the same input: ``FUZZ_START=n FUZZ_CASES=1`` replays it.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryFile
from types import FrameType
from typing import IO

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.model.errors import OverlapCheckError
from overlap_check.readers import load

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real-profiles"
QUICK_CASES = 200
CASE_SECONDS = 20  # a case that runs longer is a hang (a FIFO read, a runaway loop)

VALUES = [
    "N/A", "", "nan", "NaN", "inf", "-inf", "-1", "-5000000", "0", "abc", '"',
    "99999999999999999999999", "9223372036854775807", "-9223372036854775808",
    "1e308", "4611686018427387904", "1.5e18", "1736408883704643.999999999",
    "\u00e9\u00e8", "0x10", " 12 ", "1,2",
]  # fmt: skip


@dataclass(frozen=True)
class Subject:
    """One capture to damage: the directory (or file) passed to analyze."""

    label: str
    source: Path


def _subjects() -> list[Subject]:
    found: list[Subject] = []
    for scenario in sorted(p for p in (ROOT / "fixtures").iterdir() if p.is_dir()):
        runs = sorted(p for p in scenario.iterdir() if p.is_dir())
        found.append(Subject(scenario.name, runs[0] if runs else scenario))
    if REAL.is_dir():
        for entry in sorted(REAL.iterdir()):
            if entry.is_dir():
                found.append(Subject(f"real:{entry.name}", entry))
    return found


SUBJECTS = _subjects()


# ------------------------------------------------------------------ mutations


def _walk(root: Path) -> Iterator[Path]:
    """Every path below ``root``, without recursion (a deep tree is one of the cases)."""
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                yield Path(entry.path)
                if entry.is_dir(follow_symlinks=False) and os.access(entry.path, os.R_OK):
                    stack.append(entry.path)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


# The files the readers take kernels from: damaged three times as often as the rest.
KERNEL_FILES = re.compile(r"(kernel_details|trace_view|op_summary|task_time|msprof).*|.*\.db$")


def _data_files(root: Path) -> list[Path]:
    wanted = (".csv", ".json", ".db")
    files = [p for p in _files(root) if p.suffix in wanted or ".json." in p.name]
    files += [p for p in files if KERNEL_FILES.match(p.name)] * 2
    return files or _files(root)


def flip_bytes(rng: random.Random, path: Path) -> str:
    data = bytearray(path.read_bytes())
    for _ in range(rng.randint(1, 12)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    path.write_bytes(bytes(data))
    return "flip"


def truncate(rng: random.Random, path: Path) -> str:
    data = path.read_bytes()
    path.write_bytes(data[: rng.randrange(len(data) + 1)] if data else b"")
    return "truncate"


def edit_header(rng: random.Random, path: Path) -> str:
    lines = path.read_bytes().split(b"\n")
    cells = lines[0].split(b",")
    if cells:
        i = rng.randrange(len(cells))
        choice = rng.randrange(4)
        if choice == 0:
            del cells[i]
        elif choice == 1:
            cells[i] = cells[i].upper()
        elif choice == 2:
            cells.insert(i, cells[i])
        else:
            cells[i] = b"Start Time(us)"
    lines[0] = b",".join(cells)
    path.write_bytes(b"\n".join(lines))
    return "header"


def replace_values(rng: random.Random, path: Path) -> str:
    text = path.read_bytes().decode("utf-8", "replace")
    if path.suffix == ".db":
        return corrupt_sqlite(rng, path)
    value = rng.choice(VALUES)
    if path.suffix == ".csv":
        lines = text.split("\n")
        for _ in range(rng.randint(1, 4)):
            row = rng.randrange(1, max(2, len(lines)))
            if row < len(lines):
                cells = lines[row].split(",")
                cells[rng.randrange(len(cells))] = value
                lines[row] = ",".join(cells)
        text = "\n".join(lines)
    else:
        numbers = list(re.finditer(r'(?<=": )"?-?[0-9][0-9.]*"?', text))
        for match in rng.sample(numbers, min(len(numbers), rng.randint(1, 4))):
            quoted = json.dumps(value) if rng.random() < 0.5 else (value or "null")
            text = text[: match.start()] + quoted + text[match.end() :]
            break  # offsets move after one replacement
    path.write_text(text, encoding="utf-8")
    return f"value {value!r}"


KEY_COLUMNS = (
    "Start Time(us)", "Duration(us)", "Stream ID", "Block Dim", "Mix Block Dim", "Block Num",
    "Device_id", "Accelerator Core", "Task Type", "Step Id", "Task ID", "Name", "Type",
    "Task Start Time(us)", "Task Duration(us)",
)  # fmt: skip
JSON_KEYS = ("ts", "dur", "pid", "tid", "name", "args", "ph", "labels", "Task Type", "Stream Id")
JSON_VALUES = [
    "null", "[]", "{}", "true", '"N/A"', '"-1"', "-1", "1e400", "-50", '"9223372036854775808"',
    "9223372036854775807", '"Stream 99999999999999999999"', '"NPU 4294967296"', "[1, 2]",
    '"1736408883704643.1234567891"', '"\u0000"',
]  # fmt: skip


def column_values(rng: random.Random, path: Path) -> str:
    """One key column (or JSON key) set to one odd value in a share of the rows."""
    share = rng.choice([0.05, 0.5, 1.0])
    if path.suffix == ".db":
        return sqlite_values(rng, path)
    if path.suffix == ".csv":
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        header = lines[0].split(",")
        known = [i for i, name in enumerate(header) if name.strip() in KEY_COLUMNS]
        column = rng.choice(known or list(range(len(header))))
        value = rng.choice(VALUES)
        for row in range(1, len(lines)):
            cells = lines[row].split(",")
            if len(cells) == len(header) and rng.random() < share:
                cells[column] = value
                lines[row] = ",".join(cells)
        path.write_text("\n".join(lines), encoding="utf-8")
        return f"column {header[column]!r} = {value!r} in {share:.0%}"
    text = path.read_text(encoding="utf-8", errors="replace")
    key = rng.choice(JSON_KEYS)
    value = rng.choice(JSON_VALUES)
    pattern = re.compile(r'("' + re.escape(key) + r'"\s*:\s*)("[^"]*"|[-0-9.eE+]+|null|true|false)')
    text = pattern.sub(lambda m: m.group(1) + value if rng.random() < share else m.group(0), text)
    path.write_text(text, encoding="utf-8")
    return f"json {key!r} = {value} in {share:.0%}"


def stray_quote(rng: random.Random, path: Path) -> str:
    data = path.read_bytes()
    at = rng.randrange(len(data) + 1)
    path.write_bytes(data[:at] + b'"' + data[at:])
    return "quote"


def not_utf8(rng: random.Random, path: Path) -> str:
    data = path.read_bytes()
    at = rng.randrange(len(data) + 1)
    path.write_bytes(
        data[:at] + rng.choice([b"\xff\xfe", b"\xc3", b"\x80\x80", b"\x00"]) + data[at:]
    )
    return "non-utf8"


def deep_json(rng: random.Random, path: Path) -> str:
    depth = rng.choice([2000, 50000, 200000])
    path.write_text(rng.choice(["[", '{"a":']) * depth)
    return f"deep {depth}"


def corrupt_sqlite(rng: random.Random, path: Path) -> str:
    data = bytearray(path.read_bytes())
    if data[:6] != b"SQLite":
        return flip_bytes(rng, path)
    choice = rng.randrange(3)
    if choice == 0 and len(data) >= 2 * 4096:  # a page past the first one to damage
        page = rng.randrange(1, len(data) // 4096)
        for i in range(page * 4096, min(len(data), page * 4096 + 64)):
            data[i] = rng.randrange(256)
        path.write_bytes(bytes(data))
        return "sqlite page"
    if choice == 1:
        path.write_bytes(bytes(data[: rng.randrange(100, max(101, len(data)))]))
        return "sqlite cut"
    return sqlite_values(rng, path)


def sqlite_values(rng: random.Random, path: Path) -> str:
    """Huge, negative or text values in the time columns of a valid database."""
    value: object = rng.choice([-1, 2**63 - 1, -(2**63), 2**62, "N/A", 1.5e300, "é", None, 0])
    con = sqlite3.connect(path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            cols = [r[1] for r in con.execute(f"PRAGMA table_info('{table}')")]
            for col in cols:
                if col in ("startNs", "endNs", "streamId", "connectionId", "globalTaskId"):
                    con.execute(
                        f"UPDATE '{table}' SET '{col}' = ? WHERE rowid % ? = 0",
                        (value, rng.randint(1, 5)),
                    )
        con.commit()
    except sqlite3.DatabaseError:
        pass
    finally:
        con.close()
    return f"sqlite value {value!r}"


def shuffle_rows(rng: random.Random, path: Path) -> str:
    lines = path.read_bytes().split(b"\n")
    body = lines[1:]
    rng.shuffle(body)
    path.write_bytes(b"\n".join([lines[0], *body]))
    return "shuffle"


def odd_file(rng: random.Random, path: Path) -> str:
    """Replace a file by a directory, a FIFO, a broken symlink or an unreadable file."""
    path.unlink()
    choice = rng.randrange(4)
    if choice == 0:
        path.mkdir()
        return "dir"
    if choice == 1:
        os.mkfifo(path)
        return "fifo"
    if choice == 2:
        path.symlink_to(path.parent / "does-not-exist")
        return "broken-link"
    path.write_text("x")
    path.chmod(0)
    return "unreadable" if os.geteuid() != 0 else "one-byte"


def deep_tree(rng: random.Random, root: Path) -> str:
    here = str(root)
    try:
        for _ in range(rng.choice([200, 1000])):
            here += "/d"
            os.mkdir(here)  # one level at a time: Path.mkdir(parents=True) recurses
    except OSError:
        return "deep-tree (as deep as the system allows)"
    return "deep-tree"


Mutation = Callable[[random.Random, Path], str]
FILE_MUTATIONS: list[Mutation] = [
    flip_bytes, truncate, edit_header, replace_values, replace_values, column_values,
    column_values, column_values, column_values, stray_quote, not_utf8, deep_json,
    corrupt_sqlite, shuffle_rows, odd_file,
]  # fmt: skip


def bad_config(rng: random.Random, root: Path) -> tuple[str, Path]:
    config = root / "overlap-check.toml"
    choices = [
        '[[plan]\nname = "x"\n',
        '[[plan]]\nname = 3\nside = "("\n',
        '[[plan]]\nname = "p"\nside = "SharedExpert"\ndominator = "GroupedMatmul"\n'
        "side_stream = -1\n",
        "[thresholds]\nreal = 2.0\nfake = -1\n",
        '[[plan]]\nname = "p"\nside = "a"\n[plan.limit_core]\naicore = "many"\n',
        "\xff\xfe garbage",
        "[device]\naicore = -3\n",
        "[[plan]]\n" * 5000,
    ]
    text = rng.choice(choices)
    config.write_bytes(text.encode("utf-8", "surrogateescape"))
    return f"config {text[:20]!r}", config


# ------------------------------------------------------------------ issue 26 classes
# Seeds n with n % 5 == HOSTILE build these cases; every other seed is the case it always
# was (FUZZ_START=n replays it, REGRESSIONS keep their meaning).
HOSTILE = 4

TIME_FIELDS = ("Start Time(us)", "Duration(us)", "Task Start Time(us)", "Task Duration(us)",
               "task_start(us)", "task_time(us)")  # fmt: skip
BAD_TIMES: list[object] = [None, "", "N/A", "abc", "1.5.3", "--1"]


def null_times(rng: random.Random, path: Path) -> str:
    """Times that are null, missing or text in a share of the device rows: each such row
    must be counted as malformed (the accounting check below), never lost."""
    bad = rng.choice(BAD_TIMES)
    if path.suffix == ".db":
        con = sqlite3.connect(path)
        try:
            column = rng.choice(["startNs", "endNs"])
            value = bad if rng.random() < 0.7 else None
            con.execute(
                f"UPDATE TASK SET {column} = ? WHERE rowid % ? = 0", (value, rng.randint(1, 4))
            )
            if rng.random() < 0.3:  # a kernel name NULL too
                con.execute("UPDATE COMPUTE_TASK_INFO SET name = NULL WHERE rowid % 5 = 1")
            con.commit()
        except sqlite3.DatabaseError:
            pass
        finally:
            con.close()
        return f"db times {bad!r}"
    if path.suffix == ".csv":
        lines = path.read_text(encoding="utf-8").split("\n")
        header = [h.strip() for h in lines[0].split(",")]
        columns = [i for i, h in enumerate(header) if h in TIME_FIELDS]
        if not columns:
            return "no time column"
        column = rng.choice(columns)
        for row in range(1, len(lines)):
            cells = lines[row].split(",")
            if len(cells) == len(header) and rng.random() < 0.3:
                cells[column] = "" if bad is None else str(bad)
                lines[row] = ",".join(cells)
        path.write_text("\n".join(lines), encoding="utf-8")
        return f"csv {header[column]!r} = {bad!r}"
    events = json.loads(path.read_text(encoding="utf-8"))
    listed = events.get("traceEvents", []) if isinstance(events, dict) else events
    key = rng.choice(["ts", "dur"])
    for event in listed:
        if isinstance(event, dict) and event.get("ph") == "X" and rng.random() < 0.3:
            if rng.random() < 0.3:
                event.pop(key, None)
            else:
                event[key] = bad
    path.write_text(json.dumps(events), encoding="utf-8")
    return f"json {key!r} = {bad!r} or missing"


HOSTILE_CONFIGS = [
    '[[plan]]\nname = "p"\nside = "Shared(?=Expert)"\n',
    '[[plan]]\nname = "p"\nside = "SharedExpert"\ndominator = "(Grouped)\\\\1"\n',
    '[[plan]]\nname = "p"\nside = "Expert\\\\Z"\n',
    "[[plan]]\nname = 'p'\nside = '(?<!x)Shared'\nop_type = '(?>a)'\n",
    '[device]\nge_aicore_num = "99999999999|48"\n',
    '[[plan]]\nname = "p"\nside = "SharedExpert"\nside_stream = 99999999999999999999\n',
    '[[plan]]\nname = "p"\nside = "S"\n[plan.limit_core]\naicore = 9999999999999\n',
    "a = " + "[" * 3000 + "]" * 3000 + "\n",
    "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n",
]


def _source_rank(path: Path) -> int:
    """The readers' preference among a capture's kernel files (readers.capture)."""
    name = path.name
    order = ("kernel_details", "op_summary", ".db", "trace_view", "msprof_", "task_time")
    hits = [i for i, key in enumerate(order) if name.startswith(key) or name.endswith(key)]
    if name == "analysis.db" or not hits:
        return len(order)
    return min(hits)


def _accounted(target: Path) -> int | None:
    """Kernel rows kept plus rows counted as malformed, over the captures under ``target``
    (None: it does not read)."""
    try:
        return sum(c.kernels.height + c.skipped_rows for c in load(target))
    except OverlapCheckError:
        return None


def hostile_case(rng: random.Random, case: Path, target: Path) -> tuple[str, list[str], list[str]]:
    """(description, extra CLI args, problems found before the CLI ran)."""
    if rng.random() < 0.3:
        config = case / "overlap-check.toml"
        text = rng.choice(HOSTILE_CONFIGS)
        config.write_text(text, encoding="utf-8")
        return f"hostile config {text[:40]!r}", ["--config", str(config)], []
    kernel_files = [p for p in _data_files(target) if KERNEL_FILES.match(p.name)]
    if not kernel_files:
        return "no kernel file", [], []
    victim = rng.choice(kernel_files)
    for sibling in victim.parent.iterdir():  # the victim becomes the capture's kernel source
        if sibling.is_file() and _source_rank(sibling) < _source_rank(victim):
            sibling.unlink()
    before = _accounted(target)
    what = null_times(rng, victim)
    after = _accounted(target)
    problems = []
    # fewer rows accounted after the damage is a silent loss; more is a damaged row the
    # reader can no longer tell from the non-kernel tasks it drops (task_time lists both),
    # counted as malformed: shown, and the result provisional
    if before is not None and after is not None and after < before:
        problems.append(f"silent loss: {before} rows accounted before, {after} after")
    return f"{victim.relative_to(case)}: {what}", [], problems


# ------------------------------------------------------------------ the contract

_FRACTION_KEYS = re.compile(r"(_pct|^overlap_min|^overlap_max)$")
_DURATION_KEYS = re.compile(
    r"^(busy_us|wall_us|concurrent_us|overlap_us|gap_us|main_busy_us|side_busy_us|"
    r"duration_us|over_limit_us|aicore_over_limit_us|vectorcore_over_limit_us|parallelism)$"
)


def impossible_figures(obj: object, where: str = "") -> Iterator[str]:
    """Every figure in a JSON report that cannot be."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                if value != value:
                    yield f"{where}.{key} is NaN"
                elif (_FRACTION_KEYS.search(key) and not 0 <= value <= 1) or (
                    _DURATION_KEYS.match(key) and value < 0
                ):
                    yield f"{where}.{key} = {value}"
            else:
                yield from impossible_figures(value, f"{where}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from impossible_figures(value, f"{where}[{i}]")


class Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang(f"no answer within {CASE_SECONDS} s")


@contextmanager
def _fd2_into(file: IO[bytes]) -> Iterator[None]:
    """fd 2 into ``file`` (CliRunner captures sys.stderr, not what native code writes)."""
    saved = os.dup(2)
    os.dup2(file.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def run_case(seed: int, tmp: Path) -> tuple[str, int, list[str]]:
    """Build and run case ``seed`` under ``tmp``; (description, exit code, problems)."""
    rng = random.Random(seed)
    subject = SUBJECTS[seed % len(SUBJECTS)]
    case = tmp / f"case{seed}"
    target = case / subject.source.name
    shutil.copytree(subject.source, target, symlinks=True)
    args = ["analyze", str(target), "--format", "json"]
    kind = rng.random()
    found: list[str] = []
    if seed % 5 == HOSTILE:
        what, extra, found = hostile_case(rng, case, target)
        args += extra
    elif kind < 0.06:
        what = deep_tree(rng, target)
    elif kind < 0.12:
        what, config = bad_config(rng, case)
        args += ["--config", str(config)]
    else:
        files = _data_files(target)
        victim = rng.choice(files)
        what = FILE_MUTATIONS[rng.randrange(len(FILE_MUTATIONS))](rng, victim)
        what = f"{victim.relative_to(case)}: {what}"
        if rng.random() < 0.3:  # sometimes a second damage elsewhere
            other = rng.choice(_data_files(target) or [victim])
            if other.is_file() and not other.is_symlink():
                what += f"; {other.name}: " + rng.choice(FILE_MUTATIONS[:8])(rng, other)
    if rng.random() < 0.4:
        args += ["--side", "SharedExpert", "--dominator", "GroupedMatmul"]
    description = f"case {seed} ({subject.label}): {what}"

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    native = TemporaryFile()  # noqa: SIM115 (closed in finally): fd 2 past sys.stderr
    try:
        # a warning reaches the user's terminal raw (numpy's "invalid value in cast": a
        # figure that wrapped round); recorded here, it is a problem of the case
        with warnings.catch_warnings(record=True) as warned, _fd2_into(native):
            warnings.simplefilter("always")
            result = CliRunner().invoke(cli, args, catch_exceptions=True)
    except Hang as err:
        return description, -1, [str(err)]
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        return description, -1, [f"escaped the CLI: {type(err).__name__}: {err}"]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        native.seek(0)
        raw = native.read()
        native.close()
        for path in _walk(case):  # let rmtree remove what odd_file made unreadable
            if not path.is_symlink():
                path.chmod(0o755)
    problems: list[str] = list(found)
    problems += [f"warned {w.category.__name__}: {w.message} ({w.filename})" for w in warned]
    if raw:  # past sys.stderr: a native library (polars' panic hook)
        problems.append(f"wrote to fd 2 itself: {raw[:300]!r}")
    output = result.stdout + result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        problems.append(f"raised {type(result.exception).__name__}: {result.exception}")
    if "Traceback" in output:
        problems.append("printed a traceback")
    if "internal error" in result.stderr:
        problems.append(f"internal error: {result.stderr.strip()[-300:]}")
    if result.exit_code in (0, 1):
        try:
            report = json.loads(result.stdout)
        except ValueError:
            problems.append("exit 0/1 without a JSON report")
        else:
            problems.extend(impossible_figures(report))
    elif result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if "error:" in line]
        if not errors:
            problems.append(f"exit 2 without an error line: {result.stderr[-300:]!r}")
        elif str(case) not in errors[-1] and not any(p.name in errors[-1] for p in _walk(case)):
            problems.append(f"exit 2 without naming a file: {errors[-1]}")
    else:
        problems.append(f"exit code {result.exit_code}")
    _remove(case)
    return description, result.exit_code, problems


def _remove(root: Path) -> None:
    """rm -r without recursion (shutil.rmtree recurses too deep for the deep tree)."""
    paths = sorted(_walk(root), key=lambda p: len(p.parts), reverse=True)
    for path in [*paths, root]:
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink()


def _cases() -> range:
    start = int(os.environ.get("FUZZ_START", "0"))
    count = int(os.environ.get("FUZZ_CASES", "0")) or QUICK_CASES
    return range(start, start + count)


# Cases that once failed (with ../shared/real-profiles present), kept in every run.
REGRESSIONS = (
    1732,  # a lone '"' in msprof op_summary: a polars panic (BaseException) in the CSV reader
    2942,
    9133,  # a Device_id past Int32 in kernel_details.csv: polars cast error in table.conform
    60326,  # a lone '"' in kernel_details.csv: polars' panic hook wrote to fd 2 itself
)


@pytest.mark.parametrize("seed", REGRESSIONS)
def test_cases_that_once_failed(tmp_path: Path, seed: int) -> None:
    description, _, problems = run_case(seed, tmp_path)
    assert not problems, f"{description}: {problems}"


@pytest.mark.fuzz
def test_damaged_captures_give_a_report_or_a_named_error(tmp_path: Path) -> None:
    failures: list[str] = []
    codes: Counter[int] = Counter()
    cases = _cases()
    for seed in cases:
        description, code, problems = run_case(seed, tmp_path)
        codes[code] += 1
        failures.extend(f"{description}: {p}" for p in problems)
    exits = ", ".join(f"exit {code}: {n}" for code, n in sorted(codes.items()))
    summary = f"{len(cases)} cases ({exits}), {len(failures)} problem(s)"
    print(summary)
    assert not failures, summary + "\n" + "\n".join(failures[:60])
