#!/usr/bin/python3
"""Reference fixtures for attnlab's tests, computed with PyTorch on the CPU.

Source: PyTorch (Debian's python3-torch); the version is written into data/fixtures/VERSIONS.
Each fixture reproduces a well-known reference implementation line for line:
  - pe_interleaved_exp_log_*: The Annotated Transformer / the PyTorch tutorial's
    PositionalEncoding (div_term = exp(arange(0, d, 2) * -(ln(10000) / d))).
  - pe_interleaved_pow_*: the same table with 1 / 10000 ** (arange(0, d, 2) / d).
  - pe_concat_exp_log_*: fairseq's SinusoidalPositionalEmbedding.get_embedding
    (half_dim = d // 2, emb = exp(arange(half_dim) * -(ln(10000) / (half_dim - 1))), [sin | cos]).
  - rope_*: RoPE on a fixed input q (rope_q.npy) in the two pairings: rotate_half as in
    Hugging Face transformers' apply_rotary_pos_emb, and torch.view_as_complex as in Meta's
    LLaMA reference code (the articles' interleaved form).
  - rope_theta_*: inverse frequencies under each scaling method, transcribed from Hugging Face
    transformers' modeling_rope_utils (_compute_default/linear/dynamic_ntk/yarn/llama3) and the
    NTK-aware formula base * factor ** (d / (d - 2)); d = 64, base 10000, factor 4, L0 = 16,
    sequence length 64 (dynamic), llama3 with factor 8 and its default 1 / 4 frequency factors.
  - mask_*: PyTorch's own mask constructions: the causal mask as
    nn.Transformer.generate_square_subsequent_mask builds it (triu of -inf, diagonal 1), the
    lower-right causal mask of a decoder step after cached keys (triu with diagonal S - L + 1,
    as torch.nn.attention.bias.causal_lower_right defines it), and key_padding_mask (True =
    ignore) beside the boolean attn_mask of scaled_dot_product_attention (True = may attend).
  - attn_*: softmax(q k^T / sqrt(d) + mask + bias) v in float64, written from the definitions
    with plain torch operations (Debian's PyTorch 1.13 has no lower-right helper and no GQA in
    its fused attention): key/value heads shared by repeat_interleave (grouped-query), the
    masks above, and ALiBi's -m|i - j| with the slopes of the paper's get_slopes. The inputs
    are saved beside the outputs (attn_q, attn_k, attn_v).
  - nn_transformer_encoder: torch.nn.TransformerEncoder (2 layers of TransformerEncoderLayer,
    d_model 8, 2 heads, dropout 0, float64, torch.manual_seed(0)) run on X [1, 5, 8] and on PX
    with the permutation 2, 0, 4, 1, 3: a [3, 5, 8] array holding X, Enc(X) and Enc(PX). The
    program embeds it and measures from it whether any position entered (the module adds none).
  - nn_transformer_src_mask: torch.nn.Transformer (1 encoder and 1 decoder layer, d_model 8,
    2 heads, dropout 0, float64, torch.manual_seed(0)) called as model(src, tgt) with every mask
    left at its default; a forward hook on model.encoder records the encoder's output (the
    memory) for src [1, 5, 8] and for src with its last token redrawn. Then the same two with
    src_mask = generate_square_subsequent_mask(5) passed explicitly: a [6, 5, 8] array holding
    src, src', memory(src), memory(src'), causal memory(src), causal memory(src').
  - precision_conversions: float16 and bfloat16 as PyTorch's .half() and .bfloat16() round
    float64 and float32 values (ties, subnormals, overflow, NaN), for the precision lab.
  - pe_interleaved_exp_log_float16/bfloat16, attn_causal_float16/bfloat16: the PE module and
    causal attention computed in the 16-bit dtypes (see precision_lab_fixtures).
  - t5_buckets: T5's relative position buckets, transcribed from Hugging Face transformers'
    T5Attention._relative_position_bucket (modeling_t5.py, v4.15.0; the same on main), for the
    offsets j - i = -300..300 (columns) under the configurations of T5_CONFIGS (rows, in order):
    (num_buckets, max_distance, bidirectional). The log is torch.log of a float32 tensor, as
    there, so boundary offsets round exactly as Hugging Face's do.
  - shaw_*: relative position representations written from Shaw et al. 2018, §3.1-3.2, with
    plain torch operations in float64: rel_index = clamp(j - i, -K, K) + K, scores =
    (q k^T + einsum(q, rel_k[rel_index])) / sqrt(d), weights = softmax (the causal mask filled
    with -inf where j > i), out = weights v + einsum(weights, rel_v[rel_index]). B 1, L 5, E 8,
    H 2, K 2, torch.manual_seed(0); the inputs (shaw_x, shaw_w_q/k/v stored [in, out],
    shaw_rel_k, shaw_rel_v) beside scores and out without a mask and with the causal one.
  - grad_<config>_*: the attention block's backward pass by PyTorch autograd in float64, for
    the loss sum(d_out * out_merged), written from the definitions with plain torch operations:
    X [B, L, E] (and X_kv [B, S, E] for cross-attention) through sinusoidal PE (interleaved,
    exp_log), the projections X W with W stored [in, out], RoPE on q and k (the view_as_complex
    pairing of Meta's LLaMA, base 10000, positions 0, 1, ...), key/value heads shared by
    repeat_interleave, scores / sqrt(d) plus ALiBi's -m|i - j| (get_slopes), masked_fill with -inf,
    softmax, weights v. Intermediates keep their gradients with retain_grad(); masked_fill's output
    is the softmax's input, so its gradient is d_scores. torch.manual_seed(0) per configuration;
    the inputs (x, x_kv, w_q, w_k, w_v, d_out) are saved beside every gradient. Configurations
    in GRAD_CONFIGS.
  - train_<scheme>_*: the decoder of `attnlab train` written from its definition with plain torch
    operations in float64 (token embedding, learned or sinusoidal positions, pre-norm blocks of
    causal attention with RoPE, ALiBi or T5's decoder bias (one table [32, H] read by every
    layer through T5Attention._relative_position_bucket with bidirectional=False, max_distance
    128), or Shaw et al.'s rel_k and rel_v per layer (2 * 16 + 1 rows, clip(j - i, -16, 16) + 16)
    and a GELU (tanh) MLP of 4C, a final LayerNorm, the
    unembedding, cross_entropy with ignore_index=-1), trained by torch.optim.AdamW (lr 1e-2,
    betas 0.9, 0.999, eps 1e-8, weight decay 0.01) with clip_grad_norm_(1.0), three steps on one
    batch. V 11, C 16, 2 layers, 2 heads, B 3, T 6 (24 for t5 and shaw, to reach t5's log-spaced
    buckets and shaw's clipping),
    torch.manual_seed(0): the initial parameters
    (one vector in the program's layout order), the batch's tokens and targets, the parameters
    after 1 and after 3 steps, and the three losses.
The tests read these .npy files; building and testing never need PyTorch.
Run from the repository root with Debian's Python:  /usr/bin/python3 data/make_fixtures.py
"""
import math
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def pe_interleaved(length, d, method, dtype):
    position = torch.arange(0, length, dtype=dtype).unsqueeze(1)
    if method == "exp_log":
        div_term = torch.exp(torch.arange(0, d, 2, dtype=dtype) * -(math.log(10000.0) / d))
    else:
        div_term = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=dtype) / d))
    pe = torch.zeros(length, d, dtype=dtype)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def pe_concat(length, d, dtype):
    half_dim = d // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=dtype) * -emb)
    emb = torch.arange(length, dtype=dtype).unsqueeze(1) * emb.unsqueeze(0)
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)


def rope_default_inv_freq(dim, base):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def rope_theta(method, dim=64, base=10000.0, factor=4.0, l0=16, seq_len=64):
    if method == "none":
        return rope_default_inv_freq(dim, base)
    if method == "linear":
        return rope_default_inv_freq(dim, base) / factor
    if method == "ntk":
        return rope_default_inv_freq(dim, base * factor ** (dim / (dim - 2)))
    if method == "dynamic":
        seq = max(seq_len, l0)
        return rope_default_inv_freq(dim, base * ((factor * seq / l0) - (factor - 1)) ** (dim / (dim - 2)))
    if method == "yarn":
        def find_correction_dim(num_rotations):
            return (dim * math.log(l0 / (num_rotations * 2 * math.pi))) / (2 * math.log(base))
        low = max(math.floor(find_correction_dim(32)), 0)
        high = min(math.ceil(find_correction_dim(1)), dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        extrapolation = 1.0 / pos_freqs
        interpolation = 1.0 / (factor * pos_freqs)
        extrapolation_factor = 1 - ramp
        return interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor
    if method == "llama3":
        factor, low_ff, high_ff = 8.0, 1.0, 4.0
        inv_freq = rope_default_inv_freq(dim, base)
        low_wl, high_wl = l0 / low_ff, l0 / high_ff
        wavelen = 2 * math.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_wl, inv_freq / factor, inv_freq)
        smooth = (l0 / wavelen - low_ff) / (high_ff - low_ff)
        smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        return torch.where(medium, smoothed, inv_freq_llama)
    raise ValueError(method)


def rope_fixtures():
    length, d = 16, 8
    q = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 1, length, d)).astype(np.float32))
    save("rope_q", q)
    inv_freq = rope_default_inv_freq(d, 10000.0)
    freqs = torch.outer(torch.arange(length, dtype=torch.float32), inv_freq)
    # Hugging Face: cos/sin of cat(freqs, freqs); q * cos + rotate_half(q) * sin.
    emb = torch.cat((freqs, freqs), dim=-1)
    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
        return torch.cat((-x2, x1), dim=-1)
    save("rope_q_rot_half", q * emb.cos() + rotate_half(q) * emb.sin())
    # Meta's LLaMA: view pairs (2i, 2i+1) as complex numbers, multiply by polar(1, freqs).
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    q_complex = torch.view_as_complex(q.reshape(*q.shape[:-1], -1, 2))
    save("rope_q_rot_interleaved", torch.view_as_real(q_complex * freqs_cis).flatten(3))
    for method in ("none", "linear", "ntk", "dynamic", "yarn", "llama3"):
        save(f"rope_theta_{method}", rope_theta(method))


def causal_mask(L, S, lower_right):
    # -inf where key j lies after the query's own position; 0 elsewhere.
    diagonal = (S - L + 1) if lower_right else 1
    return torch.triu(torch.full((L, S), float("-inf"), dtype=torch.float64), diagonal=diagonal)


def alibi_slopes(n):
    # Press et al. 2022, the reference get_slopes.
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def attention(q, k, v, additive):
    # additive: [B or 1, H or 1, L, S]; k, v carry Hkv heads, each shared by H / Hkv query heads.
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + additive
    return torch.softmax(scores, dim=-1) @ v


def mask_and_attention_fixtures():
    save("mask_causal_5", causal_mask(5, 5, False))
    save("mask_causal_lower_right_3x5", causal_mask(3, 5, True))
    lengths = torch.tensor([2, 4])
    key_padding_mask = torch.arange(4)[None, :] >= lengths[:, None]
    save("mask_key_padding_2_4", key_padding_mask)
    save("mask_attn_bool_2_4", ~key_padding_mask)
    rng = np.random.default_rng(1)
    B, H, Hkv, L, S, d = 2, 4, 2, 5, 5, 3
    q = torch.from_numpy(rng.standard_normal((B, H, L, d)))
    k = torch.from_numpy(rng.standard_normal((B, Hkv, S, d)))
    v = torch.from_numpy(rng.standard_normal((B, Hkv, S, d)))
    for name, t in (("attn_q", q), ("attn_k", k), ("attn_v", v)):
        save(name, t)
    save("attn_causal", attention(q, k, v, causal_mask(L, S, False)))
    # a decoder step: the last 3 queries after 2 cached keys
    save("attn_causal_lower_right", attention(q[:, :, 2:], k, v, causal_mask(3, S, True)))
    padding = torch.zeros(B, 1, 1, S, dtype=torch.float64).masked_fill(
        (torch.arange(S)[None, :] >= torch.tensor([3, 5])[:, None])[:, None, None, :], float("-inf"))
    save("attn_padding_3_5", attention(q, k, v, padding))
    distance = (torch.arange(L)[:, None] - torch.arange(S)[None, :]).abs().double()
    bias = -torch.tensor(alibi_slopes(H), dtype=torch.float64)[:, None, None] * distance
    save("attn_alibi", attention(q, k, v, bias[None]))


def nn_transformer_fixture():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=2).double().eval()
    x = torch.randn(1, 5, 8, dtype=torch.float64)
    perm = [2, 0, 4, 1, 3]
    with torch.no_grad():
        out = encoder(x)
        out_perm = encoder(x[:, perm])
    save("nn_transformer_encoder", torch.cat([x, out, out_perm], dim=0))


def nn_transformer_src_mask_fixture():
    torch.manual_seed(0)
    model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                 dim_feedforward=16, dropout=0.0, batch_first=True).double().eval()
    src = torch.randn(1, 5, 8, dtype=torch.float64)
    changed = src.clone()
    changed[:, 4] = torch.randn(8, dtype=torch.float64)
    tgt = torch.randn(1, 3, 8, dtype=torch.float64)
    memory = []
    model.encoder.register_forward_hook(lambda module, args, out: memory.append(out))
    causal = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
    with torch.no_grad():
        for s in (src, changed):
            model(s, tgt)
        for s in (src, changed):
            model(s, tgt, src_mask=causal)
    save("nn_transformer_src_mask", torch.cat([src, changed] + memory, dim=0))


def precision_fixture():
    """float16 and bfloat16 as PyTorch's CPU .half() and .bfloat16() round, from float64 and
    from float32: ties to even, subnormals, overflow, NaN, and a value that rounds differently
    directly and through float32. Rows: input (float64), x.half(), x.bfloat16(),
    x.float().half(), x.float().bfloat16(), each back in float64."""
    values = [0.0, -0.0, 1.0, -1.0, 65504.0, 65505.0, 65519.0, 65520.0, 1e9, -1e9, 1e-9,
              2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -25, 2.0 ** -26, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11,
              1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 256.0, 257.0, 258.0, 259.0, 511.0, 513.0, 2047.0, 2049.0, 4097.0,
              math.pi, -998244352.0, 1e-40, 3.4e38, 1e39, 1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40,
              -2.0 ** -133, 0.1, -0.3, 100000.0, float("inf"), float("-inf"), float("nan")]
    x = torch.tensor(values, dtype=torch.float64)
    rows = [x, x.half().double(), x.bfloat16().double(), x.float().half().double(), x.float().bfloat16().double()]
    save("precision_conversions", torch.stack(rows))


def attention_16bit(q, k, v, additive, dtype):
    """The 16-bit semantics of the precision lab, op by op with PyTorch: q, k, v stored in the
    dtype (through float32, as .to() converts float64); the scores q k^T / sqrt(d) in float32,
    stored; + mask in the dtype; the softmax in float32 on the stored scores, stored; w v in
    float32, stored. (PyTorch 1.13 has no CPU matmul for float16, so the products are taken in
    float32 explicitly, which is what a 16-bit matmul that accumulates in float32 computes.)"""
    group = q.shape[1] // k.shape[1]
    qh, kh, vh = (t.float().to(dtype) for t in (q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)))
    scores = (qh.float() @ kh.float().transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))).to(dtype)
    scores = scores + additive.to(dtype)
    weights = torch.softmax(scores.float(), dim=-1).to(dtype)
    return (weights.float() @ vh.float()).to(dtype)


def pe_interleaved_16bit(length, d, dtype):
    """pe_interleaved's exp-log table in a 16-bit dtype. PyTorch 1.13 multiplies float16 on the
    CPU (a Python scalar is converted to the dtype first) but has no float16 exp, sin or cos
    there: those run in float32 and their results are stored in the dtype, one op at a time."""
    def f32(fn, t):
        return fn(t.float()).to(dtype)
    position = torch.arange(0, length, dtype=dtype).unsqueeze(1)
    div_term = f32(torch.exp, torch.arange(0, d, 2, dtype=dtype) * -(math.log(10000.0) / d))
    angle = position * div_term
    pe = torch.zeros(length, d, dtype=dtype)
    pe[:, 0::2] = f32(torch.sin, angle)
    pe[:, 1::2] = f32(torch.cos, angle)
    return pe


def precision_lab_fixtures():
    """The articles' PE module and causal attention in float16 and bfloat16 (saved as float64
    holding the 16-bit values): pe_interleaved_exp_log_{dtype} with 300 positions (bfloat16
    rounds arange(300) to 256 at 257), attn_causal_{dtype} on attn_q, attn_k, attn_v."""
    q, k, v = (torch.from_numpy(np.load(os.path.join(OUT, name + ".npy"))) for name in ("attn_q", "attn_k", "attn_v"))
    for dtype, tag in ((torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        save(f"pe_interleaved_exp_log_{tag}", pe_interleaved_16bit(300, 16, dtype).double())
        save(f"attn_causal_{tag}", attention_16bit(q, k, v, causal_mask(5, 5, False), dtype).double())


T5_CONFIGS = [(32, 128, True), (32, 128, False), (7, 20, True), (33, 50, False), (8, 16, True), (5, 9, False), (64, 1000, True)]


def t5_relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def t5_fixture():
    offsets = torch.arange(-300, 301, dtype=torch.long)
    save("t5_buckets", torch.stack([t5_relative_position_bucket(offsets, bi, n, d) for n, d, bi in T5_CONFIGS]))


def shaw_fixtures():
    torch.manual_seed(0)
    B, L, E, H, K = 1, 5, 8, 2, 2
    d = E // H
    x = torch.randn(B, L, E, dtype=torch.float64)
    w_q, w_k, w_v = (torch.randn(E, E, dtype=torch.float64) / math.sqrt(E) for _ in range(3))
    rel_k, rel_v = torch.randn(2 * K + 1, d, dtype=torch.float64), torch.randn(2 * K + 1, d, dtype=torch.float64)
    index = (torch.arange(L)[None, :] - torch.arange(L)[:, None]).clamp(-K, K) + K

    def heads(t):
        return t.view(B, L, H, d).transpose(1, 2)

    q, k, v = heads(x @ w_q), heads(x @ w_k), heads(x @ w_v)
    for name, t in (("x", x), ("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("rel_k", rel_k), ("rel_v", rel_v)):
        save("shaw_" + name, t)
    for mask in ("none", "causal"):
        scores = (q @ k.transpose(-1, -2) + torch.einsum("bhid,ijd->bhij", q, rel_k[index])) / math.sqrt(d)
        if mask == "causal":
            scores = scores.masked_fill(torch.ones(L, L).triu(1).bool(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        save(f"shaw_scores_{mask}", scores)
        save(f"shaw_out_{mask}", weights @ v + torch.einsum("bhij,ijd->bhid", weights, rel_v[index]))


# name: (B, L, S or None for self-attention, E, H, Hkv, pe, mask, lengths)
GRAD_CONFIGS = {
    "rope_causal_gqa": (1, 5, None, 8, 2, 1, "rope", "causal", None),
    "alibi_padding": (2, 4, None, 8, 2, 2, "alibi", "padding", [4, 2]),
    "sinusoidal_cross": (1, 3, 5, 8, 2, 2, "sinusoidal", "none", None),
}


def rope_interleaved(t, positions):
    d = t.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))  # in float64 throughout
    freqs = torch.outer(positions.to(torch.float64), inv_freq)
    t_complex = torch.view_as_complex(t.reshape(*t.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(t_complex * torch.polar(torch.ones_like(freqs), freqs)).flatten(3)


def grad_fixture(name, B, L, S, E, H, Hkv, pe, mask, lengths):
    torch.manual_seed(0)
    f64, d, cross = torch.float64, E // H, S is not None
    S = S if cross else L
    x = torch.randn(B, L, E, dtype=f64, requires_grad=True)
    x_kv = torch.randn(B, S, E, dtype=f64, requires_grad=True) if cross else x
    w_q, w_k, w_v = [(torch.randn(E, n, dtype=f64) / math.sqrt(E)).requires_grad_() for n in (E, Hkv * d, Hkv * d)]
    d_out = torch.randn(B, L, E, dtype=f64)
    x_in, kv_in = x, x_kv
    if pe == "sinusoidal":
        table = pe_interleaved(max(L, S), E, "exp_log", f64)
        x_in, kv_in = x + table[:L], x_kv + table[:S]

    def heads(t, n):
        return t.view(B, -1, n, d).transpose(1, 2)

    q, k, v = heads(x_in @ w_q, H), heads(kv_in @ w_k, Hkv), heads(kv_in @ w_v, Hkv)
    q_rot, k_rot = q, k
    if pe == "rope":
        q_rot, k_rot = rope_interleaved(q, torch.arange(L)), rope_interleaved(k, torch.arange(S))
    group = H // Hkv
    scores = q_rot @ k_rot.repeat_interleave(group, dim=1).transpose(-1, -2) / math.sqrt(d)
    if pe == "alibi":
        distance = (torch.arange(L)[:, None] - torch.arange(S)[None, :]).abs().to(f64)
        scores = scores - torch.tensor(alibi_slopes(H), dtype=f64)[:, None, None] * distance
    hidden = torch.zeros(B, 1, L, S, dtype=torch.bool)
    if mask == "causal":
        hidden |= torch.ones(L, S).triu(1).bool()
    if mask == "padding":
        hidden |= (torch.arange(S)[None, :] >= torch.tensor(lengths)[:, None])[:, None, None, :]
    scores = scores.masked_fill(hidden, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v.repeat_interleave(group, dim=1)
    named = {"q": q, "k": k, "v": v, "q_rot": q_rot, "k_rot": k_rot, "scores": scores, "weights": weights}
    for t in named.values():
        t.retain_grad()
    (d_out * out.transpose(1, 2).reshape(B, L, E)).sum().backward()
    prefix = f"grad_{name}_"
    inputs = {"x": x, "w_q": w_q, "w_k": w_k, "w_v": w_v, "d_out": d_out}
    if cross:
        inputs["x_kv"] = x_kv
    for key, t in inputs.items():
        save(prefix + key, t.detach())
        if t.requires_grad:
            save(prefix + "d_" + key, t.grad)
    for key, t in named.items():
        if pe == "rope" or key not in ("q_rot", "k_rot"):
            save(prefix + "d_" + key, t.grad)


SHAW_CLIP = 16


def train_layout(V, C, layers, T, pe, H):
    F = 4 * C
    names = [("wte", (V, C))] + ([("wpe", (T, C))] if pe == "learned" else []) + ([("rel_bias", (32, H))] if pe == "t5" else [])
    for i in range(layers):
        p = f"l{i}_"
        names += [(p + "ln1_w", (C,)), (p + "ln1_b", (C,)), (p + "w_q", (C, C)), (p + "w_k", (C, C)), (p + "w_v", (C, C)),
                  (p + "w_o", (C, C))]
        if pe == "shaw":
            names += [(p + "rel_k", (2 * SHAW_CLIP + 1, C // H)), (p + "rel_v", (2 * SHAW_CLIP + 1, C // H))]
        names += [(p + "ln2_w", (C,)), (p + "ln2_b", (C,)), (p + "w_1", (C, F)), (p + "b_1", (F,)), (p + "w_2", (F, C)), (p + "b_2", (C,))]
    return names + [("lnf_w", (C,)), ("lnf_b", (C,)), ("w_u", (C, V))]


def decoder_loss(w, tokens, targets, V, C, layers, H, pe):
    B, T = tokens.shape
    d = C // H
    x = w["wte"][tokens]
    if pe == "learned":
        x = x + w["wpe"][:T]
    if pe == "sinusoidal":
        x = x + pe_interleaved(T, C, "exp_log", torch.float64)
    hidden = torch.ones(T, T).triu(1).bool()
    if pe == "t5":  # T5Attention.compute_bias of a decoder: one table, every layer
        key_minus_query = torch.arange(T)[None, :] - torch.arange(T)[:, None]
        t5_bias = w["rel_bias"][t5_relative_position_bucket(key_minus_query, False, 32, 128)].permute(2, 0, 1)
    # Shaw et al. 2018 eq. (3)-(4): row clip(j - i, -k, k) + k of the layer's tables, for every head
    shaw_index = (torch.arange(T)[None, :] - torch.arange(T)[:, None]).clamp(-SHAW_CLIP, SHAW_CLIP) + SHAW_CLIP
    for i in range(layers):
        p = f"l{i}_"
        h = torch.nn.functional.layer_norm(x, (C,), w[p + "ln1_w"], w[p + "ln1_b"], eps=1e-5)
        q, k, v = [(h @ w[p + n]).view(B, T, H, d).transpose(1, 2) for n in ("w_q", "w_k", "w_v")]
        if pe == "rope":
            q, k = rope_interleaved(q, torch.arange(T)), rope_interleaved(k, torch.arange(T))
        scores = q @ k.transpose(-1, -2)
        if pe == "shaw":
            scores = scores + torch.einsum("bhid,ijd->bhij", q, w[p + "rel_k"][shaw_index])
        scores = scores / math.sqrt(d)
        if pe == "alibi":
            distance = (torch.arange(T)[:, None] - torch.arange(T)[None, :]).to(torch.float64)
            scores = scores - torch.tensor(alibi_slopes(H), dtype=torch.float64)[:, None, None] * distance
        if pe == "t5":
            scores = scores + t5_bias
        probs = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1)
        a = probs @ v
        if pe == "shaw":
            a = a + torch.einsum("bhij,ijd->bhid", probs, w[p + "rel_v"][shaw_index])
        x = x + a.transpose(1, 2).reshape(B, T, C) @ w[p + "w_o"]
        h = torch.nn.functional.layer_norm(x, (C,), w[p + "ln2_w"], w[p + "ln2_b"], eps=1e-5)
        x = x + torch.nn.functional.gelu(h @ w[p + "w_1"] + w[p + "b_1"], approximate="tanh") @ w[p + "w_2"] + w[p + "b_2"]
    x = torch.nn.functional.layer_norm(x, (C,), w["lnf_w"], w["lnf_b"], eps=1e-5)
    logits = x @ w["w_u"]
    return torch.nn.functional.cross_entropy(logits.view(B * T, V), targets.view(-1), ignore_index=-1)


def train_fixture(pe):
    torch.manual_seed(0)
    # t5 and shaw at 24 positions: distances 16 to 23 reach t5's log-spaced buckets 16 to 18,
    # and shaw's clipping at 16
    V, C, layers, H, B, T = 11, 16, 2, 2, 3, 24 if pe in ("t5", "shaw") else 6
    w = {}
    for name, shape in train_layout(V, C, layers, T, pe, H):
        if name.endswith("_w") and "ln" in name:
            w[name] = torch.ones(shape, dtype=torch.float64)
        elif "_b" in name and len(shape) == 1:
            w[name] = torch.zeros(shape, dtype=torch.float64)
        else:
            w[name] = torch.randn(shape, dtype=torch.float64) * 0.02
        w[name].requires_grad_()
    tokens = torch.randint(0, V, (B, T))
    targets = torch.randint(0, V, (B, T))
    targets[:, :2] = -1

    def flat():
        return torch.cat([w[n].detach().reshape(-1) for n, _ in train_layout(V, C, layers, T, pe, H)])

    save(f"train_{pe}_init", flat())
    save(f"train_{pe}_tokens", tokens.to(torch.float64))
    save(f"train_{pe}_targets", targets.to(torch.float64))
    params = [w[n] for n, _ in train_layout(V, C, layers, T, pe, H)]
    opt = torch.optim.AdamW(params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    losses = []
    for step in range(3):
        opt.zero_grad()
        loss = decoder_loss(w, tokens, targets, V, C, layers, H, pe)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(loss.item())
        if step in (0, 2):
            save(f"train_{pe}_after_{step + 1}", flat())
    save(f"train_{pe}_losses", torch.tensor(losses, dtype=torch.float64))


def save(name, tensor):
    np.save(os.path.join(OUT, name + ".npy"), tensor.numpy())


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    for dtype, tag in ((torch.float32, "float32"), (torch.float64, "float64")):
        save(f"pe_interleaved_exp_log_{tag}", pe_interleaved(64, 16, "exp_log", dtype))
        save(f"pe_interleaved_pow_{tag}", pe_interleaved(64, 16, "pow", dtype))
        save(f"pe_concat_exp_log_{tag}", pe_concat(64, 16, dtype))
    rope_fixtures()
    mask_and_attention_fixtures()
    nn_transformer_fixture()
    nn_transformer_src_mask_fixture()
    precision_fixture()
    precision_lab_fixtures()
    t5_fixture()
    shaw_fixtures()
    for name, config in GRAD_CONFIGS.items():
        grad_fixture(name, *config)
    for pe in ("alibi", "rope", "learned", "sinusoidal", "t5", "shaw"):
        train_fixture(pe)
    with open(os.path.join(OUT, "VERSIONS"), "w") as f:
        f.write(f"torch {torch.__version__}\nnumpy {np.__version__}\n")


if __name__ == "__main__":
    main()
