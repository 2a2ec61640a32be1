# ruff: noqa
# OC103 fixed: record_stream only on the short-lived activation the side stream reads.
import torch
import torch_npu


class Decoder(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        self.side = torch.npu.Stream()

    def forward(self, x, kv_cache):
        topk_weight = torch.softmax(x, dim=-1)  # an activation, whatever its name
        self.side.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(self.side):
            y = self.proj(topk_weight)
            topk_weight.record_stream(self.side)
        torch.npu.current_stream().wait_stream(self.side)
        return y


model = torch.compile(Decoder(64), backend="npugraph_ex")
