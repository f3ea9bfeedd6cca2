#!/usr/bin/env python3
"""No false alarms: random valid configurations of every experiment, in every dtype, must exit
0 unless a checked property is truly false for that configuration. The configurations are the
registry's samplers' draws (DRAW_COMMANDS, built from tests/draw_commands.cpp), so every
experiment with a sampler is drawn and no list of experiments is kept here. The list of true
failures is closed, and worked out here from the run's parameters alone:
  - --multiply (multiplying scores by a 0/1 mask does not mask);
  - a row left fully masked under --softmax plain (by --diagonal, a padding length of 0, or
    an alignment that leaves a query no key), worked out from the mask's rule written again.
Any other exit 1 is a false alarm, and so is any exit 2 (the samplers draw valid input only).
Usage: no_false_alarms.py ATTNLAB DRAW_COMMANDS [SEED] [RUNS]   (runs on two workers)
"""
import concurrent.futures
import json
import random
import subprocess
import sys

DTYPES = ["float64", "float32", "float16", "bfloat16"]



def visible_range(kind, i, queries, keys, diagonal, align, window, length):
    """The keys [first, second) query i may see: core/mask_spec.cpp's rule, written again."""
    clamp = lambda v: min(max(v, 0), keys)
    offset = keys - queries if align == "lower-right" else 0
    causal_end = clamp(i + offset + diagonal)
    if kind == "causal":
        return 0, causal_end
    if kind == "padding":
        return 0, clamp(length)
    if kind == "both":
        return 0, min(clamp(length), causal_end)
    if kind == "window":
        return clamp(i + offset - window + 1), causal_end
    return 0, keys  # none


def may_fail(params):
    """Whether a checked property is truly false for a run with these parameters (as its report
    holds them): the closed list."""
    if params.get("multiply"):
        return True
    if params.get("softmax") != "plain":
        return False
    kind = params.get("kind", params.get("mask", "none"))
    lengths = params.get("lengths") or [None]
    queries = params["len"]
    keys = params.get("kv_len") or queries
    diagonal, window = params.get("diagonal", 1), params.get("window") or 1
    align = params.get("align", "upper-left")
    return any(first >= second for length in lengths for i in range(queries)
               for first, second in [visible_range(kind, i, queries, keys, diagonal, align, window, length)])


def draws(draw_commands, seed, runs):
    """The registry's draws, each with a dtype and a seed of its own."""
    lines = subprocess.run([draw_commands, str(seed), str(runs)], capture_output=True, text=True, check=True).stdout.splitlines()
    names = subprocess.run([draw_commands, "--names"], capture_output=True, text=True, check=True).stdout.split()
    assert len(lines) == runs and len(names) >= 12, (len(lines), names)
    r = random.Random(seed)
    cases = []
    for line in lines:
        drawn = json.loads(line)
        args = drawn["args"] + ["--dtype", r.choice(DTYPES), "--seed", str(r.randint(0, 999)), "--quiet"]
        cases.append((args, may_fail(drawn["params"])))
    drawn = {args[0] for args, _ in cases}
    assert runs < 10 * len(names) or drawn == set(names), sorted(set(names) - drawn)
    return cases


def run(attnlab, case):
    args, may_fail = case
    p = subprocess.run([attnlab] + args, capture_output=True, text=True, timeout=60)
    return args, may_fail, p.returncode, p.stderr.strip()


def main():
    attnlab, draw_commands = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    cases = draws(draw_commands, seed, runs)
    codes, alarms = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for args, may_fail, code, err in pool.map(lambda c: run(attnlab, c), cases):
            codes[code] = codes.get(code, 0) + 1
            if code == 2 or (code == 1 and not may_fail) or code not in (0, 1, 2):
                alarms.append((code, " ".join(args), err[:300]))
    for code, cmd, err in alarms[:40]:
        print(f"exit {code}: attnlab {cmd}\n    {err}")
    print(f"no false alarms: {runs} valid configurations (seed {seed}), exit codes {dict(sorted(codes.items()))}, {len(alarms)} false alarms")
    print(f"{runs - len(alarms)} passed, {len(alarms)} failed")
    sys.exit(1 if alarms else 0)


if __name__ == "__main__":
    main()
