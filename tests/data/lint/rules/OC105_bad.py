# ruff: noqa
# OC105: a core limit with nothing running beside it.
import torch
import torchair as tng


class Attention(torch.nn.Module):
    def forward(self, q, k, v):
        with tng.scope.limit_core_num(12, 24):  # expect: OC105
            scores = torch.matmul(q, k.transpose(-1, -2))
        return torch.matmul(scores.softmax(-1), v)


model = torch.compile(Attention(), backend=tng.get_npu_backend())
