# ruff: noqa
"""Stream helpers shared by the decoder layers (GE graph mode).

A wrapper like this hides the API from the call sites: lint checks the calls
inside it, and never guesses what a call to the wrapper means.
"""

from contextlib import nullcontext

import torchair as tng


def npu_stream_switch(enabled: bool, tag: str):
    """Switch to stream `tag` when multi-stream is enabled, else do nothing."""
    return tng.scope.npu_stream_switch(tag) if enabled else nullcontext()


def npu_wait_tensor(enabled: bool, tensor, dependency):
    """Order `tensor`'s consumers after `dependency` when multi-stream is enabled."""
    return tng.scope.npu_wait_tensor(tensor, dependency) if enabled else tensor
