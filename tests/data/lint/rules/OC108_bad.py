# ruff: noqa
# OC108: the GE stream switch under backend="npugraph_ex".
import torch
from torchair import scope


def layer(x, w, shortcut):
    with scope.npu_stream_switch("2"):  # expect: OC108
        s = torch.sigmoid(shortcut)
    scope.npu_wait_tensor(x, s)  # expect: OC108
    return torch.mm(x, w) * s


compiled = torch.compile(layer, backend="npugraph_ex", dynamic=False)
