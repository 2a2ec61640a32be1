"""Which hardware tasks are kernels (work), copies, or neither (waiting, bookkeeping).

Counting a wait or bookkeeping task as busy time would invent overlap. A task is
non-kernel by its task type or, in old traces that type everything ``Other``, by its
name (docs/formats.md, "trace_view.json")."""

from __future__ import annotations

import polars as pl

# Memory copies: not kernels, but the side ops of a copy plan
# (``side_kind = "copy"``, e.g. KV-cache offload on an async copy stream). The readers
# keep them as copy rows (column ``is_copy``) that no compute figure counts.
COPY_TASKS: frozenset[str] = frozenset(
    {
        "MEMCPY",
        "MEMCPY_ASYNC",
        "MEMCPY_ASYNC_SQE",
        "MEMCPY_ASYNC_WITHOUT_SDMA",
        "PCIE_DMA",
        "PCIE_DMA_SQE",
        "SDMA",
        "SDMA_SQE",
        "MEMCOPYASYNC",
    }
)

# Upper case, spaces as underscores (see :func:`task_key`); copies are among them.
NON_KERNEL_TASKS: frozenset[str] = COPY_TASKS | frozenset(
    {
        "EVENT_RECORD",
        "EVENT_RECORD_SQE",
        "EVENT_WAIT",
        "EVENT_WAIT_SQE",
        "EVENT_RESET",
        "EVENT_RESET_SQE",
        "NOTIFY_WAIT",
        "NOTIFY_WAIT_SQE",
        "NOTIFY_RECORD",
        "NOTIFY_RECORD_SQE",
        "WRITE_VALUE",
        "WRITE_VALUE_SQE",
        "PLACE_HOLDER",
        "PLACE_HOLDER_SQE",
        "TASK_TIMEOUT_SET",
        "PROFILING_ENABLE",
        "PROFILING_DISABLE",
        "CAPTURE_RECORD",
        "CAPTURE_WAIT",
        "STREAM_SWITCH",
        "STREAM_ACTIVE",
        "LABEL_SET",
        "LABEL_SWITCH",
        "LABEL_GOTO",
        "BARRIER",
        "MODEL_EXECUTE",
        "MODEL_END_GRAPH",
        "MODEL_MAINTAINCE",
        "REDUCE_INLINE",
        # Older generations (the 910A trace of 2024-09) type every task `Other`; their
        # names say what they are (memcpy spelt `MemcopyAsync`, among COPY_TASKS), and the
        # SDMA reduce tasks of a collective on its communication streams (the collective
        # itself is a communication row; its tasks are not compute).
        "REDUCE_ASYNC",
        "REDUCE_ASYNC_V2",
        # HCCL's own task names (its Plane threads name them so; a hardware stream of an
        # older generation may too, typed `Other`): a collective's steps, not compute
        "NOTIFY_WAIT_EX",
        "RDMA_SEND",
        "RDMASEND",
        "INLINE_REDUCE",
        "REDUCE_TBE",
        "LOCAL_COPY",
    }
)
# A collective's synchronisation steps: a stream that runs them is a collective's stream.
NOTIFY_TASKS = ["NOTIFY_WAIT", "NOTIFY_RECORD", "NOTIFY_WAIT_SQE", "NOTIFY_RECORD_SQE"]
# A hardware task named after a collective (``hcom_allReduce__538_0_1``) is one of its
# steps on a communication stream: the collective itself is a communication row.
COMMUNICATION_PREFIX = "HCOM_"


# STARS_COMMON is a generic STARS task: a DSA kernel when it carries an op name
# (db rows joined to COMPUTE_TASK_INFO), bookkeeping otherwise.
AMBIGUOUS_TASKS: frozenset[str] = frozenset({"STARS_COMMON"})


def task_key(expr: pl.Expr) -> pl.Expr:
    """Normalised task type / name for set lookups."""
    return expr.str.strip_chars().str.to_uppercase().str.replace_all(" ", "_", literal=True)


def is_copy_task(task_type: pl.Expr, name: pl.Expr) -> pl.Expr:
    """True for a memory copy task: its type or (old traces typed ``Other``) its name."""
    copies = list(COPY_TASKS)
    return task_key(task_type).fill_null("").is_in(copies) | task_key(name).fill_null("").is_in(
        copies
    )


def is_kernel_task(task_type: pl.Expr, name: pl.Expr) -> pl.Expr:
    """Neither type nor name is a non-kernel task's, the name no collective's (``hcom_``);
    STARS_COMMON only with a real op name."""
    type_key = task_key(task_type).fill_null("")
    name_key = task_key(name).fill_null("")
    non_kernel = list(NON_KERNEL_TASKS)
    ambiguous = list(AMBIGUOUS_TASKS)
    anonymous = name_key.is_in(["", "N/A", *non_kernel, *ambiguous])
    return ~(
        type_key.is_in(non_kernel)
        | name_key.is_in(non_kernel)
        | name_key.str.starts_with(COMMUNICATION_PREFIX)
        | (type_key.is_in(ambiguous) & anonymous)
    )
