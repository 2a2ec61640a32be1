# ruff: noqa
# OC204 fixed: record_stream only on the short-lived activation the side stream reads.
import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.side = torch.cuda.Stream()

    def forward(self, x):
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            y = self.proj(x)
            x.record_stream(self.side)
        torch.cuda.current_stream().wait_stream(self.side)
        return y
