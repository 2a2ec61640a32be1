"""The repository's fixtures/: one folder per scenario, plus a README of known answers.

``python -m synth fixtures/`` (or ``make fixtures``) rewrites them;
output is byte-identical on every run and machine (fixed seeds, UTC stamps).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from synth import gain_scenarios as gain
from synth import scenarios as sc
from synth.expected import Built, ExpectedViolation
from synth.hiding_layouts import LAYOUTS
from synth.layout import write_msprof_dir, write_runs
from synth.malformed import write_malformed
from synth.model import Variant
from synth.side_kinds import CASES as SIDE_KIND_CASES

LAYERS = 2  # occurrences per run: enough to pair windows, small enough for git
FORMAT_RUNS = 3  # format-coverage folders: fewer runs (their analysis is provisional)


@dataclass(frozen=True)
class Fixture:
    folder: str
    what: str
    build: Callable[[], Built]
    variant: Variant | None = None  # None: the scenario's own recommended variant
    msprof: bool = False  # write msprof CLI PROF_* dirs instead of torch_npu result dirs
    malformed: bool = False  # first run only, kernel_details.csv damaged (synth.malformed)


FIXTURES: tuple[Fixture, ...] = (
    Fixture(
        "real-dual-stream",
        "side ops inside the dominator",
        lambda: sc.real_dual_stream(layers=LAYERS),
    ),
    Fixture(
        "fake-dual-stream",
        "side ops before the dominator, Cast barrier",
        lambda: sc.fake_dual_stream(layers=LAYERS),
    ),
    Fixture(
        "partial-dual-stream",
        "last quarter of the side window under the dominator",
        lambda: sc.partial_dual_stream(layers=LAYERS),
    ),
    Fixture(
        "warm-cold-runs",
        "2 cold fake runs, then warm runs",
        lambda: sc.warm_cold_runs(layers=LAYERS),
    ),
    Fixture(
        "two-rank-job",
        "rank 0 real, rank 1 fake, allreduce per run",
        lambda: sc.two_rank_job(layers=LAYERS),
    ),
    Fixture(
        "level0",
        "Level0 (no Stream ID in kernel_details; streams from trace_view.json), "
        "EVENT_WAIT on the side stream over the dominator",
        lambda: sc.level0_event_wait(layers=LAYERS),
    ),
    Fixture(
        "touching-windows",
        "side window ends exactly at the dominator start (float64 would overlap)",
        lambda: sc.touching_windows(layers=LAYERS),
    ),
    Fixture(
        "core-limits",
        "side ops above limit_core_num(12, 24) on a 24/48 device",
        lambda: sc.core_limits(layers=LAYERS),
    ),
    Fixture(
        "npugraph-ex-limits",
        "npugraph_ex limit_core_num(12, 24): an Ascend C GroupedMatmul and a MatMulV3 above it",
        lambda: sc.npugraph_ex_limits(layers=LAYERS),
    ),
    Fixture(
        "not-split", "SharedExpert ops left on the main stream", lambda: sc.not_split(layers=LAYERS)
    ),
    Fixture(
        "db-level0",
        "db export only (Level0): TASK / COMPUTE_TASK_INFO / STRING_IDS",
        lambda: sc.fake_dual_stream(runs=FORMAT_RUNS, layers=LAYERS),
        Variant(level="Level0", db=True, kernel_details=False, trace=False),
    ),
    Fixture(
        "legacy-2023",
        "2023 format: Block Dim, no OP State, no TAB, LF line ends",
        lambda: sc.real_dual_stream(runs=FORMAT_RUNS, layers=LAYERS),
        Variant(version="2023", crlf=False),
    ),
    Fixture(
        "format-2026",
        "2026 format: Device_id, Block Num, COMMUNICATION rows, task_time.csv, analyse.done, LF",
        lambda: sc.two_rank_job(runs=FORMAT_RUNS, layers=LAYERS),
        Variant(version="2026", crlf=False, task_time=True),
    ),
    Fixture(
        "quoted-start",
        "2025 Level1, start times quoted with TAB, LF",
        lambda: sc.partial_dual_stream(runs=FORMAT_RUNS, layers=LAYERS),
        Variant(quoted_start=True, crlf=False, trace=False),
    ),
    Fixture(
        "malformed",
        "one run whose kernel_details.csv has a row with a field missing and two unsorted slices",
        lambda: sc.real_dual_stream(runs=1, layers=LAYERS),
        malformed=True,
    ),
    Fixture(
        "msprof-cli",
        "msprof CLI PROF_* dirs (op_summary, task_time, msprof json)",
        lambda: sc.fake_dual_stream(runs=FORMAT_RUNS, layers=LAYERS),
        msprof=True,
    ),
    # issue 14's layouts: one capture each, answers in synth.hiding_layouts
    *(Fixture(layout.folder, layout.what, layout.build) for layout in LAYOUTS),
    # issue 16: a reference capture and a hole after the join (synth.gain_scenarios)
    Fixture(
        "slower-multi-stream",
        "real overlap, but the dominator stretched 300 -> 480 us: slower than its reference",
        lambda: gain.slower_multi_stream(layers=LAYERS),
    ),
    Fixture(
        "slower-single-stream",
        "the single-stream reference of slower-multi-stream",
        lambda: gain.slower_single_stream(layers=LAYERS),
    ),
    Fixture(
        "join-wait",
        "side work ends after the dominator: the main stream waits 69 us per layer",
        lambda: gain.join_wait(layers=LAYERS),
    ),
    Fixture(
        "tail-ops",
        "real overlap; a TransData and a MemSet on the main stream after each join",
        lambda: gain.tail_ops(layers=LAYERS),
    ),
    Fixture(
        "shapes-multi-stream",
        "real overlap, the GroupedMatmul on 4096 tokens: Input Shapes differ from its reference",
        lambda: gain.shapes_multi_stream(layers=LAYERS),
    ),
    Fixture(
        "shapes-single-stream",
        "the single-stream reference of shapes-multi-stream, on 2048 tokens",
        lambda: gain.shapes_single_stream(layers=LAYERS),
    ),
    # issue 15's communication and copy plans: one capture each, answers in synth.side_kinds
    *(Fixture(case.folder, case.what, case.build) for case in SIDE_KIND_CASES),
)


def _answer(built: Built) -> list[str]:
    lines = []
    for plan in built.expected.plans:
        pct = "n/a" if plan.overlap_pct is None else f"{plan.overlap_pct:g}"
        barrier = f", barrier {plan.barrier}" if plan.barrier else ""
        per_run = ", ".join("n/a" if v is None else f"{v:g}" for v in plan.per_run)
        lines.append(
            f"  - rank {plan.rank}: plan `{plan.name}` overlap_pct **{pct}**, **{plan.verdict}**"
            f"{barrier}; per run [{per_run}]; {plan.occurrences} occurrences per run"
        )
    pairs = {(p.rank, p.side): p for p in built.expected.stream_pairs}
    for (rank, side), pair in sorted(pairs.items()):
        lines.append(
            f"  - rank {rank}: stream {side} vs {pair.main} (interval sets) "
            f"{built.expected.pair_median(rank, side):.6g}"
        )
    cores = built.expected
    if cores.violations:
        lines.append(
            f"  - core limit {cores.limit_core}: {len(cores.violations)} violations, "
            f"{len(cores.warnings)} {_reports(cores.warnings)}, exempt "
            f"{', '.join(cores.exempt) or 'none'}"
        )
    if built.expected.notes:
        lines.append(f"  - {built.expected.notes}")
    return lines


def _reports(warnings: Sequence[ExpectedViolation]) -> str:
    """What the reported (not failed) limit hits are: MIX_AIV, or npugraph_ex non-Ascend C."""
    if all(w.accelerator_core == "MIX_AIV" for w in warnings):
        return "MIX_AIV reports"
    return "reports (MIX_AIV, or npugraph_ex operators not known to be Ascend C)"


def write_fixtures(root: Path, only: tuple[str, ...] = ()) -> list[Path]:
    """(Re)write every fixture folder under ``root`` and root/README.md."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    readme = [
        "# Fixtures",
        "",
        "Generated by `python -m synth fixtures/` (`make fixtures`) from the",
        "built-in scenarios in `overlap_check/synth/scenarios.py`; do not edit by hand.",
        "Every answer below follows from the construction (window lengths the generator",
        "chose), not from running the analyser. Plan for all: `moe-shared-expert`,",
        "side `SharedExpert` on stream 3, dominator `GroupedMatmul` on stream 2; window",
        "figures are warm-run medians (first 2 runs discarded; warm-cold-runs: its 2 cold",
        "runs). Device 24/48 cores (PROF_*/device_N/info.json.N). Git keeps no empty",
        "folders, so the empty FRAMEWORK/ and logs/ of real result dirs are absent here.",
        "",
        "Try: `overlap-check analyze fixtures/fake-dual-stream --side SharedExpert "
        "--dominator GroupedMatmul --side-stream 3 --main-stream 2`.",
        "",
    ]
    for fixture in FIXTURES:
        if only and fixture.folder not in only:
            continue
        built = fixture.build()
        target = root / fixture.folder
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        variant = fixture.variant or built.variant
        extra: list[str] = []
        if fixture.malformed:
            damaged = write_malformed(target, built.scenarios[0], variant)
            rel = damaged.result_dir.name + "/ASCEND_PROFILER_OUTPUT/kernel_details.csv"
            how = f"torch_npu {variant.version} {variant.level}"
            extra.append(
                f"  - `{rel}` line {damaged.skipped_line} ({damaged.dropped.name}) lacks its Type "
                f"field: skipped_rows 1, {damaged.kernels_left} kernels left"
            )
        elif fixture.msprof:
            for scenario in built.scenarios:
                write_msprof_dir(scenario, target)
            how = "msprof CLI, 2026 format"
        else:
            write_runs(built.scenarios, target, variant)
            how = f"torch_npu {variant.version} {variant.level}"
        written.append(target)
        readme.append(
            f"- `{fixture.folder}/` — {fixture.what}. {len(built.scenarios)} dirs, {how}."
        )
        readme += _answer(built) + extra
    if not only:
        (root / "README.md").write_text("\n".join(readme) + "\n")
    return written
