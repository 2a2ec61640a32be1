"""PyTorch profiler (Kineto) traces from CUDA GPUs: the real HTA test traces in
../shared/real-profiles/kineto, checked against figures computed here, independently of
the library, from the trace text (Decimal µs, union of intervals per (device, stream))."""

from __future__ import annotations

import collections
import gzip
import json
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from overlap_check.cli import cli
from overlap_check.judge.pipeline import check
from overlap_check.model import Options, Plan, Report
from overlap_check.model.json_codec import to_dict
from overlap_check.readers import load
from overlap_check.readers.discover import discover
from synth.kineto import KinetoSpec, expected, write

TRACES = {
    "alexnet-2stream": "benchmark_result_2869224_1695835535_trace.json.gz",
    "event-sync-3stream": "event_sync_trace.json.gz",
    "trace-diff-control": "control.json.gz",
    "trace-diff-test": "test.json.gz",
}
NCCL = re.compile(r"^(void\s+)?nccl\w*Kernel")


def kineto(real_profiles: Path, name: str) -> Path:
    return real_profiles / "kineto" / name / TRACES[name]


def device_events(path: Path) -> list[dict[str, Any]]:
    """The device X events, ts/dur as exact Decimals from the text."""
    text = gzip.decompress(path.read_bytes()).decode()
    trace = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    return [
        e
        for e in trace["traceEvents"]
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    ]


def intervals(events: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """[start, end) in ns, exact: µs Decimal * 1000."""
    return [(int(e["ts"] * 1000), int((e["ts"] + e["dur"]) * 1000)) for e in events]


def union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def length(spans: list[tuple[int, int]]) -> int:
    return sum(b - a for a, b in union(spans))


def intersection(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    total, ua, ub = 0, union(a), union(b)
    i = j = 0
    while i < len(ua) and j < len(ub):
        total += max(0, min(ua[i][1], ub[j][1]) - max(ua[i][0], ub[j][0]))
        if ua[i][1] < ub[j][1]:
            i += 1
        else:
            j += 1
    return total


def compute_by_stream(events: list[dict[str, Any]]) -> dict[tuple[int, int], list[dict[str, Any]]]:
    streams: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for e in events:
        if e["cat"] == "kernel" and not NCCL.match(e["name"]):
            key = (int(e["args"]["device"]), int(e["args"]["stream"]))
            streams.setdefault(key, []).append(e)
    return streams


@pytest.mark.parametrize("name", sorted(TRACES))
def test_per_stream_busy_is_exact(real_profiles: Path, name: str) -> None:
    path = kineto(real_profiles, name)
    expected = {
        stream: (len(evs), length(intervals(evs)))
        for (_, stream), evs in compute_by_stream(device_events(path)).items()
    }
    report = check([path], Options())
    (run,) = report.runs
    assert run.source == "kineto"
    assert {s.stream_id: (s.kernels, s.busy_ns) for s in run.streams} == expected


def test_control_rank_streams_pair_and_communication(real_profiles: Path) -> None:
    path = kineto(real_profiles, "trace-diff-control")
    events = device_events(path)
    by_stream = compute_by_stream(events)
    main, side = intervals(by_stream[(3, 7)]), intervals(by_stream[(3, 20)])
    comm = intervals([e for e in events if e["cat"] == "kernel" and NCCL.match(e["name"])])
    compute = main + side
    (capture,) = load(path)
    assert (capture.rank, capture.device, capture.source) == (3, 3, "kineto")
    kernels = capture.kernels
    assert kernels.filter(kernels["is_communication"]).height == 60 == len(comm)
    assert set(kernels.filter(kernels["is_communication"])["stream_id"]) == {21}
    assert set(kernels.filter(kernels["is_copy"])["stream_id"]) == {7, 20, 22}
    assert sorted(set(kernels["step"].to_list())) == list(range(1009, 1015))

    report = check([path], Options())
    (pair,) = report.stream_pairs
    assert (pair.main, pair.side) == (7, 20)
    assert pair.per_run[0].overlap_ns == intersection(main, side)
    (rank,) = report.communication
    assert rank.busy_ns == length(comm)
    assert rank.hidden_ns == intersection(comm, compute)


def test_plans_judge_a_kineto_capture(real_profiles: Path) -> None:
    path = kineto(real_profiles, "trace-diff-control")
    plans = (
        Plan(name="scan", side=r"cub::DeviceScan", side_stream=20),
        Plan(name="allreduce", side=r"ncclKernel_AllReduce", side_kind="communication"),
        Plan(name="h2d", side_kind="copy", side_stream=22),
    )
    report = check([path], Options(plans=plans))
    by_name = {p.name: p for p in report.plans}
    assert set(by_name) == {"scan", "allreduce", "h2d"}
    for plan in by_name.values():
        assert plan.verdict is not None
        assert plan.per_run and plan.per_run[0].side_ops > 0


def test_a_folder_of_ranks_and_the_bare_files(real_profiles: Path, tmp_path: Path) -> None:
    for name in ("trace-diff-control", "trace-diff-test"):
        (tmp_path / "job").mkdir(exist_ok=True)
        (tmp_path / "job" / f"{name}.pt.trace.json.gz").symlink_to(kineto(real_profiles, name))
    (tmp_path / "job" / "notes.json").write_text('{"not": "a trace"}')
    sources = discover(tmp_path)
    assert [s.kind for s in sources] == ["kineto", "kineto"]
    captures = load(tmp_path)
    assert [c.rank for c in captures] == [1, 3]
    report = check([tmp_path], Options())
    assert sorted(r.rank for r in report.runs) == [1, 3]


def test_same_stream_overlaps_are_flagged_not_unioned_away(real_profiles: Path) -> None:
    """The real V100 trace has kernels starting before the previous one on stream 7 ended."""
    path = kineto(real_profiles, "trace-diff-test")
    spans = sorted(
        (int(e["ts"] * 1000), int((e["ts"] + e["dur"]) * 1000))
        for e in device_events(path)
        if e["args"]["stream"] == 7
    )
    overlapping, end = 0, None
    for start, stop in spans:
        if end is not None and start < end:
            overlapping += 1
        end = stop if end is None else max(end, stop)
    assert overlapping == 31
    (capture,) = load(path)
    (note,) = [n for n in capture.notes if n.startswith("capture validity")]
    assert f"{overlapping} device event(s) overlap" in note
    assert "programmatic dependent launch" in note
    report = check([path], Options())
    assert any(n.startswith("capture validity") for n in report.runs[0].notes)


def test_a_run_note_names_an_unranked_capture_as_the_report_does(tmp_path: Path) -> None:
    # a trace without distributedInfo has no rank: its run notes say "rank -", never "None"
    events = [  # the second kernel starts 1 µs into the first on stream 7
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "ts": 1,
            "dur": 2,
            "pid": 0,
            "tid": 7,
            "args": {"stream": 7},
        },
        {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "ts": 2,
            "dur": 2,
            "pid": 0,
            "tid": 7,
            "args": {"stream": 7},
        },
    ]
    path = tmp_path / "run.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    (note,) = [n for n in check([path], Options()).notes if "capture validity" in n]
    assert note.startswith("rank - run 1: capture validity: 1 device event(s) overlap")


def test_a_stream_that_is_not_an_int_is_counted_not_guessed(tmp_path: Path) -> None:
    # args.stream given as text or beyond int64 is no stream: the event is skipped and
    # counted, not put on its thread id's stream (tid 3 here, where the good kernel runs)
    def event(ts: int, stream: object) -> dict[str, object]:
        args = {} if stream is None else {"stream": stream}
        return {
            "ph": "X",
            "cat": "kernel",
            "name": "k",
            "ts": ts,
            "dur": 1,
            "pid": 0,
            "tid": 3,
            "args": args,
        }

    events = [event(1, 3), event(3, 10**23), event(5, "3")]
    path = tmp_path / "run.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    (capture,) = load(path)
    assert capture.kernels.height == 1  # 3 events - 2 without a usable stream
    assert "2 device events without a stream or a valid ts/dur skipped" in capture.notes
    assert capture.skipped_rows == 2  # counted as lost rows: the result is provisional


def test_a_dur_past_int64_ns_is_a_skipped_row_and_makes_the_run_provisional(
    tmp_path: Path,
) -> None:
    # 1e17 µs = 1e20 ns, past int64: the kernel is a lost row, the report provisional even
    # with --min-runs 1 (the other kernel: [1000, 2000) ns on stream 7)
    good = {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "pid": 0, "tid": 7}
    bad = json.dumps({**good, "ts": 5, "dur": 0}).replace('"dur": 0', '"dur": 1e17')
    path = tmp_path / "run.pt.trace.json"
    path.write_text(f'{{"schemaVersion": 1, "traceEvents": [{json.dumps(good)}, {bad}]}}')
    (capture,) = load(path)
    assert capture.kernels.select("start_ns", "end_ns").rows() == [(1000, 2000)]
    assert capture.skipped_rows == 1
    result = CliRunner().invoke(cli, ["analyze", str(path), "--min-runs", "1", "--warmup", "0"])
    assert "PROVISIONAL: malformed rows were skipped" in result.output


# ------------------------------------------------------------------ the generator


def synthetic(tmp_path: Path, **fields: Any) -> tuple[Path, KinetoSpec]:
    spec = KinetoSpec(**fields)
    name = "_".join(f"{k}-{v}" for k, v in sorted(fields.items())) or "default"
    return write(tmp_path / f"{name}.pt.trace.json.gz", spec), spec


@pytest.mark.parametrize("overlapped", [True, False])
@pytest.mark.parametrize("decimals", [True, False])
def test_generated_traces_read_with_their_answers(
    tmp_path: Path, overlapped: bool, decimals: bool
) -> None:
    whole = {} if decimals else {"gemm_ns": 100_000, "side_ns": 40_000, "comm_ns": 60_000}
    path, spec = synthetic(tmp_path, overlapped=overlapped, decimals=decimals, **whole)
    answer = expected(spec)
    plans = (Plan(name="side", side="side_op"), Plan(name="branch", side="module:SideBranch"))
    report = check([path], Options(plans=plans))
    (run,) = report.runs
    streams = {s.stream_id: (s.kernels, s.busy_ns) for s in run.streams}
    n = answer["kernels_per_stream"]
    assert streams == {7: (n, answer["main_busy"]), 20: (n, answer["side_busy"])}
    (pair,) = report.stream_pairs
    assert pair.per_run[0].overlap_ns == answer["pair_overlap"]
    (comm,) = report.communication
    assert (comm.busy_ns, comm.hidden_ns) == (answer["comm_busy"], answer["comm_hidden"])
    verdict = "real" if overlapped else "fake"
    for plan in report.plans:
        assert (plan.verdict, plan.side_stream, plan.per_run[0].side_ops) == (verdict, 20, n)
    (capture,) = load(path)
    assert sorted(set(capture.kernels["step"].to_list())) == [1, 2, 3]


def test_several_devices_keep_their_streams_apart(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    path, _spec = synthetic(tmp_path / "a")
    text = gzip.decompress(path.read_bytes()).decode()
    # the same work again on GPU 1: its stream 7 is not GPU 0's stream 7
    other = text.replace('"pid": 0, "tid": 7', '"pid": 1, "tid": 7').replace(
        '"device": 0, "stream": 7', '"device": 1, "stream": 7'
    )
    both = tmp_path / "both.json"
    both.write_text(other)
    (capture,) = load(both)
    assert set(capture.kernels["stream_id"].drop_nulls()) == {1_000_007, 20, 21, 22}
    assert any("stream ids are device" in n for n in capture.notes)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit", "github"])
def test_every_output_format_on_a_kineto_capture(tmp_path: Path, fmt: str) -> None:
    path, _ = synthetic(tmp_path)
    result = CliRunner().invoke(
        cli, ["analyze", str(path), "--side", "side_op", "--format", fmt, "--min-runs", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "side_op" in result.output


def test_plots_baseline_and_reference_on_kineto_captures(tmp_path: Path) -> None:
    good, _ = synthetic(tmp_path, overlapped=True)
    bad, _ = synthetic(tmp_path, overlapped=False)
    baseline = tmp_path / "base.json"
    args = ["--side", "side_op", "--min-runs", "1", "-q"]
    first = CliRunner().invoke(cli, ["analyze", str(good), *args, "--output", str(baseline)])
    assert first.exit_code == 0, first.output
    plot = tmp_path / "timeline.png"
    worse = CliRunner().invoke(
        cli, ["analyze", str(bad), *args, "--baseline", str(baseline), "--plot", str(plot)]
    )
    assert worse.exit_code == 1 and "baseline" in worse.output.lower()
    assert plot.stat().st_size > 0
    inline, _ = synthetic(tmp_path, inline=True)  # the same workload on one stream
    gain = CliRunner().invoke(
        cli, ["analyze", str(good), *args, "--dominator", "sgemm", "--reference", str(inline)]
    )
    assert gain.exit_code == 0, gain.output
    # a layer runs from one GEMM's start to the next's: period_ns in both layouts (300 µs)
    assert "layer wall 300.000 -> 300.000 µs (+0.00%)" in gain.output
    # the main stream's step ends at the last GEMM's end instead of after the inline side op,
    # which starts 5.000 µs after that GEMM and runs 40.250: 1045.373 - (5.000 + 40.250)
    assert "step wall 1045.373 -> 1000.123 µs (-4.33%)" in gain.output  # -45.250 / 1045.373


# ------------------------------------------------------------------ HTA's figure beside ours


def hta_figure(path: Path) -> float | None:
    """HTA's get_comm_comp_overlap, rewritten from its source (readers.kineto_hta's
    docstring) on json.loads' dicts: floats as HTA has them."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as handle:
        events = json.load(handle)["traceEvents"]
    rounded = any(not isinstance(e.get("ts"), int) for e in events)
    timed = [
        e
        for e in events
        if e.get("ph") == "X" and e.get("cat") not in (None, "Trace") and "dur" in e
    ]

    def stream(e: dict[str, Any]) -> int:
        value = e.get("args", {}).get("stream", -1)
        return value if isinstance(value, int) else -1

    def ts(e: dict[str, Any]) -> float:
        return math.ceil(e["ts"]) if rounded else e["ts"]

    steps = [e for e in timed if str(e["name"]).startswith("ProfilerStep") and stream(e) == -1]
    kept = None
    if len({e["name"] for e in steps}) > 1:
        last = max(ts(e) for e in steps)
        kept = {e.get("args", {}).get("correlation", -1) for e in timed if stream(e) == -1
                and ts(e) < last}  # fmt: skip
    comm: list[tuple[int, int]] = []
    comp: list[tuple[int, int]] = []
    for e in timed:
        if stream(e) == -1 or (kept is not None and e["args"].get("correlation", -1) not in kept):
            continue
        if "Memcpy" in e["name"] or "Memset" in e["name"]:
            continue
        end = math.floor(e["ts"] + e["dur"]) if rounded else e["ts"] + e["dur"]
        (comm if "ncclKernel" in e["name"] else comp).append((int(ts(e)), int(end)))
    if not comm:
        return None
    return round(100 * intersection(comm, comp) / length(comm), 2)


def comparison_note(notes: tuple[str, ...]) -> str:
    (note,) = [n for n in notes if n.startswith("communication/compute overlap")]
    return note


@pytest.mark.parametrize("name", ["trace-diff-control", "trace-diff-test"])
def test_hta_compatible_figure_beside_the_exact_one(real_profiles: Path, name: str) -> None:
    path = kineto(real_profiles, name)
    events = device_events(path)
    comm = intervals([e for e in events if e["cat"] == "kernel" and NCCL.match(e["name"])])
    comp = intervals([e for es in compute_by_stream(events).values() for e in es])
    exact = 100 * intersection(comm, comp) / length(comm)
    hta = hta_figure(path)
    assert hta is not None
    (capture,) = load(path)
    note = comparison_note(capture.notes)
    assert f"{exact:.2f}% exact" in note and f"HTA-compatible {hta:.2f}%" in note


def test_hta_rounds_decimal_traces_and_ignores_nccl_dev_kernels(tmp_path: Path) -> None:
    path, _ = synthetic(tmp_path, steps=4)  # ncclDevKernel_*: not communication to HTA
    assert hta_figure(path) is None
    assert "HTA-compatible n/a" in comparison_note(load(path)[0].notes)
    text = gzip.decompress(path.read_bytes()).decode().replace("ncclDevKernel_", "ncclKernel_")
    old = tmp_path / "old-nccl.json"
    old.write_text(text)
    hta = hta_figure(old)
    # per layer: GEMM [0, 100.123] µs -> [0, 100]; NCCL [70.123, 130.623] -> [70, 130]:
    # float64 holds a 2024 epoch in µs to 0.25 µs, so HTA reads ts ...70.123 as ...70.0
    # (exactly: ceil 71, 29 of 59 µs, 49.15%)
    assert hta == round(100 * 30 / 60, 2) == 50.0
    note = comparison_note(load(old)[0].notes)
    assert f"HTA-compatible {hta:.2f}%" in note


def test_cuda_runs_report_sm_demand_as_advice_and_no_ascend_cores(tmp_path: Path) -> None:
    path, spec = synthetic(tmp_path)
    n = spec.steps * spec.layers
    # GEMM (132 CTAs) with the side kernel (64) or the NCCL kernel (2): over 132 SMs
    over = n * (spec.side_ns + spec.comm_under)
    (note,) = [x for x in load(path)[0].notes if x.startswith("SM demand")]
    assert f"for {over / 1000:.3f} µs of it" in note and "peak 196 CTAs" in note
    quiet, _ = synthetic(tmp_path, gemm_ctas=64, side_ctas=60)  # 64 + 60 + 2 <= 132
    (calm,) = [x for x in load(quiet)[0].notes if x.startswith("SM demand")]
    assert "for 0.000 µs of it" in calm
    report = check([path], Options())
    assert report.cores is None
    result = CliRunner().invoke(cli, ["analyze", str(path), "--min-runs", "1"])
    assert "Cores" not in result.output and "SM demand" in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"schemaVersion": 1, "traceEvents": [1, 2]}', "not a Kineto trace: Expected `object`"),
        ('{"schemaVersion": 1, "traceEvents": [', "invalid or truncated Kineto trace JSON"),
    ],
)
def test_a_broken_kineto_trace_is_an_input_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rank0.pt.trace.json"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["analyze", str(path), "-q"])
    assert result.exit_code == 2 and message in result.output


def test_a_truncated_gzip_is_an_input_error(tmp_path: Path) -> None:
    path, _ = synthetic(tmp_path)
    cut = tmp_path / "cut.pt.trace.json.gz"
    cut.write_bytes(path.read_bytes()[:200])
    result = CliRunner().invoke(cli, ["analyze", str(cut), "-q"])
    assert result.exit_code == 2 and "cannot read Kineto trace" in result.output


def test_communication_per_step_is_exact(real_profiles: Path) -> None:
    """Per ProfilerStep: a kernel belongs to the step whose host range holds the runtime
    call that launched it (same correlation); busy and hidden from the trace text."""
    path = kineto(real_profiles, "trace-diff-control")
    text = gzip.decompress(path.read_bytes()).decode()
    trace = json.loads(text, parse_float=Decimal, parse_int=Decimal)["traceEvents"]
    steps = [
        (e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1]))
        for e in trace
        if e.get("ph") == "X" and str(e.get("name")).startswith("ProfilerStep#")
    ]
    launched = {e["args"]["correlation"]: e["ts"] for e in trace if e.get("cat") == "cuda_runtime"}

    def step_of(e: dict[str, Any]) -> int | None:
        at = launched.get(e["args"]["correlation"], e["ts"])
        return next((n for a, b, n in steps if a <= at <= b), None)

    kernels = [e for e in device_events(path) if e["cat"] == "kernel"]
    report = check([path], Options())
    (rank,) = report.communication
    assert len(rank.steps) == 6
    for row in rank.steps:
        mine = [e for e in kernels if step_of(e) == row.step]
        comm = intervals([e for e in mine if NCCL.match(e["name"])])
        comp = intervals([e for e in mine if not NCCL.match(e["name"])])
        assert (row.busy_ns, row.hidden_ns, row.compute_ns) == (
            length(comm),
            intersection(comm, comp),
            length(comp),
        )


def test_a_kineto_report_reads_back_from_json(tmp_path: Path) -> None:
    path, _ = synthetic(tmp_path)
    report = check([path], Options(plans=(Plan(name="side", side="side_op"),)))
    document = json.loads(json.dumps(to_dict(report)))
    again = Report.from_json(document, "report.json")
    assert again.cores is None and to_dict(again) == to_dict(report)


def test_op_type_is_the_launching_cpu_op(real_profiles: Path) -> None:
    """A kernel's op_type: the innermost cpu_op, on the launching thread, that holds the
    runtime call with the kernel's correlation (checked with a plain search here)."""
    path = kineto(real_profiles, "trace-diff-control")
    text = gzip.decompress(path.read_bytes()).decode()
    trace = json.loads(text, parse_float=Decimal, parse_int=Decimal)["traceEvents"]
    ops: dict[tuple[Any, Any], list[tuple[Decimal, Decimal, str]]] = {}
    for e in trace:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            ops.setdefault((e["pid"], e["tid"]), []).append(
                (e["ts"], e["ts"] + e["dur"], e["name"])
            )
    for spans in ops.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
    launch = {
        e["args"]["correlation"]: (e["pid"], e["tid"], e["ts"])
        for e in trace
        if e.get("cat") == "cuda_runtime"
    }

    def innermost(pid: Any, tid: Any, at: Decimal) -> str | None:
        found = [s for s in ops.get((pid, tid), []) if s[0] <= at < s[1]]
        return found[-1][2] if found else None  # the last to start: nested inside the others

    expected: collections.Counter[str | None] = collections.Counter()
    for e in device_events(path):
        where = launch.get(e["args"]["correlation"])
        expected[innermost(*where) if where else None] += 1
    (capture,) = load(path)
    assert collections.Counter(capture.kernels["op_type"].to_list()) == expected
    report = check([path], Options(plans=(Plan(name="mm", op_type="^aten::mm$", side_stream=20),)))
    (plan,) = report.plans
    on_20 = capture.kernels.filter(
        (capture.kernels["stream_id"] == 20) & (capture.kernels["op_type"] == "aten::mm")
    )
    assert plan.per_run[0].side_ops == on_20.height


ASCEND_APIS = ("torch.npu", "torch_npu", "torchair", "npu_", "limit_core_num", "AI core", "ENABLE_")


def test_a_cuda_capture_gets_advice_in_torch_cuda_apis(tmp_path: Path) -> None:
    # the serialised layout: the side op starts 40 µs after the GEMM ends, so nothing hides
    # (fake); its fix steps must name torch.cuda's streams, never torch_npu or torchair
    bad, _ = synthetic(tmp_path, overlapped=False)
    report = check([bad], Options(plans=(Plan(name="side", side="side_op", dominator="sgemm"),)))
    (plan,) = report.plans
    assert plan.verdict == "fake"
    assert plan.diagnosed is not None and plan.diagnosed.path == "cuda"
    steps = " ".join(plan.diagnosed.fix)
    assert "torch.cuda.current_stream().wait_stream(side)" in steps
    assert not any(word in steps for word in ASCEND_APIS)


def test_every_cuda_step_names_no_ascend_api() -> None:
    from overlap_check.judge.advice import fix_steps
    from overlap_check.model import Evidence

    evidence = [Evidence(kind, kind, 1000) for kind in ("join-wait", "tail-ops", "shape-change")]
    for cause in ("not-split", "fake", "partial", "real"):
        for waited in ("main", "side", None):
            steps = " ".join(fix_steps(cause, "cuda", evidence, waited))
            assert steps and not any(word in steps for word in ASCEND_APIS), (cause, waited)
