# ruff: noqa
# OC203: `buf` is allocated on the current stream, read on the side stream, then dropped
# while the side stream may still read it: the allocator reuses its memory at once.
import torch

copy_stream = torch.cuda.Stream()


def offload(x, host):
    buf = torch.cat([x, x], dim=-1)
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host.copy_(buf, non_blocking=True)  # expect: OC203
    return host


def reassigned(x, host):
    buf = torch.mul(x, 2)
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host.copy_(buf, non_blocking=True)  # expect: OC203
    buf = x + 1
    return buf
