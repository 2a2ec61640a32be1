# ruff: noqa
# OC107 fixed: eager code orders streams with torch.npu objects.
import torch
import torch_npu

side = torch.npu.Stream()
ready = torch.npu.Event()


def step(x, w):
    ready.record()
    with torch.npu.stream(side):
        ready.wait(side)
        y = torch.mm(x, w)
    torch.npu.current_stream().wait_stream(side)
    return y * 2


out = step(torch.ones(4, 4).npu(), torch.ones(4, 4).npu())
