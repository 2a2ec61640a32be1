# ruff: noqa
"""Attention with a compressed KV projection (GE graph path, compiled by runner.py).

The core limit below is a leftover from an experiment: nothing in this module
runs on a side stream, so it only slows the projection down.
"""

import torch
import torch_npu
import torchair as tng


class Attention(torch.nn.Module):
    def __init__(self, hidden=7168, heads=16, head_dim=128, kv_lora_rank=512):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.q_proj = torch.nn.Linear(hidden, heads * head_dim, bias=False)
        self.kv_a_proj = torch.nn.Linear(hidden, kv_lora_rank, bias=False)
        self.o_proj = torch.nn.Linear(heads * head_dim, hidden, bias=False)

    def forward(self, x, k_cache, v_cache, positions, actual_seq_lengths):
        bsz = x.shape[0]
        q = self.q_proj(x).view(bsz, -1, self.heads, self.head_dim)
        with tng.scope.limit_core_num(20, 40):  # expect: OC105
            kv = self.kv_a_proj(x)
        torch_npu.scatter_update_(k_cache, positions, kv, -2)
        attn, _ = torch_npu.npu_fused_infer_attention_score(
            q,
            k_cache,
            v_cache,
            num_heads=self.heads,
            input_layout="BSND",
            actual_seq_lengths=actual_seq_lengths,
        )
        return self.o_proj(attn.view(bsz, -1, self.heads * self.head_dim))
