"""overlap-check's profiler payload, loaded by Python as ``sitecustomize``.

``overlap-check run`` puts this folder first on PYTHONPATH; once ``torch_npu`` (or ``torch``)
has finished importing, the payload starts the profiler, serves ``overlap_check.profile()``,
logs each step and chains to the next ``sitecustomize`` (docs/run.md, "--profiler torch_npu").
Nothing here may break the workload: every failure is logged and swallowed. Standard library
only, Python 3.8+: it runs in the workload's interpreter, which need not have overlap-check."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import threading
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

# Names shared with overlap_check.runner.profilers (kept equal by a test).
PAYLOAD_MODULE = "_overlap_check_payload"
ENV_RUN_DIR = "OVERLAP_CHECK_RUN_DIR"
ENV_LEVEL = "OVERLAP_CHECK_LEVEL"
ENV_WINDOW = "OVERLAP_CHECK_WINDOW"
ENV_PROFILER = "OVERLAP_CHECK_PROFILER"
ENV_WITH_STACK = "OVERLAP_CHECK_WITH_STACK"
CUDA_STEPS = 10  # optimizer steps recorded on CUDA (the schedule's active steps)
STATUS_DIR = ".overlap-check"
WINDOW_MODES = ("auto", "explicit", "process")
LEVELS = ("Level1", "Level2")

# Launchers import torch (and so, through torch's backend autoload, torch_npu)
# but run no kernels themselves; their ranks are profiled instead.
LAUNCHER_SCRIPTS = frozenset({"torchrun", "accelerate", "deepspeed"})
LAUNCHER_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})


class Controller:
    """The profiler state of one process."""

    def __init__(
        self,
        run_dir: str,
        level: str,
        window: str,
        profiler: str = "torch_npu",
        stack: bool = False,
    ) -> None:
        self.profiler = "torch" if profiler == "torch" else "torch_npu"
        self.stack = stack
        self.run_dir = run_dir
        self.level = level if level in LEVELS else "Level1"
        self.window = window if window in WINDOW_MODES else "auto"
        self.lock = threading.RLock()
        self.process_prof: Any = None  # the process-wide capture, while it runs
        self.process_before: set[str] = set()  # run dir entries before it started
        self.window_prof: Any = None  # the profile() capture, while it runs
        self.window_used = False  # a profile() block has been entered
        self.window_done = False  # ... and captured
        self.depth = 0  # nesting of profile() blocks
        self.atexit_registered = False
        self.torch_npu_imported = False
        self.owner_pid = os.getpid()  # a fork()ed child must not stop our profilers

    def log(self, event: str, **fields: Any) -> None:
        """Append one event to this process's status file; never raises (the workload matters
        more than our bookkeeping)."""
        with contextlib.suppress(Exception):
            folder = os.path.join(self.run_dir, STATUS_DIR)
            os.makedirs(folder, exist_ok=True)
            record = {"event": event, "pid": os.getpid(), "time_ns": time.time_ns(), **fields}
            path = os.path.join(folder, f"payload-{os.getpid()}.jsonl")
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, default=str) + "\n")

    def warn(self, message: str) -> None:
        with contextlib.suppress(Exception):
            sys.stderr.write(f"overlap-check: {message}\n")
            sys.stderr.flush()

    def start_profiler(self, mode: str) -> Any:
        """Start the profiler (torch_npu's, or torch's on CUDA) as docs/run.md shows; None,
        logged and warned, when it cannot."""
        try:
            if mode == "process":
                self.process_before = set(os.listdir(self.run_dir))
            # In window mode this may import torch_npu: the hook sees window_used, starts nothing.
            profiler: Any = importlib.import_module(self.profiler + ".profiler")
            if self.profiler == "torch":
                prof = profiler.profile(
                    activities=[profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.CUDA],
                    schedule=profiler.schedule(wait=0, warmup=0, active=CUDA_STEPS, repeat=1),
                    on_trace_ready=profiler.tensorboard_trace_handler(self.run_dir, use_gzip=True),
                    with_stack=self.stack,
                )
            else:
                experimental = profiler._ExperimentalConfig(
                    profiler_level=getattr(profiler.ProfilerLevel, self.level),
                    aic_metrics=profiler.AiCMetrics.PipeUtilization,
                )
                prof = profiler.profile(
                    activities=[profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.NPU],
                    experimental_config=experimental,
                    on_trace_ready=profiler.tensorboard_trace_handler(self.run_dir),
                )
            prof.start()
            if self.profiler == "torch":
                try:
                    optimizer: Any = importlib.import_module("torch.optim.optimizer")
                    optimizer.register_optimizer_step_post_hook(lambda *_: self.step(prof))
                except Exception as err:  # torch < 2.0 has no optimizer hooks: one step, whole
                    self.log("error", stage="step-hook", message=repr(err))
            if not self.atexit_registered:
                register_exit_hook(self.at_exit)
                self.atexit_registered = True
        except Exception as err:
            self.log("error", stage="start", mode=mode, message=repr(err))
            self.warn(f"could not start {self.profiler}.profiler: {err!r}")
            return None
        self.log("profiler-started", mode=mode, level=self.level)
        return prof

    def step(self, prof: Any) -> None:
        if prof is self.process_prof or prof is self.window_prof:
            try:
                prof.step()
            except Exception as err:
                self.log("error", stage="step", message=repr(err))

    def stop_profiler(self, prof: Any, mode: str) -> None:
        began = time.monotonic()
        try:
            prof.stop()
        except Exception as err:
            self.log("error", stage="stop", mode=mode, message=repr(err))
            self.warn(f"{self.profiler}.profiler stop failed: {err!r}")
            return
        self.log("profiler-stopped", mode=mode, seconds=round(time.monotonic() - began, 3))

    def on_torch_npu_imported(self, torch_npu: ModuleType) -> None:
        with self.lock:
            if self.torch_npu_imported:
                return
            self.torch_npu_imported = True
            self.log(f"{self.profiler}-imported", file=getattr(torch_npu, "__file__", None))
            launcher = launcher_name()
            if launcher is not None:
                self.log("skipped", reason="launcher", launcher=launcher)
                return
            if self.window == "explicit" or self.window_used:
                self.log("deferred", reason="window", window=self.window)
                return
            self.process_prof = self.start_profiler("process")

    def discard_process_capture(self) -> None:
        """Stop the process-wide capture and delete what it wrote (window auto)."""
        prof, self.process_prof = self.process_prof, None
        self.stop_profiler(prof, "process")
        marker = f"_{os.getpid()}_"
        removed = []
        try:
            for name in sorted(set(os.listdir(self.run_dir)) - self.process_before):
                kineto = ".pt.trace.json" in name and f"_{os.getpid()}." in name
                if (name.endswith("_ascend_pt") and marker in name) or kineto:
                    path = os.path.join(self.run_dir, name)
                    if os.path.isdir(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.remove(path)
                    removed.append(name)
        except OSError as err:
            self.log("error", stage="discard", message=repr(err))
        self.log("discarded", mode="process", dirs=removed)

    def window_enter(self) -> bool:
        """Enter an ``overlap_check.profile()`` block; True when it opened a capture."""
        if os.getpid() != self.owner_pid:
            return False  # a fork()ed child: the capture belongs to the parent
        with self.lock:
            self.depth += 1
            if self.window == "process" or self.depth > 1 or self.window_done:
                if self.depth == 1:
                    reason = "window=process" if self.window == "process" else "already captured"
                    self.log("window-ignored", reason=reason)
                return False
            self.window_used = True
            if self.process_prof is not None:
                self.discard_process_capture()
            self.window_prof = self.start_profiler("window")
            return self.window_prof is not None

    def window_exit(self, opened: bool) -> None:
        if os.getpid() != self.owner_pid:
            return
        with self.lock:
            self.depth = max(0, self.depth - 1)
            if not opened or self.window_prof is None:
                return
            prof, self.window_prof = self.window_prof, None
            self.window_done = True
            self.stop_profiler(prof, "window")

    def at_exit(self) -> None:
        if os.getpid() != self.owner_pid:
            return  # a fork()ed child leaving normally; the parent owns the capture
        with self.lock:
            for mode in ("window", "process"):
                prof = getattr(self, mode + "_prof")
                if prof is not None:
                    setattr(self, mode + "_prof", None)
                    self.stop_profiler(prof, mode)


def register_exit_hook(hook: Any) -> None:
    """Run ``hook`` at interpreter exit, before thread pools and atexit hooks shut down (why:
    docs/run.md); importing concurrent.futures first puts its own hooks after ours. ``atexit``
    stays as a fallback (the hook is idempotent)."""
    with contextlib.suppress(Exception):  # Python 3.8 has no _register_atexit; or shutting down
        import concurrent.futures.process
        import concurrent.futures.thread  # noqa: F401

        threading._register_atexit(hook)  # type: ignore[attr-defined]
    atexit.register(hook)


def launcher_name() -> str | None:
    """The launcher this process is (torchrun ...), or None."""
    argv = getattr(sys, "argv", None) or [""]
    argv0 = os.path.basename(argv[0] or "")
    if argv0 in LAUNCHER_SCRIPTS:
        return argv0
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name in LAUNCHER_MODULES:
        return str(name)
    # `python -m torch.distributed.run`: runpy imports torch (and so torch_npu) to find
    # the module, before __main__ and sys.argv say what runs; the raw command line does.
    module = _dash_m_module(getattr(sys, "orig_argv", None) or [])
    return module if module in LAUNCHER_MODULES else None


def _dash_m_module(orig_argv: list[str]) -> str | None:
    """The module of ``python [options] -m MODULE ...``, or None."""
    position = 1
    while position < len(orig_argv):
        arg = orig_argv[position]
        if arg == "-m":
            return orig_argv[position + 1] if position + 1 < len(orig_argv) else None
        if arg.startswith("-m"):
            return arg[2:]
        if not arg.startswith("-") or arg == "-" or arg.startswith("-c"):
            return None  # a script, stdin or -c: no -m module
        # -X, -W and --check-hash-based-pycs take a separate value
        position += 2 if arg in ("-X", "-W", "--check-hash-based-pycs") else 1
    return None


class _NotifyingLoader(importlib.abc.Loader):
    """Delegates to the real loader and calls back once the module has executed."""

    def __init__(self, inner: importlib.abc.Loader, callback: Any) -> None:
        self._inner = inner
        self._callback = callback

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # Give the module its real loader back before it runs (introspection, resources).
        module.__loader__ = self._inner
        if module.__spec__ is not None:
            module.__spec__.loader = self._inner
        self._inner.exec_module(module)
        self._callback(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TorchNpuFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch_npu`` with the other finders and wraps its loader."""

    def __init__(self, module_name: str, callback: Any) -> None:
        self.module_name = module_name
        self.callback = callback
        self.busy = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module_name or self.busy:
            return None
        self.busy = True
        try:
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = _NotifyingLoader(spec.loader, self.callback)
                    return spec
            return None
        finally:
            self.busy = False


def _same_dir(entry: str, folder: str) -> bool:
    try:
        return os.path.realpath(entry or os.getcwd()) == folder
    except (OSError, ValueError):
        return False


def chain_next_sitecustomize(own_file: str) -> str | None:
    """Run the ``sitecustomize`` that comes after ours on sys.path; returns its file."""
    folder = os.path.realpath(os.path.dirname(own_file))
    entries = list(sys.path)
    positions = [i for i, entry in enumerate(entries) if _same_dir(entry, folder)]
    rest = entries[positions[0] + 1 :] if positions else entries
    rest = [entry for entry in rest if not _same_dir(entry, folder)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or spec.origin is None:
        return None
    if os.path.realpath(spec.origin) == os.path.realpath(own_file):
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        # What site.py does for a failing sitecustomize: report and go on.
        sys.stderr.write(
            "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
            f"{type(err).__name__}: {err}\n"
        )
    return spec.origin


def install(environ: Any = None) -> Controller | None:
    env = os.environ if environ is None else environ
    run_dir = env.get(ENV_RUN_DIR)
    if not run_dir:
        return None
    controller = Controller(
        os.path.abspath(run_dir),
        env.get(ENV_LEVEL, "Level1"),
        env.get(ENV_WINDOW, "auto"),
        env.get(ENV_PROFILER, "torch_npu"),
        env.get(ENV_WITH_STACK) == "1",
    )
    controller.log(
        "payload-loaded",
        argv=list(sys.argv) if hasattr(sys, "argv") else None,
        executable=sys.executable,
        python=sys.version.split()[0],
        window=controller.window,
        level=controller.level,
    )
    existing = sys.modules.get(controller.profiler)
    if existing is not None:
        controller.on_torch_npu_imported(existing)
    else:
        finder = TorchNpuFinder(controller.profiler, controller.on_torch_npu_imported)
        sys.meta_path.insert(0, finder)
    return controller


CONTROLLER: Controller | None = None


def window_enter() -> bool:
    return CONTROLLER.window_enter() if CONTROLLER is not None else False


def window_exit(opened: bool) -> None:
    if CONTROLLER is not None:
        CONTROLLER.window_exit(opened)


if __name__ == "sitecustomize":
    try:
        CONTROLLER = install()
        if CONTROLLER is not None:
            sys.modules[PAYLOAD_MODULE] = sys.modules[__name__]
    except Exception as _err:  # never break the interpreter's start-up
        sys.stderr.write(f"overlap-check: payload failed: {_err!r}\n")
    try:
        chain_next_sitecustomize(__file__)
    except Exception as _err:
        sys.stderr.write(f"overlap-check: could not chain to sitecustomize: {_err!r}\n")
