# ruff: noqa
# OC108: explicit Stream objects under the TorchAir (GE) backend.
import torch
import torch_npu as tnpu
from torchair import get_npu_backend

side = tnpu.npu.Stream()  # expect: OC108


def layer(x, w, shortcut):
    with tnpu.npu.stream(side):  # expect: OC108
        s = torch.sigmoid(shortcut)
    tnpu.npu.current_stream().wait_stream(side)
    return torch.mm(x, w) * s


compiled = torch.compile(layer, backend=get_npu_backend())
