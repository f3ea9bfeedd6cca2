#!/usr/bin/python3
"""Reference fixtures for attnlab's tests, computed with PyTorch on the CPU.

Source: PyTorch (Debian's python3-torch); the version is written into data/fixtures/VERSIONS.
Each fixture reproduces a well-known reference implementation line for line:
  - pe_interleaved_exp_log_*: The Annotated Transformer / the PyTorch tutorial's
    PositionalEncoding (div_term = exp(arange(0, d, 2) * -(ln(10000) / d))).
  - pe_interleaved_pow_*: the same table with 1 / 10000 ** (arange(0, d, 2) / d).
  - pe_concat_exp_log_*: fairseq's SinusoidalPositionalEmbedding.get_embedding
    (half_dim = d // 2, emb = exp(arange(half_dim) * -(ln(10000) / (half_dim - 1))), [sin | cos]).
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


def save(name, tensor):
    np.save(os.path.join(OUT, name + ".npy"), tensor.numpy())


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    for dtype, tag in ((torch.float32, "float32"), (torch.float64, "float64")):
        save(f"pe_interleaved_exp_log_{tag}", pe_interleaved(64, 16, "exp_log", dtype))
        save(f"pe_interleaved_pow_{tag}", pe_interleaved(64, 16, "pow", dtype))
        save(f"pe_concat_exp_log_{tag}", pe_concat(64, 16, dtype))
    with open(os.path.join(OUT, "VERSIONS"), "w") as f:
        f.write(f"torch {torch.__version__}\nnumpy {np.__version__}\n")


if __name__ == "__main__":
    main()
