# ruff: noqa
# OC104: the shared expert's output is read on the main stream before any wait.
import torch
import torch_npu


class MoE(torch.nn.Module):
    def __init__(self, shared, routed):
        super().__init__()
        self.shared, self.routed = shared, routed
        self.side = torch.npu.Stream()

    def forward(self, x):
        self.side.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(self.side):
            shared_out = self.shared(x)
        routed_out = self.routed(x)
        return routed_out + shared_out  # return: not judged (graph end joins)

    def forward_scaled(self, x):
        with torch.npu.stream(self.side):
            shared_out = self.shared(x)
        out = self.routed(x) + shared_out  # expect: OC104
        return out


model = torch.compile(MoE(None, None), backend="npugraph_ex")
