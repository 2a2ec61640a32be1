# ruff: noqa
# OC204: record_stream on weights and caches, which are never freed during a step.
import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.side = torch.cuda.Stream()

    def forward(self, x, kv_cache):
        with torch.cuda.stream(self.side):
            y = self.proj(x)
            self.proj.weight.record_stream(self.side)  # expect: OC204
            kv_cache[0].record_stream(self.side)  # expect: OC204
        torch.cuda.current_stream().wait_stream(self.side)
        return y
