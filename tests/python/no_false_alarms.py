#!/usr/bin/env python3
"""No false alarms: random valid configurations of every subcommand, in every dtype, must
exit 0 unless a checked property is truly false for that configuration. The list of true
failures is closed:
  - mask --multiply (multiplying scores by a 0/1 mask does not mask);
  - a row left fully masked under --softmax plain (by --diagonal, a padding length of 0, or
    an alignment that leaves a query no key, in mask or attend), worked out here from the mask's rule.
Any other exit 1 is a false alarm, and so is any exit 2 (the generator draws valid input only).
Usage: no_false_alarms.py ATTNLAB [SEED] [RUNS]   (runs on two workers)
"""
import concurrent.futures
import random
import subprocess
import sys

from subcommands import subcommands

DTYPES = ["float64", "float32", "float16", "bfloat16"]


def pe(r):
    length = r.randint(2, 64)
    a = ["--len", length, "--dim", 2 * r.randint(1, 32), "--base", r.choice([100, 10000, 50000]),
         "--layout", r.choice(["interleaved", "concat"]), "--freq-method", r.choice(["exp-log", "pow"]),
         "--shift", r.randint(1, length - 1)]
    if r.random() < 0.3:
        a += ["--embed", "--batch", r.randint(1, 3)] + (["--scale-embed"] if r.random() < 0.5 else [])
    return a, False


def rope(r):
    dim = 2 * r.randint(1, 16)
    a = ["--len", r.randint(1, 64), "--dim", dim, "--heads", r.randint(1, 4), "--batch", r.randint(1, 2),
         "--base", r.choice([10000, 500000]), "--style", r.choice(["interleaved", "half"])]
    if r.random() < 0.3:
        a += ["--rotary-dim", 2 * r.randint(1, dim // 2)]
    scaling = r.choice(["none", "linear", "ntk", "dynamic", "yarn", "llama3"])
    if scaling in ("dynamic", "ntk") and (dim < 4 or "--rotary-dim" in a and a[a.index("--rotary-dim") + 1] < 4):
        scaling = "linear"  # NTK's exponent r/(r-2) needs r >= 4
    if scaling != "none":
        a += ["--scaling", scaling, "--factor", r.choice([2, 4, 8, 32]), "--original-len", r.choice([16, 64, 2048])]
    return a, False


def alibi(r):
    return ["--heads", r.randint(1, 33), "--len", r.randint(1, 32), "--dim", r.randint(2, 16),
            "--slopes", r.choice(["reference-code", "paper-text"]), "--variant", r.choice(["symmetric", "causal"])], False


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
    return clamp(i + offset - window + 1), causal_end  # window


def mask(r):
    kind = r.choice(["causal", "padding", "both", "window"])
    softmax = r.choice(["plain", "safe"])
    a, may_fail = ["--kind", kind, "--softmax", softmax, "--dk", r.randint(1, 16)], False
    lengths, window, diagonal, align = [None], 1, 1, "upper-left"
    if kind in ("padding", "both"):
        lengths = [r.randint(0, 8) for _ in range(r.randint(1, 3))]
        lengths[0] = max(lengths[0], 1)
        a += ["--lengths", ",".join(map(str, lengths))]
        queries = max(lengths)
    else:
        queries = r.randint(1, 10)
        a += ["--len", queries]
        if r.random() < 0.3:
            a += ["--batch", r.randint(1, 3)]
    keys = queries
    if kind == "window":
        window = r.randint(1, 6)
        a += ["--window", window]
    if kind != "padding":
        if r.random() < 0.4:
            diagonal = r.randint(-3, 4)
            a += [f"--diagonal={diagonal}"]
        if r.random() < 0.3:
            keys = r.randint(max(queries, max(l or 0 for l in lengths)), 14)
            align = r.choice(["upper-left", "lower-right"])
            a += ["--kv-len", keys, "--align", align]
    # the one true failure: a row that sees no key gives NaN under the plain softmax
    empty = any(first >= second for length in lengths for i in range(queries)
                for first, second in [visible_range(kind, i, queries, keys, diagonal, align, window, length)])
    may_fail = empty and softmax == "plain"
    if r.random() < 0.2:
        a += ["--multiply"]
        may_fail = True
    return a, may_fail


def attend(r):
    heads = r.randint(1, 4)
    kv_heads = r.choice([h for h in range(1, heads + 1) if heads % h == 0])
    length, pe = r.randint(1, 12), r.choice(["none", "sinusoidal", "rope", "alibi"])
    mask, softmax = r.choice(["none", "causal", "padding", "both", "window"]), r.choice(["plain", "safe"])
    a = ["--len", length, "--heads", heads, "--kv-heads", kv_heads,
         "--dim", heads * 2 * r.randint(1, 4), "--pe", pe,
         "--rope-style", r.choice(["interleaved", "half"]), "--mask", mask,
         "--softmax", softmax, "--threads", r.randint(1, 2)]
    lengths = []
    if mask in ("padding", "both"):  # one length per sequence, 0 included: a row that sees no key
        lengths = [r.randint(0, length) for _ in range(r.randint(1, 3))]
        a += ["--lengths", ",".join(map(str, lengths))]
    else:
        a += ["--batch", r.randint(1, 2)]
    if mask == "window":
        a += ["--window", r.randint(1, 6)]
    if pe != "none" and mask == "none" and r.random() < 0.3:  # tokens at their own positions: repeats, gaps, negatives
        a += ["--positions=" + ",".join(str(r.randint(-50, 500)) for _ in range(length))]
    # the one true failure: a sequence of length 0 leaves its rows no key, NaN under the plain softmax
    return a, softmax == "plain" and 0 in lengths


def permute(r):
    return ["--len", r.randint(2, 8), "--dim", 2 * r.randint(2, 8), "--heads", 1, "--pe", r.choice(["none", "sinusoidal"]),
            "--trials", r.randint(1, 4)], False


def nope(r):
    return ["--len", r.randint(1, 400), "--mask", r.choice(["none", "causal"])], False


def learned(r):
    return ["--len", r.randint(1, 64), "--max-len", r.randint(1, 64), "--dim", 2 * r.randint(1, 32), "--batch", r.randint(1, 3)], False


def decode(r):
    heads = r.randint(1, 4)
    kv_heads = r.choice([h for h in range(1, heads + 1) if heads % h == 0])
    pe = r.choice(["none", "sinusoidal", "rope", "alibi"])
    a = ["--prefill", r.randint(1, 12), "--steps", r.randint(1, 8), "--pe", pe, "--rope-style", r.choice(["interleaved", "half"]),
         "--heads", heads, "--kv-heads", kv_heads, "--dim", heads * 2 * r.randint(1, 4), "--batch", r.randint(1, 2)]
    if r.random() < 0.4:
        a += ["--window", r.randint(1, 8)]
        if pe != "sinusoidal" and r.random() < 0.5:
            a += ["--sinks", r.randint(1, 4)]
    elif r.random() < 0.4:
        prefill = a[1]
        a = a[:a.index("--batch")] + ["--left-pad", ",".join(str(r.randint(1, prefill)) for _ in range(r.randint(1, 3)))]
    return a, False


def shaw(r):
    heads = r.randint(1, 4)
    return ["--len", r.randint(1, 16), "--heads", heads, "--dim", heads * r.randint(1, 8), "--batch", r.randint(1, 2),
            "--clip", r.randint(0, 6), "--mask", r.choice(["none", "causal"])], False


def t5(r):
    direction, buckets = r.choice(["bidirectional", "causal"]), r.randint(4, 64)
    exact = (buckets // 2 if direction == "bidirectional" else buckets) // 2
    return ["--len", r.randint(1, 300), "--buckets", buckets, "--max-distance", exact + r.randint(1, 200), "--direction", direction,
            "--heads", r.randint(1, 4)], False


COMMANDS = {"pe": pe, "learned": learned, "shaw": shaw, "decode": decode, "t5": t5, "nope": nope, "rope": rope, "alibi": alibi, "mask": mask, "attend": attend, "permute-test": permute}


def registered(attnlab):
    """The experiments --help lists (the tour, the exercises and the two whose runs are timed or
    trained are not drawn). One without a drawer here runs at its defaults, in every dtype and
    seed: valid, so it must exit 0."""
    return [n for n in subcommands(attnlab) if n not in ("tour", "exercise", "bench", "train")]


def draw(r, names):
    name = r.choice(names)
    args, may_fail = COMMANDS[name](r) if name in COMMANDS else ([], False)
    return [name] + [str(x) for x in args] + ["--dtype", r.choice(DTYPES), "--seed", str(r.randint(0, 999)), "--quiet"], may_fail


def run(attnlab, case):
    args, may_fail = case
    p = subprocess.run([attnlab] + args, capture_output=True, text=True, timeout=60)
    return args, may_fail, p.returncode, p.stderr.strip()


def main():
    attnlab = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    r = random.Random(seed)
    names = registered(attnlab)
    assert set(COMMANDS) <= set(names) and len(names) >= len(COMMANDS), names
    cases = [draw(r, names) for _ in range(runs)]
    codes, alarms = {}, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for args, may_fail, code, err in pool.map(lambda c: run(attnlab, c), cases):
            codes[code] = codes.get(code, 0) + 1
            if code == 2 or (code == 1 and not may_fail) or code not in (0, 1, 2):
                alarms.append((code, " ".join(args), err[:300]))
    for code, cmd, err in alarms[:int(sys.argv[4]) if len(sys.argv) > 4 else 40]:
        print(f"exit {code}: attnlab {cmd}\n    {err}")
    print(f"no false alarms: {runs} valid configurations (seed {seed}), exit codes {dict(sorted(codes.items()))}, {len(alarms)} false alarms")
    print(f"{runs - len(alarms)} passed, {len(alarms)} failed")
    sys.exit(1 if alarms else 0)


if __name__ == "__main__":
    main()
