"""Level0 streams (readers/streams.py): kernels of the same name and start on two streams
keep both their streams, and a row that no task matches is counted, shown and makes the
plans it may belong to provisional (issue 23 point 3)."""

from __future__ import annotations

import json
from pathlib import Path

from overlap_check.judge.pipeline import check
from overlap_check.model import Options, Plan
from overlap_check.report import json as json_report
from overlap_check.report import text as text_report
from synth import Kernel, Scenario, Variant, write_result_dir

T0 = 1_736_408_883_704_643_000
LAYERS = 4
LEVEL0 = Variant(version="2025", level="Level0")
PLAN = Plan("side", side="Add|Sigmoid", side_stream=3, dominator="MatMul")
ONE_RUN = Options(plans=(PLAN,), warmup=0, min_runs=1)


def layers() -> Scenario:
    """Per layer (1 ms apart), main stream 2: Add [0, 10) µs, MatMul [40, 140); side stream 3:
    Add [0, 30) (same name and start as the main Add), Sigmoid [20, 70)."""
    kernels = []
    for n in range(LAYERS):
        t = T0 + n * 1_000_000
        kernels += [
            Kernel("Add", 2, t, 10_000),
            Kernel("MatMul", 2, t + 40_000, 100_000),
            Kernel("Add", 3, t, 30_000),
            Kernel("Sigmoid", 3, t + 20_000, 50_000),
        ]
    return Scenario("level0-join", tuple(kernels))


def test_same_name_and_start_on_two_streams_keep_their_streams(tmp_path: Path) -> None:
    # Before: both Adds of each layer shared the key (start, "Add") on streams 2 and 3 and
    # got no stream: 8 of 16 rows gone, the plan judged on Sigmoid alone: [20, 70) under
    # the MatMul [40, 140) for 30 of 50 µs, hidden 0.6.
    root = write_result_dir(layers(), tmp_path, LEVEL0)
    report = check([root], ONE_RUN, workers=1)
    (run,) = report.runs
    assert run.stream_source == "trace_view.json"
    assert run.unplaced_rows == 0
    # stream 2: Add + MatMul = 110 µs a layer; stream 3: Add [0, 30) ∪ Sigmoid [20, 70) = 70 µs
    assert [(s.stream_id, s.kernels, s.busy_ns) for s in run.streams] == [
        (2, 2 * LAYERS, LAYERS * 110_000),
        (3, 2 * LAYERS, LAYERS * 70_000),
    ]
    (plan,) = report.plans
    # side busy [0, 70) = 70 µs; under stream 2's [0, 10) ∪ [40, 140): 10 + 30 = 40 µs
    assert plan.hidden_pct is not None
    assert abs(plan.hidden_pct - 40 / 70) < 1e-12
    assert not plan.provisional


def _drop_trace_task(root: Path, name: str, stream: int, layer: int) -> None:
    """Remove one kernel task from trace_view.json: its kernel_details row matches nothing."""
    path = root / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    events = json.loads(path.read_text())
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    hits = [
        i
        for i, e in enumerate(events)
        if e.get("ph") == "X"
        and e.get("name") == name
        and threads.get((e["pid"], e["tid"])) == f"Stream {stream}"
    ]
    del events[hits[layer]]
    path.write_text(json.dumps(events))


def test_a_row_no_task_matches_is_counted_shown_and_makes_the_plan_provisional(
    tmp_path: Path,
) -> None:
    root = write_result_dir(layers(), tmp_path, LEVEL0)
    # layer 2's side Sigmoid is gone from the trace: its kernel_details row has no task there
    # (no task starts at its ns at all), so it cannot be placed
    _drop_trace_task(root, "Sigmoid", 3, 2)
    other = Plan("other", side="Cast", side_stream=3, dominator="Conv")
    report = check([root], Options(plans=(PLAN, other), warmup=0, min_runs=1), workers=1)
    (run,) = report.runs
    assert run.unplaced_rows == 1
    # stream 3 lost one Sigmoid: 2 x 4 - 1 = 7 kernels, busy 70 x 3 + 30 = 240 µs
    assert [(s.stream_id, s.kernels, s.busy_ns) for s in run.streams][1] == (3, 7, 240_000)
    side, unrelated = report.plans
    assert side.provisional  # "Sigmoid" matches side "Add|Sigmoid"
    assert not unrelated.provisional  # names neither Cast nor Conv
    text = text_report.render(report)
    assert "unplaced" in text
    assert "1 kernel row(s) of" in text and "could not be placed on a stream" in text
    assert "plan 'side' rank 0: provisional: 1 kernel row(s) without a stream" in text
    payload = json.loads(json_report.render(report))
    assert payload["runs"][0]["unplaced_rows"] == 1
