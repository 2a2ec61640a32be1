# ruff: noqa
"""The GE (TorchAir) path as its documentation shows it: a tagged side stream,
npu_wait_tensor for ordering, and an operator core limit inside the switch.
Expected: no finding."""

import torch
import torch_npu
import torchair as tng
from torchair.configs.compiler_config import CompilerConfig


class TwoBranches(torch.nn.Module):
    def forward(self, a, b, c, d):
        total = torch.add(a, b)
        with tng.scope.npu_stream_switch("1"):
            tng.scope.npu_wait_tensor(d, total)  # the side matmul starts after `total`
            with tng.scope.limit_core_num(12, 24):
                side = torch.mm(c, d)
        main = torch.mm(c, d)
        with tng.scope.npu_stream_switch("2"):
            tng.scope.npu_wait_tensor(d, side)
            tail = torch.add(c, d)
        return total, side, main, tail


config = CompilerConfig()
config.ge_config.aicore_num = "24|48"
npu_backend = tng.get_npu_backend(compiler_config=config)
model = torch.compile(TwoBranches(), backend=npu_backend, dynamic=False, fullgraph=True)
