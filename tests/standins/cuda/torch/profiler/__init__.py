"""Stand-in for ``torch.profiler`` with the documented signatures (PyTorch 2.x).

``profile`` follows its schedule like the real one: ``start()`` takes action
``schedule(0)``, each ``step()`` the next; a cycle ending in RECORD_AND_SAVE, or
``stop()`` while recording, hands the profile to ``on_trace_ready``.
``tensorboard_trace_handler`` then writes ``<worker>.<ms>.pt.trace.json[.gz]`` (worker:
``<host>_<pid>``) with ``synth.kineto``: one ``ProfilerStep#N`` per
recorded step; ``FAKE_TORCH_SERIAL=K`` makes run K's side kernel run after the GEMM.
"""

from __future__ import annotations

import enum
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    CUDA = "CUDA"
    XPU = "XPU"
    MTIA = "MTIA"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(
    *,
    wait: int,
    warmup: int,
    active: int,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Callable[[int], ProfilerAction]:
    torch.record("schedule", wait=wait, warmup=warmup, active=active, repeat=repeat)
    assert wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(
    dir_name: str, worker_name: str | None = None, use_gzip: bool = False
) -> Callable[[profile], None]:
    torch.record(
        "tensorboard_trace_handler", dir_name=dir_name, worker_name=worker_name, use_gzip=use_gzip
    )

    def handler(prof: profile) -> None:
        from synth.kineto import KinetoSpec, write

        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json" + (".gz" if use_gzip else "")
        run = int(os.environ.get("OVERLAP_CHECK_RUN_INDEX", "1"))
        serial = os.environ.get("FAKE_TORCH_SERIAL") == str(run)
        spec = KinetoSpec(steps=max(1, prof.recorded), overlapped=not serial)
        path = write(Path(dir_name) / name, spec)
        torch.record("export", path=str(path), steps=spec.steps)

    return handler


class profile:
    def __init__(
        self,
        *,
        activities: Any = None,
        schedule: Callable[[int], ProfilerAction] | None = None,
        on_trace_ready: Callable[[profile], None] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Any = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Any = None,
    ) -> None:
        self.schedule = schedule or (lambda step: ProfilerAction.RECORD)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.action = ProfilerAction.NONE
        self.recorded = 0
        self.running = False
        torch.record(
            "profile",
            activities=sorted(a.value for a in activities or ()),
            schedule=schedule is not None,
            with_stack=with_stack,
        )

    def _recording(self) -> bool:
        return self.action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def start(self) -> None:
        self.running = True
        self.action = self.schedule(self.step_num)
        self.recorded = 0
        torch.record("start", action=self.action.name)

    def step(self) -> None:
        if not self.running:
            return
        previous = self.action
        self.recorded += self._recording()
        self.step_num += 1
        self.action = self.schedule(self.step_num)
        torch.record("step", step=self.step_num, action=self.action.name)
        if previous == ProfilerAction.RECORD_AND_SAVE and self.on_trace_ready is not None:
            self.on_trace_ready(self)
            self.recorded = 0

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        torch.record("stop", action=self.action.name)
        if self._recording() and self.on_trace_ready is not None:
            self.recorded += 1
            self.on_trace_ready(self)

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
