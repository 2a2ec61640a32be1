"""PyTorch profiler (Kineto) traces of a CUDA workload whose answers are known by construction.

The layout imitates ``torch.profiler`` on a GPU (docs/formats.md, "PyTorch profiler
traces"): ``schemaVersion``, ``deviceProperties`` (``numSms``), ``distributedInfo``,
then ``traceEvents`` with a CPU process (``ProfilerStep#N`` ``user_annotation`` ranges,
``nn.Module: Block_<l>`` ``python_function`` calls, ``cudaLaunchKernel`` runtime
calls with ``args.correlation`` and their ``ac2g`` flows), and one process per GPU
(``pid`` = device) with a thread per stream (``"stream 7 "``): ``kernel``,
``gpu_memcpy`` events with ``args.device``, ``args.stream``, ``args.correlation`` and
``args.grid``.

Each layer of each step launches, inside its Block module (the side kernel inside
a nested ``SideBranch`` module): a GEMM on the main stream,
a side kernel on the side stream (under the GEMM when ``overlapped``, after it
otherwise), an NCCL all-reduce on the communication stream (its first ``comm_under``
ns under the GEMM) and a copy on the copy stream. :func:`expected` gives the figures.
Times are written as µs with nanosecond decimals (``decimals``) or as whole µs.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GEMM = "ampere_sgemm_128x64_nn"
SIDE = "void at::native::vectorized_elementwise_kernel<4, side_op>(int)"
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
COPY = "Memcpy HtoD (Pinned -> Device)"
BASE_NS = 1_712_867_402_348_256_000  # a 2024 epoch in ns


@dataclass(frozen=True)
class KinetoSpec:
    steps: int = 3
    layers: int = 4
    overlapped: bool = True
    inline: bool = False  # the reference: the side kernel on the main stream, after the GEMM
    rank: int = 0
    device: int = 0
    world_size: int = 1
    num_sms: int = 132
    decimals: bool = True  # ts/dur as µs with 3 decimals, else whole µs
    main: int = 7
    side: int = 20
    comm: int = 21
    copy: int = 22
    gemm_ns: int = 100_123  # whole µs when not ``decimals``: multiples of 1000 below
    side_ns: int = 40_250
    comm_ns: int = 60_500
    comm_under: int = 30_000  # the NCCL kernel's first ns under the GEMM
    copy_ns: int = 5_000
    gemm_ctas: int = 132
    side_ctas: int = 64
    period_ns: int = 300_000  # from one layer's GEMM start to the next


def _us(ns: int, decimals: bool) -> str:
    return f"{ns // 1000}.{ns % 1000:03d}" if decimals else str(ns // 1000)


def _layer_times(spec: KinetoSpec, step: int, layer: int) -> dict[str, tuple[int, int]]:
    """Per kernel role: (start, end) in ns."""
    t0 = BASE_NS + 1_000_000 + (step * spec.layers + layer) * spec.period_ns
    side_start = t0 + 10_000 if spec.overlapped else t0 + spec.gemm_ns + 40_000
    if spec.inline:
        side_start = t0 + spec.gemm_ns + 5_000
    comm_start = t0 + spec.gemm_ns - spec.comm_under
    return {
        "gemm": (t0, t0 + spec.gemm_ns),
        "side": (side_start, side_start + spec.side_ns),
        "comm": (comm_start, comm_start + spec.comm_ns),
        "copy": (t0 + spec.gemm_ns + 150_000, t0 + spec.gemm_ns + 150_000 + spec.copy_ns),
    }


def trace(spec: KinetoSpec) -> dict[str, Any]:
    """The trace object (ts/dur as raw decimal text, see :func:`write`)."""
    pid, tid = 4242, 4242
    dec = spec.decimals

    def x(cat: str, name: str, p: Any, t: Any, start: int, end: int, **args: Any) -> dict[str, Any]:
        ts, dur = _Raw(_us(start, dec)), _Raw(_us(end - start, dec))
        return {"ph": "X", "cat": cat, "name": name, "pid": p, "tid": t, "ts": ts, "dur": dur,
                "args": args}  # fmt: skip

    events: list[dict[str, Any]] = []
    side = spec.main if spec.inline else spec.side
    streams = {"gemm": spec.main, "side": side, "comm": spec.comm, "copy": spec.copy}
    names = {"gemm": GEMM, "side": SIDE, "comm": NCCL, "copy": COPY}
    grids = {"gemm": [spec.gemm_ctas, 1, 1], "side": [spec.side_ctas, 1, 1], "comm": [2, 1, 1]}
    correlation = 100
    for step in range(spec.steps):
        first = _layer_times(spec, step, 0)["gemm"][0]
        step_start = first - 900_000
        step_end = step_start + spec.layers * 200_000 + 50_000
        events.append(
            x("user_annotation", f"ProfilerStep#{step + 1}", pid, tid, step_start, step_end)
        )
        for layer in range(spec.layers):
            host = step_start + 1_000 + layer * 200_000
            events.append(
                x("python_function", f"nn.Module: Block_{layer}", pid, tid, host, host + 100_000)
            )
            for i, (role, (start, end)) in enumerate(_layer_times(spec, step, layer).items()):
                correlation += 1
                launch = host + 10_000 * (i + 1)
                if role == "side":  # the side branch is a submodule of the block
                    events.append(x("python_function", f"nn.Module: SideBranch_{layer}", pid, tid,
                                    launch - 1_000, launch + 6_000))  # fmt: skip
                events.append(
                    x(
                        "cuda_runtime",
                        "cudaLaunchKernel",
                        pid,
                        tid,
                        launch,
                        launch + 5_000,
                        correlation=correlation,
                    )
                )
                cat = "gpu_memcpy" if role == "copy" else "kernel"
                args: dict[str, Any] = {"device": spec.device, "stream": streams[role],
                                        "correlation": correlation}  # fmt: skip
                if role in grids:
                    args["grid"] = grids[role]
                events.append(x(cat, names[role], spec.device, streams[role], start, end, **args))
                flow = {"ph": "s", "id": correlation, "pid": pid, "tid": tid, "cat": "ac2g",
                        "name": "ac2g", "ts": _Raw(_us(launch, dec))}  # fmt: skip
                events.append(flow)
    events += [
        {"name": "process_name", "ph": "M", "pid": spec.device, "tid": 0,
         "args": {"name": "python3.10"}},
        {"name": "process_labels", "ph": "M", "pid": spec.device, "tid": 0,
         "args": {"labels": f"GPU {spec.device}"}},
    ] + [
        {"name": "thread_name", "ph": "M", "pid": spec.device, "tid": s,
         "args": {"name": f"stream {s} "}}
        for s in sorted(set(streams.values()))
    ]  # fmt: skip
    return {
        "schemaVersion": 1,
        "deviceProperties": [
            {
                "id": spec.device,
                "name": "NVIDIA H100",
                "numSms": spec.num_sms,
                "computeMajor": 9,
                "computeMinor": 0,
            }
        ],
        "distributedInfo": {"backend": "nccl", "rank": spec.rank, "world_size": spec.world_size},
        "traceEvents": events,
    }


class _Raw(str):
    """A number written verbatim (the exact decimal text), not as a JSON string."""


def _dumps(value: Any) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dumps(v) for v in value) + "]"
    return json.dumps(value)


def write(path: Path, spec: KinetoSpec) -> Path:
    """Write the trace to ``path`` (gzipped when it ends in ``.gz``)."""
    text = _dumps(trace(spec)).replace('}, {"ph"', '},\n  {"ph"').encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(text) if path.name.endswith(".gz") else text)
    return path


def expected(spec: KinetoSpec) -> dict[str, int]:
    """Figures by construction, in ns over the whole capture: busy per stream, the pair
    overlap of side and main, the communication busy and hidden time."""
    n = spec.steps * spec.layers
    side_hidden = spec.side_ns if spec.overlapped and not spec.inline else 0
    # inline, the side kernel starts 5 µs after the GEMM, under the NCCL kernel's tail
    comm_tail = spec.comm_ns - spec.comm_under - 5_000 if spec.inline else 0
    return {
        "main_busy": n * (spec.gemm_ns + (spec.side_ns if spec.inline else 0)),
        "side_busy": 0 if spec.inline else n * spec.side_ns,
        "pair_overlap": n * side_hidden,
        "comm_busy": n * spec.comm_ns,
        "comm_hidden": n * (spec.comm_under + max(0, min(comm_tail, spec.side_ns))),
        "kernels_per_stream": n,
    }
