"""Realistic Ascend profiler output from scenarios whose answer is known by construction.

Writers reproduce torch_npu result directories (kernel_details.csv, trace_view.json,
step_trace_time.csv, task_time.csv, the .db export, profiler_info, PROF_* with
device info) and msprof CLI PROF_* directories, in the 2023 / 2025 / 2026 formats
at Level0 / Level1 / Level2; ``synth.kineto`` writes PyTorch profiler (Kineto) traces
of a CUDA workload. ``scenarios`` holds the built-in scenarios;
``python -m synth DIR`` regenerates the repository's fixtures.
"""

from __future__ import annotations

import synth.scenarios as scenarios
from synth.big import big_capture, big_frames
from synth.expected import (
    Built,
    Expected,
    ExpectedContention,
    ExpectedPlan,
    ExpectedStream,
    ExpectedStreamPair,
    ExpectedViolation,
)
from synth.layout import write_msprof_dir, write_result_dir, write_runs
from synth.model import CommOp, Kernel, Scenario, Task, Variant, op_type_of

__all__ = [
    "Built",
    "CommOp",
    "Expected",
    "ExpectedContention",
    "ExpectedPlan",
    "ExpectedStream",
    "ExpectedStreamPair",
    "ExpectedViolation",
    "Kernel",
    "Scenario",
    "Task",
    "Variant",
    "big_capture",
    "big_frames",
    "op_type_of",
    "scenarios",
    "write_msprof_dir",
    "write_result_dir",
    "write_runs",
]
