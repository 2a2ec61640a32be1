"""``lint --explain RULE``: why a rule exists, with a wrong and a right example (docs/lint-rules.md
at more length). Each example is a whole module, which tests/test_lint.py lints: every
wrong one gives its rule, every right one does not."""

from __future__ import annotations

import textwrap

_NGX = 'm = torch.compile(f, backend="npugraph_ex")'
_GE = "m = torch.compile(f, backend=tng.get_npu_backend())"

# rule -> (why, wrong, right)
EXPLAIN: dict[str, tuple[str, str, str]] = {
    "OC101": (
        "The GE family (torchair.scope / torchair.ops string tags) and the explicit family "
        "(torch.npu.Stream / stream / Event, npugraph_ex.scope) are two mechanisms; on any "
        "path one of them is ignored, so the ordering you wrote is not the one that runs. "
        "One module, one family.",
        f"import torch\nimport torchair as tng\n\ndone = torch.npu.Event()\n\n"
        f'def f(x):\n    with tng.scope.npu_stream_switch("side"):\n        y = x * 2\n'
        f"    done.wait()\n    return x + y\n\n{_GE}\n",
        "import torch\nimport torchair as tng\n\ndef f(x):\n"
        '    with tng.scope.npu_stream_switch("side"):\n'
        f"        y = x * 2\n    tng.scope.npu_wait_tensor(x, y)\n    return x + y\n\n{_GE}\n",
    ),
    "OC102": (
        "GE tagged events live in torchair.ops, the GE switch / wait / core limit in "
        "torchair.scope, npugraph_ex's in torch.npu.npugraph_ex.scope. A guessed name fails "
        "at import, or a try/except fallback silently drops the side stream.",
        "from torchair.ops import npu_wait_tensor\n",
        "from torchair.scope import npu_wait_tensor\n",
    ),
    "OC103": (
        "record_stream delays the freeing of a short-lived tensor that another stream still "
        "reads. Weights and resident caches are never freed during a step: the call only "
        "adds bookkeeping (and a graph node) to every step.",
        "import torch\n\ndef f(self, x, kv_cache):\n    with torch.npu.stream(self.side):\n"
        "        y = self.proj(x)\n        kv_cache[0].record_stream(self.side)\n"
        "    torch.npu.current_stream().wait_stream(self.side)\n    return y\n",
        "import torch\n\ndef f(self, x):\n    with torch.npu.stream(self.side):\n"
        "        y = self.proj(x)\n        x.record_stream(self.side)\n"
        "    torch.npu.current_stream().wait_stream(self.side)\n    return y\n",
    ),
    "OC104": (
        "Streams run independently: without a join the main stream may read the side result "
        "before it is written (wrong numbers, no error). Reads of metadata only (.shape, "
        "len(), a helper that reads only those) and reads on a branch exclusive with the "
        "side block's (if flag: / elif not flag:) need no join.",
        "import torch\n\nside = torch.npu.Stream()\n\ndef f(x, w):\n"
        "    with torch.npu.stream(side):\n        s = x @ w\n    out = x + s\n    return out\n",
        "import torch\n\nside = torch.npu.Stream()\n\ndef f(x, w):\n"
        "    with torch.npu.stream(side):\n        s = x @ w\n    n = s.shape[0]\n"
        "    torch.npu.current_stream().wait_stream(side)\n    out = x[:n] + s\n    return out\n",
    ),
    "OC105": (
        "A core limit shares the cores between streams that run at the same time; with no "
        "side stream it only slows the limited operators down. A project wrapper of "
        "limit_core_num is judged where it is used.",
        "import torch\nimport torchair as tng\n\ndef f(q, k):\n"
        "    with tng.scope.limit_core_num(12, 24):\n        return torch.matmul(q, k)\n"
        f"\n{_GE}\n",
        "import torch\nimport torchair as tng\n\ndef f(q, k, s):\n"
        '    with tng.scope.npu_stream_switch("2"):\n'
        "        with tng.scope.limit_core_num(12, 24):\n            t = torch.sigmoid(s)\n"
        f"    return torch.matmul(q, k), t\n\n{_GE}\n",
    ),
    "OC107": (
        "TorchAir's string tags and tagged events label nodes of a TorchAir graph; eager code "
        "has no such graph. Eager code uses stream and event objects (or lint the TorchAir "
        "runner with the model, or declare `# overlap-check: path=ge`).",
        'import torchair\n\ndef f(x, w):\n    with torchair.scope.npu_stream_switch("2"):\n'
        "        y = x @ w\n    return y\n",
        "import torch\n\nside = torch.npu.Stream()\n\ndef f(x, w):\n"
        "    with torch.npu.stream(side):\n        y = x @ w\n"
        "    torch.npu.current_stream().wait_stream(side)\n    return y\n",
    ),
    "OC108": (
        "Each backend acts on its own family: TorchAir's scope attributes are read by the "
        "TorchAir compiler, stream objects by the npugraph_ex capture. Through the other "
        "backend the switch is dropped and the plan runs on one stream. In a module compiled "
        "both ways each function is judged by the compile that reaches it.",
        "import torch\nimport torchair as tng\n\ndef f(x):\n"
        '    with tng.scope.npu_stream_switch("2"):\n'
        f"        return torch.sigmoid(x)\n\n{_NGX}\n",
        'import torch\n\ndef f(x):\n    with torch.npu.npugraph_ex.scope.npu_stream_switch("2"):\n'
        f"        return torch.sigmoid(x)\n\n{_NGX}\n",
    ),
    "OC110": (
        "Under npugraph_ex with fullgraph=True, dynamic=True dynamo must trace stream and "
        "event objects and cannot proxy them: compilation fails or the graph breaks. The "
        "string-tag API traces without objects.",
        "import torch\n\nside = torch.npu.Stream()\n"
        'm = torch.compile(None, backend="npugraph_ex", fullgraph=True, dynamic=True)\n',
        "import torch\n\ndef f(x):\n"
        '    with torch.npu.npugraph_ex.scope.npu_stream_switch("side"):\n'
        '        return x * 2\n\nm = torch.compile(f, backend="npugraph_ex", fullgraph=True, '
        "dynamic=True)\n",
    ),
    "OC201": (
        "CUDA streams run independently: a result made under torch.cuda.stream(s) and read "
        "on the current stream before wait_stream(s) or an event wait may be read before "
        "it is written.",
        "import torch\n\nside = torch.cuda.Stream()\n\ndef f(x, w):\n"
        "    side.wait_stream(torch.cuda.current_stream())\n    with torch.cuda.stream(side):\n"
        "        s = x @ w\n    return x + s\n",
        "import torch\n\nside = torch.cuda.Stream()\n\ndef f(x, w):\n"
        "    side.wait_stream(torch.cuda.current_stream())\n    with torch.cuda.stream(side):\n"
        "        s = x @ w\n    torch.cuda.current_stream().wait_stream(side)\n    return x + s\n",
    ),
    "OC202": (
        "A new stream does not wait for the current one: a side stream that reads a tensor "
        "the current stream has just computed may read it before it is written. Wait first: "
        "side.wait_stream(torch.cuda.current_stream()), or an event recorded after the "
        "producer and waited inside the block.",
        "import torch\n\nside = torch.cuda.Stream()\n\ndef f(x, w):\n    h = torch.relu(x)\n"
        "    with torch.cuda.stream(side):\n        y = h @ w\n        h.record_stream(side)\n"
        "    torch.cuda.current_stream().wait_stream(side)\n    return y\n",
        "import torch\n\nside = torch.cuda.Stream()\n\ndef f(x, w):\n    h = torch.relu(x)\n"
        "    side.wait_stream(torch.cuda.current_stream())\n    with torch.cuda.stream(side):\n"
        "        y = h @ w\n        h.record_stream(side)\n"
        "    torch.cuda.current_stream().wait_stream(side)\n    return y\n",
    ),
    "OC203": (
        "The caching allocator reuses a freed tensor's memory on the stream that allocated "
        "it at once. A tensor made on the current stream, read on a side stream and then "
        "dropped (reassigned, deleted, or at the function's end) before a join can be "
        "overwritten while the side stream still reads it. record_stream(side) prevents it.",
        "import torch\n\ncopy = torch.cuda.Stream()\n\ndef f(x, host):\n"
        "    buf = torch.cat([x, x])\n    copy.wait_stream(torch.cuda.current_stream())\n"
        "    with torch.cuda.stream(copy):\n        host.copy_(buf, non_blocking=True)\n"
        "    return host\n",
        "import torch\n\ncopy = torch.cuda.Stream()\n\ndef f(x, host):\n"
        "    buf = torch.cat([x, x])\n    copy.wait_stream(torch.cuda.current_stream())\n"
        "    with torch.cuda.stream(copy):\n        host.copy_(buf, non_blocking=True)\n"
        "        buf.record_stream(copy)\n    return host\n",
    ),
    "OC204": (
        "As OC103, in CUDA code: weights and resident caches are never freed during a "
        "step, so record_stream on them only adds allocator bookkeeping to every step.",
        "import torch\n\ndef f(self, x):\n    with torch.cuda.stream(self.side):\n"
        "        y = self.proj(x)\n        self.proj.weight.record_stream(self.side)\n"
        "    torch.cuda.current_stream().wait_stream(self.side)\n    return y\n",
        "import torch\n\ndef f(self, x):\n    self.side.wait_stream(torch.cuda.current_stream())\n"
        "    with torch.cuda.stream(self.side):\n        y = self.proj(x)\n"
        "        x.record_stream(self.side)\n"
        "    torch.cuda.current_stream().wait_stream(self.side)\n    return y\n",
    ),
}


def explain(rule: str, summary: str) -> str:
    """The text ``lint --explain RULE`` prints."""
    why, wrong, right = EXPLAIN[rule]
    why = textwrap.fill(why, width=88)
    wrong, right = textwrap.indent(wrong, "    "), textwrap.indent(right, "    ")
    return f"{rule}: {summary}\n\n{why}\n\nWrong:\n\n{wrong}\nRight:\n\n{right}"
