#!/usr/bin/python3
"""Attention core against a plain PyTorch CPU implementation of the same computation.

Usage (after a release build):  /usr/bin/python3 bench/compare_pytorch.py [--len 4096] [--heads 8] [--head-dim 64]
Needs Debian's python3-torch; the project's build and tests do not.
PyTorch side: softmax(q k^T * scale + mask) v in float32, the math spelled out (not
scaled_dot_product_attention's fused kernels), on 1 thread and on all threads; the best of
--repeat runs each. Prints both timings and the ratio.
"""
import argparse
import json
import math
import os
import subprocess
import time

import torch


def torch_attention(q, k, v, mask):
    scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores + mask
    return torch.softmax(scores, dim=-1) @ v


def best_of(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--len", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--mask", choices=["none", "causal"], default="causal")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(__file__), "..", "build", "release", "attnlab_bench"))
    a = ap.parse_args()

    ours = json.loads(subprocess.run([a.bench, "--len", str(a.len), "--heads", str(a.heads), "--head-dim",
                                      str(a.head_dim), "--mask", a.mask, "--repeat", str(a.repeat)],
                                     check=True, capture_output=True, text=True).stdout)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, a.heads, a.len, a.head_dim, generator=g) for _ in range(3))
    mask = torch.triu(torch.full((a.len, a.len), float("-inf")), diagonal=1) if a.mask == "causal" else None
    results = {"attnlab_seconds": ours["seconds"], "torch_version": torch.__version__}
    for threads in (1, os.cpu_count()):
        torch.set_num_threads(threads)
        results[f"torch_{threads}_threads_seconds"] = best_of(lambda: torch_attention(q, k, v, mask), a.repeat)
        results[f"ratio_attnlab_over_torch_{threads}_threads"] = ours["seconds"] / results[f"torch_{threads}_threads_seconds"]
    results.update({"len": a.len, "heads": a.heads, "head_dim": a.head_dim, "mask": a.mask})
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
