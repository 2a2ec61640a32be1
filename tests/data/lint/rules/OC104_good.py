# ruff: noqa
# OC104 fixed: the main stream waits for the side stream (or an event) before the read.
import torch
import torch_npu


class MoE(torch.nn.Module):
    def __init__(self, shared, routed):
        super().__init__()
        self.shared, self.routed = shared, routed
        self.side = torch.npu.Stream()
        self.main = torch.npu.current_stream()
        self.done = torch.npu.Event()

    def forward(self, x):
        with torch.npu.stream(self.side):
            shared_out = self.shared(x)
        routed_out = self.routed(x)
        self.main.wait_stream(self.side)
        out = routed_out + shared_out
        return out

    def forward_event(self, x):
        with torch.npu.stream(self.side):
            shared_out = self.shared(x)
            self.done.record()
        routed_out = self.routed(x)
        self.done.wait()
        return routed_out * shared_out

    def back_on_main(self, x):
        # Switching (back) to the main stream is not a side stream.
        with torch.npu.stream(self.main):
            y = self.shared(x)
        return self.routed(x) + y


model = torch.compile(MoE(None, None), backend="npugraph_ex")
