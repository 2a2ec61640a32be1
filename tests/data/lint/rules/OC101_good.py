# ruff: noqa
# OC101 fixed: one family (GE) for both the switch and the ordering.
import torch
import torchair as tng


class Block(torch.nn.Module):
    def forward(self, x, w):
        with tng.scope.npu_stream_switch("side"):
            y = torch.matmul(x, w)
        tng.scope.npu_wait_tensor(x, y)
        return x + y


backend = tng.get_npu_backend(compiler_config=tng.CompilerConfig())
model = torch.compile(Block(), backend=backend)
