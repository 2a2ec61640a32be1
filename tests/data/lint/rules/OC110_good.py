# ruff: noqa
# OC110 fixed: string tags and tagged events, which dynamo traces without stream objects.
import torch
import torch_npu

ngx = torch.npu.npugraph_ex


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.done = ngx.scope.npu_create_tagged_event(tag="done")

    def forward(self, x, w):
        with ngx.scope.npu_stream_switch("side"):
            y = torch.mm(x, w)
            ngx.scope.npu_tagged_event_record(self.done)
        ngx.scope.npu_tagged_event_wait(self.done)
        return x + y


model = torch.compile(Layer(), backend="npugraph_ex", fullgraph=True, dynamic=True)
