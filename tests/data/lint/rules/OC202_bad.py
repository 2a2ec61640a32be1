# ruff: noqa
# OC202: the side stream reads `h`, made on the current stream, without waiting for it.
import torch

side = torch.cuda.Stream()


def forward(x, w1, w2):
    h = torch.relu(x @ w1)
    with torch.cuda.stream(side):
        y = h @ w2  # expect: OC202
        h.record_stream(side)
    torch.cuda.current_stream().wait_stream(side)
    return y
