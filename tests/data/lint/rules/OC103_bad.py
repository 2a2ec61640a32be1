# ruff: noqa
# OC103: record_stream on a weight and on a KV cache (both live for the whole run).
import torch
import torch_npu


class Decoder(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        self.side = torch.npu.Stream()

    def forward(self, x, kv_cache):
        self.side.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(self.side):
            y = self.proj(x)
            self.proj.weight.record_stream(self.side)  # expect: OC103
            kv_cache[0].record_stream(self.side)  # expect: OC103
        torch.npu.current_stream().wait_stream(self.side)
        return y


model = torch.compile(Decoder(64), backend="npugraph_ex")
