"""Per-kernel trace events (Ascend Hardware X events, flows, CANN launches), vectorised.

Every device task becomes one X event on its ``Stream N`` thread, with ``ts`` a
string with 3 decimals and ``dur`` a float with a sub-ns tail; kernels also get a
HostToDevice flow (start on the CANN side, end on the kernel) and an async_npu
flow from the Python thread.
"""

from __future__ import annotations

import json

import polars as pl

from synth import fmt
from synth.model import TRACE_TYPE_2025, task_spelling
from synth.rows import Frames
from synth.trace_style import (
    DUR_TAILS,
    LAUNCH_LEAD_NS,
    MODEL_ID_NONE,
    SUBTASK_NONE,
    Style,
    json_object,
)

# ------------------------------------------------------------------ hardware X events


def hardware_frame(frames: Frames, version: str) -> pl.DataFrame:
    """Kernels and tasks as Ascend Hardware events, sorted by start."""
    k = frames.kernels.filter(~pl.col("is_comm"))
    if version == "2023":
        ktype = pl.lit("Other")
    elif version == "2025":
        ktype = pl.col("core").replace(TRACE_TYPE_2025)
    else:
        ktype = pl.col("core")
    kernels = k.select(
        "name",
        pl.col("stream_id").alias("tid"),
        "start_ns",
        "dur_ns",
        ktype.alias("task_type"),
        "task_id",
        pl.when(pl.col("core").str.starts_with("MIX_"))
        .then(0)
        .otherwise(SUBTASK_NONE)
        .cast(pl.Int64)
        .alias("subtask"),
        "conn_id",
        pl.lit(True).alias("is_kernel"),
    )
    kinds = frames.tasks["kind"].unique().to_list()
    spell = {kind: task_spelling(kind) for kind in kinds}
    if version == "2023":
        ttype = pl.lit("Other")
    else:
        which = {
            kind: (s.trace_type if version == "2025" else s.msprof_type)
            for kind, s in spell.items()
        }
        ttype = (
            pl.col("kind").replace_strict(which, return_dtype=pl.String)
            if which
            else pl.col("kind")
        )
    names = {kind: s.trace_name for kind, s in spell.items()}
    tasks = frames.tasks.select(
        (
            pl.col("kind").replace_strict(names, return_dtype=pl.String)
            if names
            else pl.col("kind")
        ).alias("name"),
        pl.col("stream_id").alias("tid"),
        "start_ns",
        "dur_ns",
        ttype.alias("task_type"),
        "task_id",
        pl.lit(SUBTASK_NONE, pl.Int64).alias("subtask"),
        "conn_id",
        pl.lit(False).alias("is_kernel"),
    )
    both = pl.concat([kernels, tasks]).sort(["start_ns", "conn_id"])
    tails = {i: tail for i, tail in enumerate(DUR_TAILS)}
    tail = (pl.col("conn_id") % len(DUR_TAILS)).replace_strict(tails, return_dtype=pl.String)
    return both.with_columns(
        pl.when(pl.col("is_kernel")).then(tail).otherwise(pl.lit("")).alias("tail")
    )


def hardware_lines(hw: pl.DataFrame, style: Style) -> list[str]:
    if hw.height == 0:
        return []
    c = pl.col
    ts = fmt.json_str_expr(fmt.us3_expr(c("start_ns")))
    args = json_object(
        [
            ("Model Id", pl.lit(str(MODEL_ID_NONE))),
            ("Task Type", fmt.json_str_expr(c("task_type"))),
            (style.stream_key, c("tid").cast(pl.String)),
            ("Task Id", c("task_id").cast(pl.String)),
            ("Batch Id", pl.lit("0")),
            ("Subtask Id", c("subtask").cast(pl.String)),
            ("connection_id", c("conn_id").cast(pl.String)),
        ],
        style,
    )
    head = [
        ("name", fmt.json_str_expr(c("name"))),
        ("pid", pl.lit(str(style.hardware_pid))),
        ("tid", c("tid").cast(pl.String)),
        ("ts", ts),
        ("dur", fmt.us_fine_expr(c("dur_ns"), c("tail"))),
    ]
    if style.version == "2026":
        pairs = [*head, ("ph", pl.lit('"X"')), ("args", args)]
    else:
        pairs = [*head, ("args", args), ("ph", pl.lit('"X"'))]
    x = hw.select(json_object(pairs, style).alias("e"))
    # HostToDevice flow ends on every kernel (the launch's flow start is on the CANN side)
    flow_id = fmt.json_str_expr(c("conn_id").cast(pl.String))
    flow_name = fmt.json_str_expr(
        pl.concat_str([pl.lit("HostToDevice"), c("conn_id").cast(pl.String)])
    )
    if style.version == "2026":
        fpairs = [
            ("name", flow_name),
            ("pid", pl.lit(str(style.hardware_pid))),
            ("tid", c("tid").cast(pl.String)),
            ("ph", pl.lit('"f"')),
            ("cat", pl.lit('"HostToDevice"')),
            ("id", flow_id),
            ("ts", ts),
            ("bp", pl.lit('"e"')),
        ]
    else:
        fpairs = [
            ("name", flow_name),
            ("ph", pl.lit('"f"')),
            ("id", flow_id),
            ("ts", ts),
            ("cat", pl.lit('"HostToDevice"')),
            ("pid", pl.lit(str(style.hardware_pid))),
            ("tid", c("tid").cast(pl.String)),
            ("bp", pl.lit('"e"')),
        ]
    f = hw.filter(c("is_kernel")).select(json_object(fpairs, style).alias("e"))
    return pl.concat([x, f]).to_series().to_list()


# ------------------------------------------------------------------ per-kernel host side


def host_lines(
    frames: Frames,
    style: Style,
    *,
    python_pid: int,
    launch_tid: int,
    with_cann: bool,
    with_python: bool,
) -> list[str]:
    """Flow starts (and, above Level0, CANN ``Node@launch`` events) for every kernel."""
    k = frames.kernels.filter(~pl.col("is_comm"))
    if k.height == 0:
        return []
    c = pl.col
    launch = c("start_ns") - LAUNCH_LEAD_NS
    launch_ts = fmt.json_str_expr(fmt.us3_expr(launch))
    conn = c("conn_id").cast(pl.String)
    cann, tid = pl.lit(str(style.cann_pid)), pl.lit(str(launch_tid))
    pieces: list[pl.DataFrame] = []
    if with_cann:
        args = json_object(
            [
                ("Thread Id", tid),
                ("Mode", pl.lit('"launch"')),
                ("level", pl.lit('"node"')),
                ("id", pl.lit('"0"')),
                ("item_id", fmt.json_str_expr(c("name"))),
                ("connection_id", conn),
            ],
            style,
        )
        head = [
            ("name", pl.lit('"Node@launch"')),
            ("pid", cann),
            ("tid", tid),
            ("ts", launch_ts),
            ("dur", pl.lit("12.31")),
        ]
        tail = (
            [("ph", pl.lit('"X"')), ("args", args)]
            if style.version == "2026"
            else [("args", args), ("ph", pl.lit('"X"'))]
        )
        pieces.append(k.select(json_object(head + tail, style).alias("e")))
    name = fmt.json_str_expr(pl.concat_str([pl.lit("HostToDevice"), conn]))
    if style.version == "2026":
        spairs = [
            ("name", name),
            ("pid", cann),
            ("tid", tid),
            ("ph", pl.lit('"s"')),
            ("cat", pl.lit('"HostToDevice"')),
            ("id", fmt.json_str_expr(conn)),
            ("ts", launch_ts),
        ]
    else:
        spairs = [
            ("name", name),
            ("ph", pl.lit('"s"')),
            ("cat", pl.lit('"HostToDevice"')),
            ("id", fmt.json_str_expr(conn)),
            ("pid", cann),
            ("tid", tid),
            ("ts", launch_ts),
        ]
    pieces.append(k.select(json_object(spairs, style).alias("e")))
    if with_python:
        # torch op -> kernel flow: id is the kernel's start in ns, as in real files
        start_id = c("start_ns").cast(pl.String)
        for phase, pid, tid_, ts in (
            (
                "s",
                str(python_pid),
                str(python_pid),
                fmt.json_str_expr(fmt.us3_expr(launch - 4_300)),
            ),
            ("f", str(style.hardware_pid), None, fmt.json_str_expr(fmt.us3_expr(c("start_ns")))),
        ):
            tid_expr = pl.lit(tid_) if tid_ is not None else c("stream_id").cast(pl.String)
            pairs = [
                ("ph", pl.lit(json.dumps(phase))),
                ("bp", pl.lit('"e"')),
                ("name", pl.lit('"torch_to_npu"')),
                ("id", start_id),
                ("pid", pl.lit(pid)),
                ("tid", tid_expr),
                ("ts", ts),
                ("cat", pl.lit('"async_npu"')),
            ]
            pieces.append(k.select(json_object(pairs, style).alias("e")))
    return pl.concat(pieces).to_series().to_list()
