# ruff: noqa
# OC102 fixed: tagged events from torchair.ops, wait_tensor from torchair.scope.
import torch
import torchair
from torchair.scope import npu_wait_tensor

config = torchair.CompilerConfig()
config.mode = "reduce-overhead"


def f(x, y):
    with torchair.scope.npu_stream_switch("1"):
        z = torch.mm(x, x)
        torchair.ops.npu_record_tagged_stream(z, "1")
    npu_wait_tensor(y, z)
    return y + 1, z


compiled = torch.compile(f, backend=torchair.get_npu_backend(compiler_config=config))
