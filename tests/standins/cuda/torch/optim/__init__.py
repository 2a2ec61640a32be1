"""Stand-in ``torch.optim``: an optimizer whose step runs the global post hooks."""

from __future__ import annotations

from torch.optim.optimizer import Optimizer

SGD = Optimizer
