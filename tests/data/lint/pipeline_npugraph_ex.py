# ruff: noqa
"""Micro-batch pipelining on npugraph_ex: while the main stream runs micro-batch
1's attention, the side stream runs micro-batch 0's MoE.

The lines marked `# expect:` are deliberate mistakes for overlap-check's lint tests.
"""

import torch
import torch_npu


class PipelinedLayer(torch.nn.Module):
    def __init__(self, attn, moe, kv_cache):
        super().__init__()
        self.attn = attn
        self.moe = moe
        self.kv_cache = kv_cache
        self.side = torch.npu.Stream()
        self.attn_done = torch.npu.Event()

    def forward(self, mb0, mb1):
        main = torch.npu.current_stream()
        h0 = self.attn(mb0, self.kv_cache)
        self.attn_done.record()
        with torch.npu.stream(self.side):
            self.attn_done.wait(self.side)
            with torch.npu.npugraph_ex.scope.limit_core_num(16, 32):
                out0 = self.moe(h0)
            h0.record_stream(self.side)
            self.kv_cache.record_stream(self.side)  # expect: OC103
        h1 = self.attn(mb1, self.kv_cache)
        out1 = self.moe(h1)
        main.wait_stream(self.side)
        return torch.cat([out0, out1])

    def forward_decode(self, mb0, mb1):
        h0 = self.attn(mb0, self.kv_cache)
        self.side.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(self.side):
            out0 = self.moe(h0)
            h0.record_stream(self.side)
        h1 = self.attn(mb1, self.kv_cache)
        mixed = h1 + out0  # expect: OC104
        torch.npu.current_stream().wait_stream(self.side)
        return self.moe(mixed)


model = torch.compile(
    PipelinedLayer(None, None, None), backend="npugraph_ex", fullgraph=False, dynamic=False
)
