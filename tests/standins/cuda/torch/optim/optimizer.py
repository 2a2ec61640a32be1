"""Stand-in ``torch.optim.optimizer``: ``register_optimizer_step_post_hook`` as documented
(``hook(optimizer, args, kwargs) -> None``, called after every optimizer's step)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_POST_HOOKS: dict[int, Callable[..., None]] = {}


class _Handle:
    def __init__(self, key: int) -> None:
        self.key = key

    def remove(self) -> None:
        _POST_HOOKS.pop(self.key, None)


def register_optimizer_step_post_hook(hook: Callable[..., None]) -> _Handle:
    key = len(_POST_HOOKS) + 1
    _POST_HOOKS[key] = hook
    return _Handle(key)


class Optimizer:
    def __init__(self, params: Any = (), **defaults: Any) -> None:
        self.params = list(params)

    def step(self, closure: Any = None) -> None:
        for hook in list(_POST_HOOKS.values()):
            hook(self, (), {})
