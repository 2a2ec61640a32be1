"""Peer implementations the benchmark compares overlap-check with.

- :mod:`bench.peers.naive_pandas` — the straightforward pandas approach (float µs).
- :mod:`bench.peers.kineto` — writes the same kernels as a minimal Kineto (PyTorch
  profiler / Chrome) trace, the input Holistic Trace Analysis reads.
- :mod:`bench.peers.hta_peer` — runs inside the separate HTA venv (never imports
  overlap_check); :mod:`bench.peers.hta_venv` creates that venv.
"""
