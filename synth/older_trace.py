"""An older-generation (910A, 2024-09) trace: every task typed ``Other``, names tell them apart.

On this generation the Ascend Hardware threads type AI_CORE kernels and event,
notify, copy and communication tasks alike as ``Other`` (the ``2023`` trace
style writes exactly that); the names are the only clue: ``MemcopyAsync`` and
``MEMCPY_ASYNC`` copies, ``EVENT_RECORD`` / ``EVENT_WAIT`` on the compute
streams, ``NOTIFY_*`` and the collective's ``REDUCE_ASYNC_V2`` on a
communication stream. Written as a bare trace (no kernel_details.csv), the
known answer is the kernels of the construction only.
"""

from __future__ import annotations

from synth.construction import BASE_NS
from synth.expected import Built, Expected, ExpectedStream
from synth.model import CommOp, Kernel, Scenario, Task, Variant

MAIN_STREAM = 1
HELPER_STREAM = 2
COMM_STREAM = 3
# (name, duration ns): a small conv net's step, as in the real 910A capture
MAIN_KERNELS = (
    ("trans_Cast_10", 39_850),
    ("trans_TransData_11", 45_260),
    ("Conv2D12", 246_972),
    ("atomic_memset-1_271", 4_690),
    ("MatMul28", 63_101),
    ("ReluGrad62", 12_480),
)
HELPER_KERNELS = (("StatelessDropOutGenMask25", 102_511), ("StatelessDropOutGenMask31", 102_511))
GAP_NS = 100


def older_910a_trace(steps: int = 2) -> Built:
    """Compute kernels on stream 1, two AI_CPU kernels on stream 2, a collective's tasks
    on stream 3; copies and events among them. Stream 1 busy = steps x sum(MAIN_KERNELS)."""
    kernels: list[Kernel] = []
    tasks: list[Task] = []
    comm: list[CommOp] = []
    t = BASE_NS
    for step in range(steps):
        tasks.append(Task("MemcopyAsync", MAIN_STREAM, t, 1_549_935))
        tasks.append(Task("MEMCPY_ASYNC", MAIN_STREAM, t + 1_550_035, 23_500))
        t += 1_600_000
        helper_at = t
        for name, dur in MAIN_KERNELS:
            kernels.append(Kernel(name, MAIN_STREAM, t, dur, step=step))
            t += dur + GAP_NS
        # the AI_CPU kernel runs before the main stream's work, then records an event
        name, dur = HELPER_KERNELS[step % 2]
        kernels.append(
            Kernel(name, HELPER_STREAM, helper_at - dur - 2_000, dur, "AI_CPU", step=step)
        )
        tasks.append(Task("EVENT_RECORD", HELPER_STREAM, helper_at - 1_900, 1_000))
        tasks.append(Task("EVENT_WAIT", MAIN_STREAM, helper_at - 1_000, 900))
        # the collective: a communication row, and its tasks on stream 3
        comm.append(CommOp(f"hcom_allReduce__123_{step}_1", t, 300_000, step=step))
        tasks += [
            Task("NOTIFY_RECORD", COMM_STREAM, t, 1_000),
            Task("NOTIFY_WAIT", COMM_STREAM, t + 1_100, 120_000),
            Task("REDUCE_ASYNC_V2", COMM_STREAM, t + 121_200, 150_000),
            Task("MEMCPY_ASYNC", COMM_STREAM, t + 271_300, 20_000),
        ]
        t += 300_000 + 1_000_000
    scenario = Scenario(
        "older-910a-trace", tuple(kernels), communication=tuple(comm), tasks=tuple(tasks), rank=1
    )
    main_busy = steps * sum(d for _, d in MAIN_KERNELS)
    helper_busy = sum(HELPER_KERNELS[s % 2][1] for s in range(steps))
    streams = (
        ExpectedStream(1, 1, MAIN_STREAM, steps * len(MAIN_KERNELS), main_busy),
        ExpectedStream(1, 1, HELPER_STREAM, steps, helper_busy),
    )
    return Built(
        (scenario,),
        Expected(plans=(), streams=streams, notes="trace only; every task typed Other"),
        Variant(version="2023", level="Level0", kernel_details=False, crlf=False),
    )
