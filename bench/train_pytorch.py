#!/usr/bin/python3
"""`attnlab train` against the same decoder trained by PyTorch on the CPU, tokens per second.

Usage (after a release build; needs Debian's python3-torch, which the build and tests do not):
    /usr/bin/python3 bench/train_pytorch.py [--attnlab build/release/attnlab] [--steps 300] [--pe alibi]
                                            [--threads 2] [--repeat 3]

The PyTorch model is written from the definitions attnlab's manual (docs/experiments.md) gives for `train` (the same as
data/make_fixtures.py's decoder_loss, whose three AdamW steps attnlab matches to 1e-12 in float64):
token embedding, pre-norm blocks of causal attention (ALiBi, RoPE, learned or sinusoidal
positions) and a GELU MLP of 4C, a final LayerNorm, the unembedding, cross-entropy; AdamW
(betas 0.9, 0.999, eps 1e-8, weight decay 0.01) with clip_grad_norm_(1.0). float32, the
default sizes of `attnlab train` (V 16, C 64, 2 layers, 4 heads, k-back at L 16, 16 sequences a
step), the same thread count for both. Each side runs --repeat times, interleaved; the script
prints the medians and ranges of tokens per second and their ratio.
"""
import argparse
import json
import math
import statistics
import subprocess
import time

import torch

F = torch.nn.functional


def alibi_slopes(n):
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


class Decoder(torch.nn.Module):
    def __init__(self, V, C, layers, H, T, pe):
        super().__init__()
        self.V, self.C, self.H, self.T, self.pe = V, C, H, T, pe
        p = lambda *shape: torch.nn.Parameter(torch.randn(*shape) * 0.02)
        self.wte, self.w_u = p(V, C), p(C, V)
        self.wpe = p(T, C) if pe == "learned" else None
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            b = torch.nn.Module()
            b.ln1, b.ln2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
            b.w_q, b.w_k, b.w_v, b.w_o = p(C, C), p(C, C), p(C, C), p(C, C)
            b.w_1, b.b_1, b.w_2, b.b_2 = p(C, 4 * C), torch.nn.Parameter(torch.zeros(4 * C)), p(4 * C, C), torch.nn.Parameter(torch.zeros(C))
            self.blocks.append(b)
        self.lnf = torch.nn.LayerNorm(C)
        d = C // H
        distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).float()
        self.register_buffer("bias", -torch.tensor(alibi_slopes(H))[:, None, None] * distance if pe == "alibi" else torch.zeros(1))
        self.register_buffer("hidden", torch.ones(T, T).triu(1).bool())
        freqs = torch.outer(torch.arange(T).float(), 1.0 / 10000.0 ** (torch.arange(0, d, 2).float() / d))
        self.register_buffer("cis", torch.polar(torch.ones_like(freqs), freqs))

    def rope(self, t):
        c = torch.view_as_complex(t.reshape(*t.shape[:-1], -1, 2).contiguous())
        return torch.view_as_real(c * self.cis).flatten(3)

    def forward(self, tokens, targets):
        B, T = tokens.shape
        C, H = self.C, self.H
        d = C // H
        x = self.wte[tokens] + (self.wpe[:T] if self.wpe is not None else 0)
        for b in self.blocks:
            h = b.ln1(x)
            q, k, v = [(h @ w).view(B, T, H, d).transpose(1, 2) for w in (b.w_q, b.w_k, b.w_v)]
            if self.pe == "rope":
                q, k = self.rope(q), self.rope(k)
            scores = q @ k.transpose(-1, -2) / math.sqrt(d)
            if self.pe == "alibi":
                scores = scores + self.bias
            a = torch.softmax(scores.masked_fill(self.hidden, float("-inf")), dim=-1) @ v
            x = x + a.transpose(1, 2).reshape(B, T, C) @ b.w_o
            x = x + F.gelu(b.ln2(x) @ b.w_1 + b.b_1, approximate="tanh") @ b.w_2 + b.b_2
        logits = self.lnf(x) @ self.w_u
        return F.cross_entropy(logits.view(B * T, self.V), targets.view(-1), ignore_index=-1)


def torch_tokens_per_second(args):
    torch.manual_seed(0)
    V, C, layers, H, L, B, k = 16, 64, 2, 4, 16, 16, 1
    model = Decoder(V, C, layers, H, L, args.pe)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    g = torch.Generator().manual_seed(0)
    start = time.perf_counter()
    for _ in range(args.steps):
        tokens = torch.randint(1, V, (B, L), generator=g)
        targets = torch.full((B, L), -1)
        targets[:, k:] = tokens[:, :-k]
        opt.zero_grad()
        loss = model(tokens, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return args.steps * B * L / (time.perf_counter() - start)


def attnlab_tokens_per_second(args):
    out = subprocess.run([args.attnlab, "train", "--steps", str(args.steps), "--pe", args.pe, "--threads", str(args.threads),
                          "--quiet", "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["measurements"]["tokens_per_second"]


def spread(xs):
    return f"{statistics.median(xs):,.0f} ({min(xs):,.0f}-{max(xs):,.0f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attnlab", default="build/release/attnlab")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--pe", default="alibi", choices=["none", "learned", "rope", "alibi"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ours, theirs = [], []
    for _ in range(args.repeat):
        ours.append(attnlab_tokens_per_second(args))
        theirs.append(torch_tokens_per_second(args))
    print(f"torch {torch.__version__}, {args.threads} threads, {args.steps} steps, --pe {args.pe}")
    print(f"attnlab tokens/s: {spread(ours)}")
    print(f"PyTorch tokens/s: {spread(theirs)}")
    print(f"attnlab / PyTorch: {statistics.median(ours) / statistics.median(theirs):.2f}")


if __name__ == "__main__":
    main()
