# ruff: noqa
"""The npugraph_ex path as its documentation shows it: explicit streams, events
and wait_stream for ordering, record_stream for a tensor shared across streams,
a stream-level core limit. Expected: no finding."""

import torch
import torch_npu


class TwoBranches(torch.nn.Module):
    def forward(self, a, b, c, d):
        first = torch.npu.Stream()
        second = torch.npu.Stream()
        ready = torch.npu.Event()
        side_done = torch.npu.Event()

        total = torch.add(a, b)
        shared = c + d  # made on the main stream, read on `first`
        ready.record()
        with torch.npu.stream(first):
            ready.wait(first)
            with torch.npu.npugraph_ex.scope.limit_core_num(12, 24):
                side = torch.mm(shared, d)
            side_done.record()
            shared.record_stream(first)
        main = torch.mm(c, d)
        with torch.npu.stream(second):
            side_done.wait(second)
            tail = torch.add(side, d)
        torch.npu.current_stream().wait_stream(second)
        return total, side, main, tail + main


model = torch.compile(TwoBranches().npu(), backend="npugraph_ex", fullgraph=False, dynamic=False)
