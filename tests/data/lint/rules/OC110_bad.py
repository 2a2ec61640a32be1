# ruff: noqa
# OC110: Stream/Event objects under npugraph_ex with fullgraph=True, dynamic=True.
import torch
import torch_npu


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.npu.Stream()  # expect: OC110
        self.done = torch.npu.Event()  # expect: OC110

    def forward(self, x, w):
        with torch.npu.stream(self.side):
            y = torch.mm(x, w)
            self.done.record()
        self.done.wait()
        return x + y


model = torch.compile(Layer(), backend="npugraph_ex", fullgraph=True, dynamic=True)
