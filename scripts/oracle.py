"""Write every report of every fixture and real capture to a folder (a refactor's oracle).

    .venv/bin/python scripts/oracle.py /work/notes/oracle-before
    .venv/bin/python scripts/oracle.py /tmp/oracle-after --compare /work/notes/oracle-before

Each case is one `analyze` (or `compare`) command line run in-process with click's
CliRunner; its stdout and exit code go to ``<case>.<format>`` in the folder. With
``--compare``, the folder is diffed against an earlier one (JSON: the earlier keys and
values must be unchanged; fields added later are allowed). Real captures come from
../shared/real-profiles and are skipped when absent; their reports stay outside the
repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from overlap_check.cli import cli as main

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "real-profiles"
FORMATS = ("text", "json", "markdown", "junit", "github")
PLAN = ["--side", "SharedExpert", "--dominator", "GroupedMatmul", "--side-stream", "3",
        "--main-stream", "2", "--name", "moe-shared-expert"]  # fmt: skip
LIMITS_TOML = """
[[plan]]
name = "moe-shared-expert"
side = "SharedExpert"
dominator = "GroupedMatmul"
side_stream = 3
main_stream = 2
[plan.limit_core]
aicore = 12
vectorcore = 24
"""


def cases(work: Path) -> dict[str, list[str]]:
    """case name -> analyze arguments (without --format)."""
    found: dict[str, list[str]] = {}
    fixtures = sorted(p for p in (REPO / "fixtures").iterdir() if p.is_dir())
    for folder in fixtures:
        rel = str(folder.relative_to(REPO))
        found[f"fixture-{folder.name}-streams"] = [rel]
        found[f"fixture-{folder.name}-plan"] = [rel, *PLAN]
    limits = work / "limits.toml"
    limits.write_text(LIMITS_TOML, encoding="utf-8")
    found["fixture-core-limits-config"] = ["fixtures/core-limits", "--config", str(limits)]
    found["fixture-core-limits-contention"] = [
        "fixtures/core-limits", "--config", str(limits), "--fail-on-contention"
    ]  # fmt: skip
    found["fixture-warm-cold-runs-step"] = ["fixtures/warm-cold-runs", *PLAN, "--per", "step"]
    found["fixture-partial-fail-on-partial"] = [
        "fixtures/partial-dual-stream", *PLAN, "--fail-on", "partial"
    ]  # fmt: skip
    found["fixture-two-rank-order-time"] = ["fixtures/two-rank-job", *PLAN, "--order", "time"]
    found["fixture-fake-warmup0-strict"] = [
        "fixtures/fake-dual-stream", *PLAN, "--warmup", "0", "--strict", "--min-runs", "7"
    ]  # fmt: skip
    found["fixture-real-soc"] = ["fixtures/real-dual-stream", *PLAN, "--soc", "Ascend910B2"]
    if REAL.is_dir():
        for entry in sorted(REAL.iterdir()):
            if entry.is_dir() and entry.name != "loose-files":
                found[f"real-{entry.name}"] = [str(entry)]
        for loose in sorted((REAL / "loose-files").iterdir()):
            found[f"real-loose-{loose.name}"] = [str(loose)]
        found["real-all"] = [str(REAL)]
    return found


def run_all(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    for name, args in cases(out).items():
        for fmt in FORMATS:
            result = runner.invoke(main, ["analyze", *args, "--format", fmt, "-q"])
            text = result.stdout + f"\n[stderr]\n{result.stderr}[exit {result.exit_code}]\n"
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                text += f"[exception {type(result.exception).__name__}: {result.exception}]\n"
            (out / f"{name}.{fmt}").write_text(text, encoding="utf-8")
    # compare and --baseline read a JSON report back
    base = out / "fixture-real-dual-stream-plan.json"
    head = out / "fixture-fake-dual-stream-plan.json"
    for stem, path in (("base", base), ("head", head)):
        body = path.read_text(encoding="utf-8").rsplit("\n[stderr]", 1)[0]
        (out / f"{stem}.report.json").write_text(body, encoding="utf-8")
    for fmt in ("text", "json", "markdown"):
        result = runner.invoke(
            main, ["compare", str(out / "base.report.json"), str(out / "head.report.json"),
                   "--format", fmt]
        )  # fmt: skip
        (out / f"compare.{fmt}").write_text(
            result.stdout + f"\n[exit {result.exit_code}]\n", encoding="utf-8"
        )
        result = runner.invoke(
            main, ["analyze", "fixtures/fake-dual-stream", *PLAN, "--baseline",
                   str(out / "base.report.json"), "--format", fmt, "-q"]
        )  # fmt: skip
        (out / f"baseline.{fmt}").write_text(
            result.stdout + f"\n[exit {result.exit_code}]\n", encoding="utf-8"
        )


def _subset(before: Any, after: Any, where: str, problems: list[str]) -> None:
    """Every key and value of ``before`` is in ``after`` (added keys are fine)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            if key not in after:
                problems.append(f"{where}.{key}: missing")
            else:
                _subset(value, after[key], f"{where}.{key}", problems)
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            _subset(b, a, f"{where}[{i}]", problems)
    elif before != after or type(before) is not type(after):
        problems.append(f"{where}: {before!r} -> {after!r}")


def _body(text: str) -> tuple[str, str]:
    """(the JSON, the trailer): analyze cases end in ``[stderr]``, compare ones in ``[exit N]``."""
    for trailer in ("\n[stderr]", "\n[exit "):
        if trailer in text:
            body, rest = text.rsplit(trailer, 1)
            return body, rest
    return text, ""


def compare(before: Path, after: Path) -> int:
    bad = 0
    for old in sorted(before.iterdir()):
        if old.suffix == ".toml":
            continue
        new = after / old.name
        if not new.exists():
            print(f"MISSING {old.name}")
            bad += 1
            continue
        # compare's reports name the oracle folder they lie in
        a = old.read_text(encoding="utf-8").replace(str(before), "<out>")
        b = new.read_text(encoding="utf-8").replace(str(after), "<out>")
        if a == b:
            continue
        if old.suffix == ".json":
            problems: list[str] = []
            try:
                ja, jb = (json.loads(_body(t)[0]) for t in (a, b))
            except ValueError:
                problems.append("not JSON")
            else:
                _subset(ja, jb, "$", problems)
                if _body(a)[1] != _body(b)[1]:
                    problems.append("exit code")
            if not problems:
                continue
            print(f"DIFF {old.name}: " + "; ".join(problems[:5]))
        else:
            print(f"DIFF {old.name}")
        bad += 1
    print(f"{bad} differing of {sum(1 for _ in before.iterdir())}")
    return 1 if bad else 0


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--compare", type=Path, help="an earlier oracle folder")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse(None)
    run_all(args.out)
    sys.exit(compare(args.compare, args.out) if args.compare else 0)
