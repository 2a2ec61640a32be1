# ruff: noqa
# OC105 fixed: the limit applies to side-stream work that overlaps the main stream.
import torch
import torchair as tng


class Attention(torch.nn.Module):
    def forward(self, q, k, v, shortcut):
        with tng.scope.npu_stream_switch("shortcut"):
            with tng.scope.limit_core_num(12, 24):
                side = torch.nn.functional.silu(shortcut)
        scores = torch.matmul(q, k.transpose(-1, -2))
        return torch.matmul(scores.softmax(-1), v) + side


model = torch.compile(Attention(), backend=tng.get_npu_backend())
