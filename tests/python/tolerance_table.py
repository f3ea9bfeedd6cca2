#!/usr/bin/env python3
"""The --against tolerance of each experiment and dtype at its defaults, and the smallest
planted error it catches: every element times 1 + e, or the largest element moved by
e max|ref|, for e on a 1-3-10 grid. A report for the manual and issue notes, not a test (the
seeded mutation test in tests/test_verdicts.cpp is the test). Needs numpy.
The experiments are those the registry samples (DRAW_COMMANDS --names, built from
tests/draw_commands.cpp): the timed and trained runs have no tolerance to report.
Usage: tolerance_table.py ATTNLAB DRAW_COMMANDS [SCRATCH_DIR]
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

GRID = [1e-7, 3e-7, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]


def smallest_caught(exe, base, main, scratch, make):
    for e in GRID:
        np.save(os.path.join(scratch, "planted.npy"), make(e))
        args = [exe] + base + ["--quiet", "--against", os.path.join(scratch, "planted.npy"), "--against-tensor", main]
        if subprocess.run(args, capture_output=True).returncode == 1:
            return e
    return None


def row(exe, name, base, dtype, scratch):
    base = base + ["--dtype", dtype]
    main = json.loads(subprocess.run([exe] + base + ["--format", "json", "--quiet"], capture_output=True, text=True).stdout)["main_tensor"]
    # a run whose own checks fail (exit 1) still saves its tensors
    if subprocess.run([exe] + base + ["--quiet", "--save", scratch], capture_output=True).returncode not in (0, 1):
        return f"{name:13s} {dtype:9s}: the run was refused"
    saved = np.load(os.path.join(scratch, main + ".npy"))
    if not np.issubdtype(saved.dtype, np.floating):
        return f"{name:13s} {dtype:9s} {main}: exact ({saved.dtype})"
    ref = saved.astype(np.float64)
    np.save(os.path.join(scratch, "ref.npy"), ref)
    out = subprocess.run([exe] + base + ["--quiet", "--against", os.path.join(scratch, "ref.npy"), "--against-tensor", main],
                         capture_output=True, text=True)
    if out.returncode == 2:
        return f"{name:13s} {dtype:9s} {main}: refused: {out.stderr.strip()}"
    # "tolerance: ...;" now; earlier versions said "outside rtol R + atol A"
    tol = re.search(r"tolerance: (.*?);", out.stdout) or re.search(r"outside (rtol \S+ \+ atol \S+)", out.stdout)
    finite = np.isfinite(ref)
    top = np.abs(ref[finite]).max() if finite.any() else 0.0
    worst = np.unravel_index(np.argmax(np.where(finite, np.abs(ref), -1)), ref.shape)

    def moved(e):
        a = ref.copy()
        a[worst] += e * top
        return a

    scaled = smallest_caught(exe, base, main, scratch, lambda e: np.where(finite, ref * (1 + e), ref))
    one = smallest_caught(exe, base, main, scratch, moved)
    verdict = "MATCH" if out.returncode == 0 else "DIFFERS"
    return (f"{name:13s} {dtype:9s} {main}: reference {verdict}; {tol.group(1) if tol else '?'}; max|ref| {top:.3g}; "
            f"scaling caught from e = {scaled}; one element caught from {one} max|ref|")


def main():
    exe = os.path.abspath(sys.argv[1])
    names = subprocess.run([sys.argv[2], "--names"], capture_output=True, text=True, check=True).stdout.split()
    scratch = sys.argv[3] if len(sys.argv) > 3 else "/tmp/attnlab-tolerance-table"
    for name in names:
        for dtype in ["float64", "float32", "float16", "bfloat16"]:
            folder = os.path.join(scratch, f"{name}-{dtype}")
            os.makedirs(folder, exist_ok=True)
            print(row(exe, name, [name], dtype, folder), flush=True)


if __name__ == "__main__":
    main()
