#!/usr/bin/env python3
"""One mask catalogue everywhere: every mask slip, written in numpy as a learner writes it (from
the run's saved scores, or q, k and v), on every tensor of `mask` and `attend` that carries the
mask, in float32 and float64, is named first by --against, with certainty "matches".

Usage: mask_slips.py ATTNLAB
Exits 77 (skipped) when numpy is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)

INF = np.inf
CAUSAL = ["mask_flipped", "future_visible", "diagonal_masked", "mask_off_by_one", "mask_multiplied", "mask_after_softmax"]
PADDED = ["padding_on_queries", "padding_one_late", "bool_inverted", "mask_multiplied", "mask_after_softmax", "fully_masked_row_nan"]
AT_SOFTMAX = {"mask_after_softmax", "fully_masked_row_nan"}


def softmax(s, safe=True):
    with np.errstate(invalid="ignore"):
        m = s.max(axis=-1, keepdims=True)
        if safe:
            m = np.where(np.isfinite(m), m, 0.0)
        e = np.exp(s - m)
        total = e.sum(axis=-1, keepdims=True)
        if safe:
            return np.where(total > 0, e / np.where(total > 0, total, 1.0), 0.0)
        return e / total


def hidden(slip, L, lengths):
    """[B, L, S] booleans: the keys the learner's mask hides (True), for a causal (lengths None) or
    a causal-and-padding mask."""
    i = np.arange(L)[:, None]
    j = np.arange(L)[None, :]
    lens = np.array(lengths if lengths else [L])[:, None, None]
    causal = lengths is None
    future = np.broadcast_to(j > i, (len(lens), L, L))
    pad = j >= lens
    right = future | (pad if not causal else False)
    rules = {
        "mask_flipped": np.tril(np.ones((L, L))) == 1,                          # masked_fill(tril(ones) == 1, -inf)
        "future_visible": ~(np.triu(np.ones((L, L))) == 1),                    # keep = triu(ones)
        "diagonal_masked": np.triu(np.ones((L, L)), k=0) == 1,                 # triu(..., diagonal=0)
        "mask_off_by_one": np.triu(np.ones((L, L)), k=2) == 1,                 # triu(..., diagonal=2)
        "padding_on_queries": (i >= lens) | future,                            # rows hidden, not keys
        "padding_one_late": (j > lens) | future,                               # j > len instead of j >= len
        "bool_inverted": ~right,                                               # the convention inverted
    }
    return np.broadcast_to(rules.get(slip, right), (len(lens), L, L))


def slip_scores(slip, raw, hide):
    """Masked scores as the learner computes them: -inf added, or (multiplied) the scores times 0/1."""
    if slip == "mask_multiplied":
        return raw * ~hide
    return raw + np.where(hide, -INF, 0.0)


def slip_weights(slip, raw, hide, right, safe):
    if slip == "mask_after_softmax":
        return softmax(raw) * ~right
    if slip == "fully_masked_row_nan":
        return softmax(raw + np.where(right, -INF, 0.0), safe=False)
    return softmax(slip_scores(slip, raw, hide), safe)


def wrong_tensors(slip, raw, right, hide, safe, v=None):
    """Every tensor the slip shows on: {name: array}, for mask (v None) or attend."""
    out = {}
    if slip not in AT_SOFTMAX and slip != "mask_multiplied":
        out["mask"] = np.where(hide, -INF, 0.0)
    if slip not in AT_SOFTMAX:
        out["scores" if v is not None else "masked_scores"] = slip_scores(slip, raw, hide)
    w = slip_weights(slip, raw, hide, right, safe)
    out["weights"] = w
    if v is not None:
        o = w @ v
        out["out"] = o
        out["out_merged"] = o.transpose(0, 2, 1, 3).reshape(o.shape[0], o.shape[2], -1)
    return out


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def judge(attnlab, command, tensor, array, path, slip):
    for dtype in (np.float64, np.float32):
        np.save(path, array.astype(dtype))
        r = run([attnlab] + command + ["--quiet", "--format", "json", "--against-tensor", tensor, "--against", path])
        if r.returncode != 1:
            fail(f"{' '.join(command)} {tensor} {slip} {dtype.__name__}: exit {r.returncode}: {r.stderr}")
        found = json.loads(r.stdout)["against"]["diagnosis"]
        if not found or found[0]["id"] != slip or found[0]["certainty"] != "matches":
            fail(f"{' '.join(command)} --against-tensor {tensor}: the planted {slip} ({dtype.__name__}) is diagnosed {found}")


def shaped_mask(m, expected_shape):
    """The learner's mask in the run's layout: [L, S], or [B, 1, L, S] with padding."""
    m = m.reshape(m.shape[0], -1, *m.shape[-2:])[:, :1]
    return m[0, 0] if len(expected_shape) == 2 else m


def main():
    attnlab = os.path.abspath(sys.argv[1])
    L = 6
    setups = [
        (["mask", "--len", str(L)], None, CAUSAL),
        (["mask", "--kind", "both", "--lengths", "6,4,0", "--softmax", "safe"], [6, 4, 0], PADDED),
        (["attend", "--mask", "causal", "--len", str(L), "--heads", "2", "--dim", "8"], None, CAUSAL),
        (["attend", "--mask", "both", "--lengths", "6,3,0", "--softmax", "safe", "--len", str(L), "--heads", "2", "--dim", "8"], [6, 3, 0], PADDED),
    ]
    named = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (command, lengths, slips) in enumerate(setups):
            saved = os.path.join(tmp, f"run{n}")
            run([attnlab] + command + ["--dtype", "float64", "--save", saved, "--quiet"])
            shapes = {f[:-4]: np.load(os.path.join(saved, f)).shape for f in os.listdir(saved) if f.endswith(".npy")}
            if command[0] == "mask":
                raw, v = np.load(os.path.join(saved, "scores.npy")), None
            else:
                q, k, v = (np.load(os.path.join(saved, f"{t}.npy")) for t in ("q", "k", "v"))
                raw = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
            right = hidden("right", L, lengths)
            for slip in slips:
                hide = hidden(slip, L, lengths)
                if v is not None:
                    right_h, hide_h = right[:, None], hide[:, None]
                else:
                    right_h, hide_h = right, hide
                for tensor, array in wrong_tensors(slip, raw, right_h, hide_h, "safe" in command, v).items():
                    if tensor not in shapes:
                        continue
                    if tensor == "mask":
                        array = shaped_mask(array, shapes["mask"])
                    if array.shape != shapes[tensor]:
                        fail(f"{command[0]} {slip} {tensor}: shape {array.shape}, the run's {shapes[tensor]}")
                    judge(attnlab, command, tensor, array, os.path.join(tmp, "answer.npy"), slip)
                    named += 1
    print(f"ok: {named} planted slips, each in float64 and float32, named first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
