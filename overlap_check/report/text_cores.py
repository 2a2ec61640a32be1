"""The "Cores" section of the text report: device cores, limits, violations, contention."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from overlap_check.model import AppliedLimit, CoresResult, CoreViolation, DeviceCores, rank_text
from overlap_check.report.color import bold, paint
from overlap_check.report.text_table import table

MAX_ROWS = 20  # table rows shown per list; the counts always cover everything
INDENT = "    "  # tables sit under the section's "  key: value" lines

_SOURCE_WORDS = {
    "info.json": "from the capture's info.json",
    "config": "from the config's [device]",
    "soc": "from the built-in SoC table",
    "soc-ini": "from the CANN platform ini",
    "observed": "as no info.json, [device], --soc or --soc-ini gives them",
}


def device_text(device: DeviceCores) -> str:
    """The device's cores as every output words them: a guess says so, 0 is "unknown"."""
    if device.aicore <= 0 and device.vectorcore <= 0:
        return "cores unknown"
    aic, aiv = (str(n) if n > 0 else "unknown" for n in (device.aicore, device.vectorcore))
    guess = " (a guess from Block Num)" if device.source == "observed" else ""
    return f"{aic} AI Core (aic) / {aiv} AI Vector (aiv){guess}"


def blocks_of(v: CoreViolation) -> int | None:
    """The block count a core-limit rule was applied to (Block Num or Mix Block Num)."""
    return v.mix_block_num if v.blocks_field == "mix_block_num" else v.block_num


def exact_us(ns: int) -> str:
    """Integer ns as decimal µs, exactly: a 16-digit µs epoch with 3 decimals is no float64."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000}.{ns % 1000:03d}"


def _limit_line(limit: AppliedLimit) -> str:
    cores = (("aic", limit.aicore), ("aiv", limit.vectorcore))
    counts = ", ".join(f"{kind} {n}" for kind, n in cores if n is not None)
    plan = f"plan {limit.plan} ({limit.mode})"
    what = {"plan": plan, "graph-dump": "graph dump"}.get(limit.source, "GE global")
    parts = [part for part in (what, counts, limit.detail) if part]
    return "    " + ": ".join(parts) + f" -- governs {limit.kernels} kernel(s)"


def _grouped(items: Sequence[CoreViolation]) -> list[str]:
    """One row per (rank, stream, kernel, rule): an op repeats in every layer and run."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for v in items:
        label = "Mix Block Num" if v.blocks_field == "mix_block_num" else "Block Num"
        stream = "-" if v.stream_id is None else str(v.stream_id)
        rule = (f"{label} {blocks_of(v)}", f"{v.kind} {v.limit}", str(v.limit_source))
        cells = (rank_text(v.rank), stream, str(v.name), str(v.accelerator_core), *rule)
        groups.setdefault(cells, []).append(v.run)
    rows = [
        [",".join(str(r) for r in sorted(set(runs))), *cells, str(len(runs))]
        for cells, runs in list(groups.items())[:MAX_ROWS]
    ]
    header = ["runs", "rank", "stream", "kernel", "core", "blocks", "limit", "source", "times"]
    lines = table(header, rows, indent=INDENT)
    if len(groups) > MAX_ROWS:
        lines.append(f"    ... {len(groups) - MAX_ROWS} more kernel(s)")
    return lines


Origins = Mapping[tuple[int | None, int], int | None]  # (rank, run) -> run's first kernel start


def render_cores(cores: CoresResult, origins: Origins | None = None, *, color: bool = False) -> str:
    """The "Cores" section; contention starts relative to ``origins``, else epoch µs."""
    device = cores.device
    said = "unknown"
    if device is not None and (device.aicore > 0 or device.vectorcore > 0):
        detail = f" ({device.detail})" if device.detail else ""
        said = f"{device_text(device)}, {_SOURCE_WORDS.get(device.source, device.source)}{detail}"
    elif device is not None:
        said = "cores unknown (no info.json, [device], --soc or --soc-ini, and no Block Num to "
        said += "guess them from)"
    lines = [bold("Cores", color), f"  device: {said}"]
    if cores.limits:
        lines.append("  limits applied (first wins: plan, then graph dump, then GE global):")
        lines += [_limit_line(limit) for limit in cores.limits]
        lines.append(
            f"  checked {cores.checked_kernels} kernel(s); {cores.exempt_kernels} exempt "
            f"(AI_CPU, DSA_SQE, communication); {cores.unchecked_kernels} unchecked"
        )
    else:
        lines.append(
            "  limits: none configured ([plan.limit_core], [device] ge_aicore_num or --graph-dump)"
        )
    if cores.violation_count:
        violations = f"violations: {cores.violation_count} (these fail the gate)"
        lines.append("  " + paint(violations, "red", color))
        lines += _grouped(cores.violations)
    elif cores.limits:
        lines.append("  violations: " + paint("none", "green", color))
    if cores.warning_count:
        warnings = f"warnings: {cores.warning_count} (reported, not failed)"
        lines.append("  " + paint(warnings, "yellow", color))
        lines += _grouped(cores.warnings)
        reasons = sorted({w.message.split("; ", 1)[1] for w in cores.warnings if "; " in w.message})
        lines += [f"    note: {r}" for r in reasons]
    lines += _contention_lines(cores, origins or {}, color)
    if cores.notes:
        lines.append("  notes:")
        lines += [f"    - {note}" for note in cores.notes]
    return "\n".join(lines) + "\n"


def _contention_lines(cores: CoresResult, origins: Origins, color: bool) -> list[str]:
    if cores.contention_runs == 0:
        return ["  contention: not swept (no warm run)"]
    head = f"  contention (warm runs: {cores.contention_runs}; blocks on >= 2 busy streams): "
    device = cores.device
    if device is None or (device.aicore <= 0 and device.vectorcore <= 0):
        return [head + "not judged (device cores unknown)"]
    if cores.contention_count == 0:
        guess = " (as guessed)" if device.source == "observed" else ""
        return [head + f"demand never exceeds the device's cores{guess}"]
    over = paint(f"{exact_us(cores.over_limit_ns)} µs over the device's cores", "yellow", color)
    lines = [
        head + f"{over} in all (aicore {exact_us(cores.aicore_over_limit_ns)} µs, "
        f"vectorcore {exact_us(cores.vectorcore_over_limit_ns)} µs; time over both counts once), "
        f"{cores.contention_count} interval(s); worst first (excess blocks x time):"
    ]
    rows = []
    for c in cores.contention[:MAX_ROWS]:
        start = exact_us(c.start_ns - (origins.get((c.rank, c.run)) or 0))
        more = f" (+{len(c.kernels) - 4})" if len(c.kernels) > 4 else ""
        kernels = ", ".join(c.kernels[:4]) + more
        cells = [str(c.run), rank_text(c.rank), start, exact_us(c.duration_ns), c.kind]
        rows.append([*cells, f"{c.demand}/{c.maximum}", ",".join(map(str, c.streams)), kernels])
    header = ["run", "rank", "start_us", "dur_us", "kind", "demand/max", "streams", "kernels"]
    lines += table(header, rows, indent=INDENT)
    if cores.contention_count > len(rows):
        lines.append(f"    ... {cores.contention_count - len(rows)} more interval(s)")
    return lines
