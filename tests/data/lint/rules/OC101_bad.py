# ruff: noqa
# OC101: a GE-path module (TorchAir backend) that also uses an explicit torch.npu.Event.
import torch
import torchair as tng


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.done = torch.npu.Event()  # expect: OC101

    def forward(self, x, w):
        with tng.scope.npu_stream_switch("side"):
            y = torch.matmul(x, w)
            self.done.record()
        self.done.wait()
        return x + y


backend = tng.get_npu_backend(compiler_config=tng.CompilerConfig())
model = torch.compile(Block(), backend=backend)
