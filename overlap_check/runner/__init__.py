"""``overlap-check run``: profile an unchanged workload N times, keeping every run.

- :mod:`session` — the loop over runs (``execute(plan, manifest, ...)``).
- :mod:`process` — starting the workload in its own process group, forwarding Ctrl-C.
- :mod:`torch_npu_injection` — the environment that loads ``inject/sitecustomize.py``
  (the payload that starts ``torch_npu.profiler`` when the workload imports torch_npu).
- :mod:`msprof` — the msprof CLI command line, its PROF_* output, choosing a profiler.
- :mod:`manifest` — ``manifest.json``, rewritten atomically after every run.
- :mod:`api` — ``overlap_check.profile()``, the capture window for the workload's code.

Nothing here imports torch_npu; the payload runs only inside the workload.
"""
