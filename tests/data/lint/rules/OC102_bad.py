# ruff: noqa
# OC102: tagged events under torchair.scope, wait_tensor under torchair.ops.
import torch
import torchair
from torchair.ops import npu_wait_tensor  # expect: OC102

config = torchair.CompilerConfig()
config.mode = "reduce-overhead"


def f(x, y):
    with torchair.scope.npu_stream_switch("1"):
        z = torch.mm(x, x)
        torchair.scope.npu_record_tagged_stream(z, "1")  # expect: OC102
    npu_wait_tensor(y, z)
    return y + 1, z


compiled = torch.compile(f, backend=torchair.get_npu_backend(compiler_config=config))
