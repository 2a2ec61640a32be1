"""A small workload for the `run` tests: imports torch_npu like a model script would.

    python workload.py [--no-npu] [--exit N] [--fail-on-run K] [--child]
                       [--window] [--sleep S] [--marker TEXT]

Prints a marker on stdout and stderr (the tests check where they end up).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-npu", action="store_true", help="never import torch_npu")
    parser.add_argument("--exit", type=int, default=0, help="exit code")
    parser.add_argument("--fail-on-run", type=int, default=0, help="exit 1 in this run")
    parser.add_argument("--child", action="store_true", help="start a rank-1 child process")
    parser.add_argument("--window", action="store_true", help="use overlap_check.profile()")
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds of 'generation'")
    parser.add_argument("--marker", default="workload-output")
    parser.add_argument("--torch-steps", type=int, default=-1, help="a CUDA training loop")
    args = parser.parse_args()

    print(f"{args.marker}: stdout", flush=True)
    print(f"{args.marker}: stderr", file=sys.stderr, flush=True)
    print(f"user sitecustomize: {os.environ.get('USER_SITECUSTOMIZE_RAN')}", file=sys.stderr)
    run_index = int(os.environ.get("OVERLAP_CHECK_RUN_INDEX", "0"))
    if args.fail_on_run and run_index == args.fail_on_run:
        return 1
    if args.torch_steps >= 0:  # a PyTorch script: torch and optimizer steps, no torch_npu
        import torch.optim

        optimizer = torch.optim.SGD([])
        for _ in range(args.torch_steps):
            optimizer.step()
        return args.exit
    if args.window:
        import overlap_check

        if args.no_npu:
            with overlap_check.profile():
                pass
            print(f"torch_npu imported: {'torch_npu' in sys.modules}", flush=True)
            return args.exit
        import torch_npu

        torch_npu.phase("load")
        with overlap_check.profile():
            torch_npu.phase("generate")
            time.sleep(args.sleep)
        torch_npu.phase("teardown")
        return args.exit
    if not args.no_npu:
        import torch_npu

        torch_npu.phase("generate")
    if args.child:
        env = dict(os.environ, RANK="1")
        subprocess.run([sys.executable, __file__, "--marker", "child"], env=env, check=True)
    time.sleep(args.sleep)
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
