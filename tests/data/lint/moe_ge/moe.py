# ruff: noqa
"""DeepSeek-style MoE block on the GE graph path (compiled by runner.py).

The shared expert runs on side stream "11" beside the router and the routed
experts' GroupedMatmul, which hide it. With `use_aclgraph_event` the block also
orders the streams with TorchAir tagged events.

The lines marked `# expect:` are deliberate mistakes for overlap-check's lint tests.
"""

import torch
import torch.nn.functional as F
import torch_npu
import torchair as tng
from torchair import scope

from .stream_utils import npu_stream_switch, npu_wait_tensor

SHARED_STREAM = "11"


class SharedExpert(torch.nn.Module):
    def __init__(self, hidden: int, inter: int):
        super().__init__()
        self.gate_up_proj = torch.nn.Linear(hidden, 2 * inter, bias=False)
        self.down_proj = torch.nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class MoE(torch.nn.Module):
    def __init__(
        self,
        hidden=7168,
        inter=2048,
        n_experts=256,
        top_k=8,
        enable_multi_streams=True,
        use_aclgraph_event=False,
    ):
        super().__init__()
        self.top_k = top_k
        self.gate = torch.nn.Linear(hidden, n_experts, bias=False)
        self.w13 = torch.nn.Parameter(torch.empty(n_experts, 2 * inter, hidden))
        self.w2 = torch.nn.Parameter(torch.empty(n_experts, hidden, inter))
        self.shared_experts = SharedExpert(hidden, inter)
        self.enable_multi_streams = enable_multi_streams
        self.use_aclgraph_event = use_aclgraph_event
        self.shared_ready = tng.ops.npu_create_tagged_event(tag="moe_shared_ready")
        self.shared_done = torch.npu.Event()  # expect: OC101

    def route(self, x):
        logits = self.gate(x).float()
        topk_weight, topk_ids = torch.topk(logits.softmax(dim=-1), self.top_k, dim=-1)
        topk_weight = topk_weight / topk_weight.sum(dim=-1, keepdim=True)
        return topk_weight.to(x.dtype), topk_ids.int()

    def routed_experts(self, x, topk_weight, topk_ids):
        tokens = x.shape[0]
        expanded_x, expanded_row_idx, expert_tokens, _ = torch_npu.npu_moe_init_routing_v2(
            x, topk_ids, active_num=tokens * self.top_k, expert_num=self.w13.shape[0]
        )
        gate_up = torch_npu.npu_grouped_matmul(
            [expanded_x], [self.w13], group_list=expert_tokens, split_item=2, group_type=0
        )[0]
        act = torch_npu.npu_swiglu(gate_up)
        down = torch_npu.npu_grouped_matmul(
            [act], [self.w2], group_list=expert_tokens, split_item=2, group_type=0
        )[0]
        return torch_npu.npu_moe_finalize_routing(
            down, None, None, None, topk_weight, expanded_row_idx, topk_ids
        )

    def forward(self, hidden_states):
        x = hidden_states.view(-1, hidden_states.shape[-1])
        multi = self.enable_multi_streams
        if self.use_aclgraph_event:
            # x is produced on the main stream and read on stream "11".
            tng.ops.npu_record_tagged_stream(x, SHARED_STREAM)
            tng.ops.npu_tagged_event_record(self.shared_ready)
        with npu_stream_switch(multi, SHARED_STREAM):
            if self.use_aclgraph_event:
                tng.ops.npu_tagged_event_wait(self.shared_ready)
            # Leave cores to the routed experts' GroupedMatmul running beside it.
            with scope.limit_core_num(8, 16):
                shared_out = self.shared_experts(x)
            if self.use_aclgraph_event:
                tng.ops.npu_record_tagged_stream(self.w13, SHARED_STREAM)  # expect: OC103
                scope.npu_tagged_event_record(self.shared_done)  # expect: OC102
        topk_weight, topk_ids = self.route(x)
        routed_out = self.routed_experts(x, topk_weight, topk_ids)
        if self.use_aclgraph_event:
            tng.ops.npu_tagged_event_wait(self.shared_done)
        routed_out = npu_wait_tensor(multi, routed_out, shared_out)
        return (routed_out + shared_out).view_as(hidden_states)
