"""``overlap-check run``: profile an unchanged workload N times, keeping every run.

:mod:`session` (the loop) runs the workload through :mod:`process`, prepared for its profiler by
:mod:`profilers`, and records it in :mod:`manifest`; :mod:`api` is ``overlap_check.profile()``.
Nothing here imports torch_npu; the payload (``inject/sitecustomize.py``) runs only inside the
workload. The user's view: docs/run.md."""
