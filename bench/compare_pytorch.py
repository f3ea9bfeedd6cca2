#!/usr/bin/python3
"""attnlab's attention kernel against PyTorch's best CPU path, side by side in one run.

Usage (after a release build; needs Debian's python3-torch, which the build and tests do not):
    /usr/bin/python3 bench/compare_pytorch.py [--lens 2048,4096,8192] [--heads 8] [--head-dim 64]
                                              [--mask causal] [--repeat 3] [--threads 0] [--every-path]

For each L it runs `attnlab bench` (JSON), then PyTorch on random q, k, v of the same shape:
  manual: softmax(q k^T / sqrt(d) + mask) v, the math spelled out;
  fused:  scaled_dot_product_attention with is_causal (torch.nn.functional._scaled_dot_product_attention
          in PyTorch 1.13, scaled_dot_product_attention from 2.0 on);
each with every thread (or --threads), best of --repeat. PyTorch's best is the minimum over both
paths, over the BLAS kernels PyTorch's OpenBLAS may use (the ones it chooses itself, with
OPENBLAS_CORETYPE unset, and the ones attnlab runs with; set for a separate PyTorch process, since
OpenBLAS reads it once at start-up), and over two settings of glibc's allocator: its defaults, which
give PyTorch's large score tensors back to the system after every call so that the next call faults
them in again, and "heap kept" (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ raised), which
reuses them. On a machine where a page fault is dear the second is several times faster.
With ATTNLAB_ISA set (scalar, sse4, avx2, avx512: the kernel's target), PyTorch is held to the same
instructions: its own kernels through ATEN_CPU_CAPABILITY (avx512, avx2, or default below AVX2) and
its OpenBLAS to the kernels attnlab's products use for that target.
Prints, per L, both times and their ratio, then the scaling exponents of time against L.
"""
import argparse
import json
import math
import os
import subprocess
import sys

TORCH_TIMER = r"""
import json, math, sys, time
import torch
F = torch.nn.functional
L, H, d, causal, repeat, threads = json.loads(sys.argv[1])
torch.set_num_threads(threads)
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, H, L, d, generator=g) for _ in range(3))
mask = torch.triu(torch.full((L, L), float("-inf")), diagonal=1) if causal else None
sdpa = getattr(F, "scaled_dot_product_attention", None) or getattr(F, "_scaled_dot_product_attention")

def manual():
    scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(d))
    if mask is not None:
        scores = scores + mask
    return torch.softmax(scores, dim=-1) @ v

def fused():
    if sdpa.__name__ == "_scaled_dot_product_attention":
        return sdpa(q, k, v, None, 0.0, causal)[0]
    return sdpa(q, k, v, is_causal=causal)

def best(fn):
    fn()  # warm-up
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t

out = {"manual": best(manual), "fused": best(fused), "torch": torch.__version__}
try:
    import ctypes
    out["blas"] = ctypes.CDLL("libopenblas.so.0").openblas_get_corename
    out["blas"].restype = ctypes.c_char_p
    out["blas"] = out["blas"]().decode()
except OSError:
    out["blas"] = "unknown"
print(json.dumps(out))
"""


def attnlab_bench(exe, L, a):
    args = [exe, "bench", "--len", str(L), "--heads", str(a.heads), "--head-dim", str(a.head_dim), "--mask", a.mask,
            "--repeat", str(a.repeat), "--threads", str(a.threads), "--format", "json"]
    doc = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    if not doc["passed"]:
        sys.exit(f"attnlab bench failed its checks at L = {L}")
    return doc["measurements"]


HEAP_KEPT = {"MALLOC_MMAP_THRESHOLD_": str(1 << 32), "MALLOC_TRIM_THRESHOLD_": str(1 << 34)}


def torch_runs(L, a, threads, blas_core):
    """PyTorch's time on every path under every BLAS kernel choice and allocator setting: a list
    of {"seconds", "path", "blas", "heap", "torch"}."""
    runs = []
    isa = os.environ.get("ATTNLAB_ISA")
    for core in ([blas_core] if isa and blas_core else [None] + ([blas_core] if blas_core else [])):
        for heap in ("default", "kept"):
            env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE" and k not in HEAP_KEPT}
            if core:
                env["OPENBLAS_CORETYPE"] = core
            if heap == "kept":
                env.update(HEAP_KEPT)
            if isa:
                env["ATEN_CPU_CAPABILITY"] = {"avx512": "avx512", "avx2": "avx2"}.get(isa, "default")
            arg = json.dumps([L, a.heads, a.head_dim, a.mask == "causal", a.repeat, threads])
            done = subprocess.run([sys.executable, "-c", TORCH_TIMER, arg], capture_output=True, text=True, env=env)
            if done.returncode != 0:  # a kept heap can run out of memory at large L: that variant is left out
                print(f"       PyTorch with {core or 'its own'} kernels, heap {heap}: failed (exit {done.returncode}), left out", flush=True)
                continue
            r = json.loads(done.stdout)
            runs += [{"seconds": r[path], "path": path, "blas": r["blas"], "heap": heap, "torch": r["torch"]} for path in ("manual", "fused")]
    return runs


def exponent(lens, times):
    """Least-squares slope of log(time) against log(L)."""
    xs, ys = [math.log(n) for n in lens], [math.log(t) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lens", default="2048,4096,8192")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--mask", choices=["none", "causal"], default="causal")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="0: every core")
    ap.add_argument("--every-path", action="store_true", help="also print PyTorch's time on each path and BLAS kernel choice")
    ap.add_argument("--attnlab", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "release", "attnlab"))
    a = ap.parse_args()
    lens = [int(n) for n in a.lens.split(",")]
    threads = a.threads or os.cpu_count()
    print(f"B=1 H={a.heads} d={a.head_dim} mask={a.mask} float32, {threads} threads, best of {a.repeat}")
    print(f"{'L':>6} {'attnlab s':>10} {'GFLOP/s':>8} {'of sgemm':>8} {'PyTorch best s':>15} {'(path, BLAS, heap)':<32} {'ratio':>6}")
    ours, theirs = [], []
    for L in lens:
        m = attnlab_bench(a.attnlab, L, a)
        core = m["blas"].split(", ")[1].split(" ")[0] if ", " in m["blas"] else None
        runs = torch_runs(L, a, threads, core)
        if not runs:
            sys.exit(f"every PyTorch run failed at L = {L}")
        t = min(runs, key=lambda r: r["seconds"])
        best = m["seconds_min"]  # best of --repeat, as PyTorch's is taken
        ours.append(best)
        theirs.append(t["seconds"])
        print(f"{L:>6} {best:>10.4f} {m['gflops']:>8.1f} {m['fraction_of_sgemm']:>8.2f} {t['seconds']:>15.4f} "
              f"{'(' + t['path'] + ', ' + t['blas'] + ', heap ' + t['heap'] + ')':<32} {best / t['seconds']:>6.3f}")
        if a.every_path:
            for r in runs:
                print(f"{'':>6} PyTorch {r['path']:<6} with {r['blas']} kernels, heap {r['heap']}: {r['seconds']:.4f} s")
    print(f"PyTorch {t['torch']}; attnlab's kernel target: {m['isa']}, its BLAS: {m['blas']}")
    if len(lens) > 1:
        print(f"time ~ L^k: attnlab k = {exponent(lens, ours):.2f}, PyTorch best k = {exponent(lens, theirs):.2f}")


if __name__ == "__main__":
    main()
