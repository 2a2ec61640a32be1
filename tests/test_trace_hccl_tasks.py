"""A bare 910A Level1 trace_view.json (issue 23 point 14): Task Type ``Other`` on AI Core
kernels and on a collective's tasks alike. The tasks on the communication streams are
told from kernels by name (HCCL's task names, ``hcom_...``) and by the capture's own join
(the HCCL process lists each task on a ``Plane N`` thread with its ``stream id``), alone
or beside its Level0 kernel_details.csv; the Level0 twin reads the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from overlap_check.judge.pipeline import check
from overlap_check.model import Options

T0 = 1727592872443000  # µs, as in the real 910A capture
HARDWARE, HCCL = 40510881, 40510880


def meta(pid: int, tid: int, kind: str, name: str) -> dict[str, object]:
    key = "labels" if kind == "process_labels" else "name"
    return {"ph": "M", "name": kind, "pid": pid, "tid": tid, "args": {key: name}}


def task(
    name: str, pid: int, tid: int, at_us: int, dur_us: float, **args: object
) -> dict[str, object]:
    return {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": f"{T0 + at_us}.000",
            "dur": dur_us, "args": args}  # fmt: skip


def trace_910a(path: Path) -> None:
    """Per layer (2 layers, 1000 µs apart): stream 1 runs MatMul12 [0, 100) and Add13
    [100, 150) µs; an all-reduce [200, 500) runs its steps on streams 11, 12 and 13, all
    typed Other: RDMASend and Reduce_TBE (HCCL names), hcom_allReduce__538_0_1 (the
    collective's name), Vector_Reduce (a name no list has: only the Plane join tells)."""
    events = [
        meta(HARDWARE, 0, "process_name", "Ascend Hardware"),
        meta(HARDWARE, 0, "process_labels", "NPU 1"),
        meta(HCCL, 0, "process_name", "HCCL"),
        meta(HCCL, 0, "thread_name", "Group 0 Communication"),
        meta(HCCL, 1, "thread_name", "Plane 0"),
    ]
    events += [meta(HARDWARE, s, "thread_name", f"Stream {s}") for s in (1, 11, 12, 13)]
    steps = {
        11: ("RDMASend", "Reduce_TBE"),
        12: ("hcom_allReduce__538_0_1", "hcom_allReduce__538_0_1"),
        13: ("Vector_Reduce", "Vector_Reduce"),
    }
    for layer in range(2):
        t = layer * 1000
        events += [
            task("MatMul12", HARDWARE, 1, t, 100.0, **{"Task Type": "Other", "Task Id": 10}),
            task("Add13", HARDWARE, 1, t + 100, 50.0, **{"Task Type": "Other", "Task Id": 11}),
            task("hcom_allReduce__538_0_1", HCCL, 0, t + 200, 300.0),
        ]
        for stream, names in steps.items():
            for i, name in enumerate(names):
                at = t + 200 + 150 * i
                events.append(task(name, HARDWARE, stream, at, 140.0, **{"Task Type": "Other"}))
                events.append(task(name, HCCL, 1, at, 140.0, **{"stream id": stream}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(events))


def level0_kernel_details(path: Path) -> None:
    """The Level0 twin's kernel_details.csv: the two kernels a layer and the collective."""
    lines = [
        "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim"
    ]
    for layer in range(2):
        t = T0 + layer * 1000
        lines += [
            f",MatMul12,N/A,N/A,{t}.000\t,100.000,0,0",
            f",Add13,N/A,N/A,{t + 100}.000\t,50.000,0,0",
            f",hcom_allReduce__538_0_1,N/A,HCCL,{t + 200}.000\t,300.000,0,0",
        ]
    path.write_text("\r\n".join(lines) + "\r\n")


@pytest.mark.parametrize("beside", [False, True])
def test_collective_steps_on_910a_streams_are_not_kernels(tmp_path: Path, beside: bool) -> None:
    out = tmp_path / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    trace_910a(out / "trace_view.json")
    if beside:
        level0_kernel_details(out / "kernel_details.csv")
    path = tmp_path / "rank1_ascend_pt" if beside else out / "trace_view.json"
    report = check([path], Options(warmup=0, min_runs=1), workers=1)
    (run,) = report.runs
    # before: streams 11, 12 and 13 had 4 "kernels" each, and the pairs among them were
    # judged; now only stream 1: 2 layers x (100 + 50) µs
    assert [(s.stream_id, s.kernels, s.busy_ns) for s in run.streams] == [(1, 4, 300_000)]
    assert run.communication == 2
    assert report.stream_pairs == ()
    assert run.unplaced_rows == 0
    if beside:
        assert run.source == "kernel_details.csv" and run.stream_source == "trace_view.json"
    # the collective [200, 500) µs a layer, none of it under compute
    (comm,) = report.communication
    assert (comm.busy_ns, comm.hidden_ns) == (2 * 300_000, 0)


def test_real_910a_trace_copies_are_only_the_compute_streams(real_profiles: Path) -> None:
    """The real 910A trace: stream 1 has 17 MEMCPY_ASYNC and 7 MemcopyAsync copies; the
    MEMCPY_ASYNC tasks on streams 3, 11, 12 and 13 (40 + 3 x 28) sit among NOTIFY_WAIT /
    NOTIFY_RECORD steps of the all-reduce: a collective's steps, no copy plan's copies."""
    import polars as pl

    from overlap_check.readers.trace import read_trace

    path = real_profiles / "torch_npu-910A-level0/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT"
    kernels = read_trace(path / "trace_view.json").kernels
    copies = kernels.filter(pl.col("is_copy")).group_by("stream_id").len().sort("stream_id")
    assert copies.rows() == [(1, 17 + 7)]
    # and the compute streams stay those of the Level0 twin (PROVENANCE.md): 1 and 2
    compute = kernels.filter(~pl.col("is_copy") & ~pl.col("is_communication"))
    assert sorted(compute["stream_id"].unique().to_list()) == [1, 2]
