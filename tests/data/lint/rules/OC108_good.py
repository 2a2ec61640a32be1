# ruff: noqa
# OC108 fixed: npugraph_ex's own string-tag switch under backend="npugraph_ex".
import torch
import torch_npu


def layer(x, w, shortcut):
    with torch.npu.npugraph_ex.scope.npu_stream_switch("2"):
        s = torch.sigmoid(shortcut)
    return torch.mm(x, w), s


compiled = torch.compile(layer, backend="npugraph_ex", dynamic=False)
