#!/usr/bin/env python3
"""Randomized differential test: attnlab against PyTorch, written from the definitions.

For each random configuration, attnlab runs in float64 and prints its inputs and outputs as
JSON; this script recomputes the outputs from those inputs with plain torch operations and
fails on any disagreement beyond 1e-10 (NaN against NaN counts as equal).
Usage: differential_torch.py ATTNLAB [CASES] [SEED]. Exits 77 (skipped) without torch.
"""
import json
import math
import random
import subprocess
import sys

try:
    import torch
except ImportError:
    print("skipped: PyTorch is not installed")
    sys.exit(77)

torch.set_default_dtype(torch.float64)
EXE = sys.argv[1]


def run(args):
    out = subprocess.run([EXE] + args + ["--dtype", "float64", "--format", "json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"attnlab {' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
    doc = json.loads(out.stdout)
    return {t["name"]: tensor(t) for t in doc["tensors"]}, doc


def tensor(t):
    def num(v):
        return float({"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(v, v)) if isinstance(v, str) else float(v)
    def walk(x):
        return [walk(v) for v in x] if isinstance(x, list) else num(x)
    return torch.tensor(walk(t["data"]), dtype=torch.float64).reshape(t["shape"])


def same(a, b, what):
    a, b = a.double(), b.double()
    if a.shape != b.shape:
        raise AssertionError(f"{what}: shapes {tuple(a.shape)} and {tuple(b.shape)}")
    both_nan = torch.isnan(a) & torch.isnan(b)
    a, b = torch.where(both_nan, 0.0, a), torch.where(both_nan, 0.0, b)
    inf_equal = torch.isinf(a) & (a == b)
    diff = torch.where(inf_equal, 0.0, (a - b).abs())
    worst = float(torch.nan_to_num(diff, nan=math.inf).max()) if diff.numel() else 0.0
    if worst > 1e-10 * (1 + float(torch.nan_to_num(b.abs(), posinf=0, neginf=0).max() if b.numel() else 0)):
        raise AssertionError(f"{what}: max difference {worst}")


def get_slopes(n):  # Press et al. 2022
    def p2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return p2(n)
    c = 2 ** math.floor(math.log2(n))
    return p2(c) + get_slopes(2 * c)[0::2][: n - c]


def visible(kind, L, S, lengths, window, align):
    """[B, L, S] bool: query i of sequence b may see key j."""
    off = S - L if align == "lower-right" else 0
    i = torch.arange(L)[:, None]
    j = torch.arange(S)[None, :]
    causal = j <= i + off
    rows = []
    for n in lengths:
        pad = j < n
        rows.append({"none": torch.ones(L, S, dtype=torch.bool), "causal": causal, "padding": pad.expand(L, S),
                     "both": causal & pad, "window": causal & (j > i + off - window)}[kind])
    return torch.stack(rows)


def softmax(scores, safe):
    w = torch.softmax(scores, dim=-1)
    if safe:
        w = torch.where(torch.isinf(scores).all(dim=-1, keepdim=True) & (scores < 0).all(dim=-1, keepdim=True), 0.0, w)
    return w


def rope(x, positions, style):
    d = x.shape[-1]
    theta = 1.0 / (10000.0 ** (torch.arange(0, d, 2) / d))
    ang = positions[:, None] * theta[None, :]
    cos, sin = ang.cos(), ang.sin()
    if style == "half":  # Hugging Face rotate_half
        cos, sin = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)
        x1, x2 = x[..., : d // 2], x[..., d // 2:]
        return x * cos + torch.cat([-x2, x1], -1) * sin
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(xc * torch.polar(torch.ones_like(ang), ang)).flatten(-2)


def sinusoidal(positions, d):
    div = torch.exp(torch.arange(0, d, 2) * -(math.log(10000.0) / d))
    pe = torch.zeros(len(positions), d)
    pe[:, 0::2] = torch.sin(positions[:, None] * div)
    pe[:, 1::2] = torch.cos(positions[:, None] * div)
    return pe


def attend_case(rng):
    H = rng.choice([1, 2, 4])
    Hkv = rng.choice([h for h in (1, 2, 4) if H % h == 0])
    d = rng.choice([2, 4]) if True else 2
    L, S = rng.randint(1, 7), None
    cross = rng.random() < 0.4
    S = rng.randint(1, 8) if cross else L
    mask = rng.choice(["none", "causal", "padding", "both", "window"])
    pe = rng.choice(["none", "sinusoidal", "rope", "alibi"])
    align = rng.choice(["upper-left", "lower-right"])
    softmax_kind = rng.choice(["plain", "safe"])
    args = ["attend", "--len", str(L), "--heads", str(H), "--kv-heads", str(Hkv), "--dim", str(H * d), "--pe", pe,
            "--mask", mask, "--align", align, "--softmax", softmax_kind, "--seed", str(rng.randint(0, 999)),
            "--rope-style", rng.choice(["interleaved", "half"])]
    if cross:
        args += ["--kv-len", str(S)]
    lengths = [S]
    if mask in ("padding", "both"):
        lengths = [rng.randint(0, S) for _ in range(rng.randint(1, 3))]
        args += ["--lengths", ",".join(map(str, lengths))]
    window = rng.randint(1, 3)
    if mask == "window":
        args += ["--window", str(window)]
    return args, dict(H=H, Hkv=Hkv, d=d, L=L, S=S, cross=cross, mask=mask, pe=pe, align=align,
                      safe=softmax_kind == "safe", lengths=lengths, window=window, style=args[args.index("--rope-style") + 1])


def check_attend(rng):
    args, c = attend_case(rng)
    t, doc = run(args + ["--show", "x,x_kv,w_q,w_k,w_v,out"] if c["cross"] else args + ["--show", "x,w_q,w_k,w_v,out"])
    x = t["x"]
    xkv = t["x_kv"] if c["cross"] else x
    B, L, S, H, Hkv, d = x.shape[0], c["L"], c["S"], c["H"], c["Hkv"], c["d"]
    q0 = S - L if c["align"] == "lower-right" and S > L else 0
    qpos, kpos = torch.arange(q0, q0 + L, dtype=torch.float64), torch.arange(S, dtype=torch.float64)
    if c["pe"] == "sinusoidal":
        x = x + sinusoidal(qpos, H * d)[None]
        xkv = xkv + sinusoidal(kpos, H * d)[None]
    q = (x @ t["w_q"]).reshape(B, L, H, d).transpose(1, 2)
    k = (xkv @ t["w_k"]).reshape(B, S, Hkv, d).transpose(1, 2)
    v = (xkv @ t["w_v"]).reshape(B, S, Hkv, d).transpose(1, 2)
    if c["pe"] == "rope":
        q, k = rope(q, qpos, c["style"]), rope(k, kpos, c["style"])
    k, v = k.repeat_interleave(H // Hkv, 1), v.repeat_interleave(H // Hkv, 1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    if c["pe"] == "alibi":
        scores = scores - torch.tensor(get_slopes(H))[:, None, None] * (qpos[:, None] - kpos[None, :]).abs()
    if c["mask"] != "none":
        vis = visible(c["mask"], L, S, c["lengths"] if c["mask"] in ("padding", "both") else [S] * B, c["window"], c["align"])
        scores = scores.masked_fill(~vis[:, None], float("-inf"))
    out = softmax(scores, c["safe"]) @ v
    same(t["out"], out, "attend " + " ".join(args))


def check_mask(rng):
    kind = rng.choice(["causal", "padding", "both", "window"])
    L = rng.randint(1, 6)
    S = rng.randint(1, 7)
    align = rng.choice(["upper-left", "lower-right"])
    args = ["mask", "--kind", kind, "--len", str(L), "--kv-len", str(S), "--softmax", rng.choice(["plain", "safe"]),
            "--seed", str(rng.randint(0, 999)), "--fill", rng.choice(["-inf", "-1e9"])]
    lengths = [S]
    if kind in ("padding", "both"):
        lengths = [rng.randint(0, S) for _ in range(rng.randint(1, 3))]
        args += ["--lengths", ",".join(map(str, lengths))]
    else:
        args += ["--align", align]
    window = rng.randint(1, 3)
    if kind == "window":
        args += ["--window", str(window)]
    t, doc = run(args + ["--show", "scores,weights"])
    fill = float(args[args.index("--fill") + 1])
    vis = visible(kind, L, S, lengths, window, align if kind not in ("padding", "both") else "upper-left")
    if kind in ("causal", "both", "window") and kind != "both":
        vis = visible(kind, L, S, [S] * t["scores"].shape[0], window, align)
    scores = t["scores"] + torch.where(vis, 0.0, fill)
    same(t["weights"], softmax(scores, "safe" in args), "mask " + " ".join(args))


def check_rope(rng):
    d = rng.choice([2, 4, 8])
    L = rng.randint(1, 40)
    style = rng.choice(["interleaved", "half"])
    t, doc = run(["rope", "--len", str(L), "--dim", str(d), "--style", style, "--seed", str(rng.randint(0, 999)),
                  "--show", "q,q_rot"])
    same(t["q_rot"], rope(t["q"], torch.arange(L, dtype=torch.float64), style), f"rope d={d} L={L} {style}")


def check_pe_alibi(rng):
    L, D = rng.randint(1, 50), 2 * rng.randint(1, 8)
    t, doc = run(["pe", "--len", str(L), "--dim", str(D), "--show", "pe"])
    same(t["pe"], sinusoidal(torch.arange(L, dtype=torch.float64), D), f"pe L={L} D={D}")
    H, L = rng.randint(1, 12), rng.randint(1, 10)
    t, doc = run(["alibi", "--heads", str(H), "--len", str(L), "--show", "bias"])
    pos = torch.arange(L, dtype=torch.float64)
    same(t["bias"], -torch.tensor(get_slopes(H))[:, None, None] * (pos[:, None] - pos[None, :]).abs(), f"alibi H={H} L={L}")


def main():
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    for n in range(cases):
        rng.choice([check_attend, check_attend, check_mask, check_rope, check_pe_alibi])(rng)
    print(f"{cases} random configurations: attnlab and PyTorch agree")


if __name__ == "__main__":
    main()
