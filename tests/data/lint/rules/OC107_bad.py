# ruff: noqa
# OC107: TorchAir tag-style calls in a module that is never graph-compiled.
import torch
import torch_npu
import torchair

ready = torchair.ops.npu_create_tagged_event(tag="ready")  # expect: OC107


def step(x, w):
    torchair.ops.npu_tagged_event_record(ready)  # expect: OC107
    with torchair.scope.npu_stream_switch("2"):  # expect: OC107
        torchair.ops.npu_tagged_event_wait(ready)  # expect: OC107
        y = torch.mm(x, w)
    return y


out = step(torch.ones(4, 4).npu(), torch.ones(4, 4).npu())
