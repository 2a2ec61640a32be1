# ruff: noqa
"""Builds the decoder, compiles it with the TorchAir backend (GE graph), times decode steps."""

import torch
import torch_npu
import torchair
from torchair.configs.compiler_config import CompilerConfig


def build(model):
    config = CompilerConfig()
    config.experimental_config.frozen_parameter = True
    # A global core budget for the whole graph: not a per-operator limit.
    config.ge_config.aicore_num = "24|48"
    backend = torchair.get_npu_backend(compiler_config=config)
    return torch.compile(model, backend=backend, dynamic=False, fullgraph=True)


def time_steps(model, inputs, steps=10):
    # Timing events and device syncs outside the graph are not multi-stream code.
    start = torch.npu.Event(enable_timing=True)
    end = torch.npu.Event(enable_timing=True)
    torch.npu.synchronize()
    start.record()
    for _ in range(steps):
        model(inputs)
    end.record()
    torch.npu.synchronize()
    return start.elapsed_time(end) / steps
