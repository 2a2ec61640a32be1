# ruff: noqa
# OC203 fixed: record_stream keeps the memory until the side stream is done with it,
# or the current stream joins the side stream before the tensor goes.
import torch

copy_stream = torch.cuda.Stream()


def offload(x, host):
    buf = torch.cat([x, x], dim=-1)
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host.copy_(buf, non_blocking=True)
        buf.record_stream(copy_stream)
    return host


def joined(x, host):
    buf = torch.mul(x, 2)
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host.copy_(buf, non_blocking=True)
    torch.cuda.current_stream().wait_stream(copy_stream)
    buf = x + 1
    return buf


def kept(x, host):
    buf = torch.mul(x, 2)
    copy_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(copy_stream):
        host.copy_(buf, non_blocking=True)
    return buf  # handed to the caller: still alive
