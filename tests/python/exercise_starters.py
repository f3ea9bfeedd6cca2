#!/usr/bin/env python3
"""The starters as a student meets them: run unfilled, they give an answer check.sh rejects;
check.sh names no far-off "closest" mistake for them and says an all-zero answer is one;
filled in with a solution written from the task's text alone, check.sh accepts it, and
`exercise grade` gives it full marks on the visible case and five hidden ones.

Usage: exercise_starters.py ATTNLAB [--every N]   (every exercise, or every N-th that
       `exercise list` lists, from the first)
Exits 77 (skipped) when numpy is missing: the starters need it, attnlab does not.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy  # noqa: F401
except ImportError:
    print("skipped: numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)

# Each body replaces the lines between the starter's "your code" markers. They follow the
# README's formulas, nothing from attnlab.
SOLUTIONS = {
    "pe": """
    pos = np.arange(L)[:, None]
    i = np.arange(D // 2)[None, :]
    angle = pos / 10000.0 ** (2 * i / D)
    pe = np.zeros((L, D))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
""",
    "pe-module": """
    B, L, D = x.shape
    pos = np.arange(max_len)[:, None]
    i = np.arange(D // 2)[None, :]
    angle = pos / 10000.0 ** (2 * i / D)
    table = np.zeros((max_len, D))
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle)
    return x + table[:L][None, :, :]
""",
    "learned-pe": """
    return x + pos_emb[: x.shape[1]][None, :, :]
""",
    "shaw-scores": """
    L, d = q.shape[2], q.shape[3]
    index = np.clip(np.arange(L)[None, :] - np.arange(L)[:, None], -K, K) + K
    return (q @ np.swapaxes(k, -1, -2) + np.einsum("bhid,ijd->bhij", q, rel_k[index])) / np.sqrt(d)
""",
    "decode-step": """
    B, H, N, d = q.shape
    theta = 10000.0 ** (-2.0 * np.arange(d // 2) / d)

    def rope(x, m):
        c, s = np.cos(m * theta), np.sin(m * theta)
        out = np.empty_like(x)
        out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
        out[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
        return out

    out = np.zeros((B, H, N - P, d))
    for n in range(P, N):
        qn = rope(q[:, :, n], n)
        keys = np.stack([rope(k[:, :, j], j) for j in range(n + 1)], axis=2)
        scores = np.einsum("bhd,bhjd->bhj", qn, keys) / np.sqrt(d)
        w = np.exp(scores - scores.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        out[:, :, n - P] = np.einsum("bhj,bhjd->bhd", w, v[:, :, : n + 1])
    return out
""",
    "t5-buckets": """
    n = np.arange(L)[None, :] - np.arange(L)[:, None]
    half = num_buckets // 2
    exact = half // 2
    a = np.abs(n)
    x = np.log(np.maximum(a, 1).astype(np.float32) / np.float32(exact)) / np.float32(np.log(max_distance / exact)) * np.float32(half - exact)
    far = np.minimum(exact + x.astype(np.int64), half - 1)
    return np.where(a < exact, a, far) + half * (n > 0)
""",
    "rope-interleaved": """
    L, d = q.shape[2], q.shape[3]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    angle = np.arange(L)[:, None] * theta[None, :]
    c, s = np.cos(angle), np.sin(angle)
    out = np.empty_like(q)
    out[..., 0::2] = q[..., 0::2] * c - q[..., 1::2] * s
    out[..., 1::2] = q[..., 0::2] * s + q[..., 1::2] * c
    return out
""",
    "rope-half": """
    L, d = q.shape[2], q.shape[3]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    angle = np.arange(L)[:, None] * theta[None, :]
    cos = np.cos(np.concatenate([angle, angle], axis=-1))
    sin = np.sin(np.concatenate([angle, angle], axis=-1))
    rotated = np.concatenate([-q[..., d // 2:], q[..., :d // 2]], axis=-1)
    return q * cos + rotated * sin
""",
    "alibi-slopes": """
    def power_of_2(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    c = 2 ** int(np.floor(np.log2(H)))
    if c == H:
        return np.array(power_of_2(H))
    return np.array(power_of_2(c) + power_of_2(2 * c)[0::2][:H - c])
""",
    "alibi-bias": """
    def power_of_2(n):
        return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]
    c = 2 ** int(np.floor(np.log2(H)))
    m = power_of_2(H) if c == H else power_of_2(c) + power_of_2(2 * c)[0::2][:H - c]
    distance = np.abs(np.arange(L)[:, None] - np.arange(L)[None, :])
    return -np.array(m)[:, None, None] * distance[None, :, :]
""",
    "causal-mask": """
    return np.triu(np.full((L, L), -np.inf), k=1)
""",
    "padding-mask": """
    return np.arange(L)[None, :] >= np.asarray(lengths)[:, None]
""",
    "position-without-pe": """
    scores = np.where(np.arange(L)[None, :] <= np.arange(L)[:, None], 0.0, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    v = np.zeros(L)
    v[0] = 1.0
    return weights @ v
""",
}

ATTENTION = """
    B, L, E = x.shape
    d = E // H
    def heads(t):
        return t.reshape(B, L, H, d).transpose(0, 2, 1, 3)
    q, k, v = heads(x @ w_q), heads(x @ w_k), heads(x @ w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    {mask}
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = weights @ v
    return out.transpose(0, 2, 1, 3).reshape(B, L, E)
"""
SOLUTIONS["attention"] = ATTENTION.replace("{mask}", "pass")
SOLUTIONS["masked-attention"] = ATTENTION.replace("{mask}", "scores = scores + np.triu(np.full((L, L), -np.inf), k=1)")
SOLUTIONS["permutation"] = """
    xp = x[np.asarray(perm)][None, :, :]
    B, L, E = xp.shape
    d = E // H
    def heads(t):
        return t.reshape(B, L, H, d).transpose(0, 2, 1, 3)
    q, k, v = heads(xp @ w_q), heads(xp @ w_k), heads(xp @ w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return (weights @ v).transpose(0, 2, 1, 3).reshape(L, E)
"""

SOLUTIONS["softmax-backward"] = """
    delta = (weights * d_weights).sum(axis=-1, keepdims=True)
    return weights * (d_weights - delta)
"""
SOLUTIONS["attention-backward"] = """
    B, L, E = x.shape
    d = E // H
    def heads(t):
        return t.reshape(B, L, H, d).transpose(0, 2, 1, 3)
    def merged(t):
        return t.transpose(0, 2, 1, 3).reshape(B, L, E)
    q, k, v = heads(x @ w_q), heads(x @ w_k), heads(x @ w_v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    d_o = heads(d_out)
    d_p = d_o @ v.transpose(0, 1, 3, 2)
    d_s = p * (d_p - (p * d_p).sum(axis=-1, keepdims=True))
    d_q = d_s @ k / np.sqrt(d)
    d_k = d_s.transpose(0, 1, 3, 2) @ q / np.sqrt(d)
    d_v = p.transpose(0, 1, 3, 2) @ d_o
    return merged(d_q) @ w_q.T + merged(d_k) @ w_k.T + merged(d_v) @ w_v.T
"""

MARKED = re.compile(r"(    # --- your code: start ---\n).*?(    # --- your code: end ---\n)", re.S)


def run(args, env, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def one(attnlab, name, env, tmp):
    folder = os.path.join(tmp, name)
    made = run([attnlab, "exercise", "new", name, folder, "--lang", "en", "--seed", "5"], env)
    if made.returncode != 0:
        return f"{name}: exercise new exited {made.returncode}: {made.stderr}"
    starter = os.path.join(folder, "starter.py")
    unfilled = run([sys.executable, starter], env)
    if unfilled.returncode != 0:
        return f"{name}: the unfilled starter does not run: {unfilled.stderr}"
    first = run([os.path.join(folder, "check.sh")], env)
    if first.returncode != 1:
        return f"{name}: check.sh did not reject the unfilled starter's answer"
    # the first run leads nowhere false: no "closest" mistake, and an all-zero answer is said to be one
    verdict = first.stdout.strip().splitlines()[-1]
    answer = numpy.load(os.path.join(folder, json.load(open(os.path.join(folder, "exercise.json")))["answer"]["file"]))
    if "closest" in first.stdout or (not answer.any() and "all_zero" not in verdict.split("; ")):
        return f"{name}: the unfilled starter's first check: {first.stdout[-600:]}"
    text = open(starter).read()
    filled, count = MARKED.subn(lambda m: m.group(1) + SOLUTIONS[name].strip("\n") + "\n" + m.group(2), text)
    if count != 1:
        return f"{name}: the starter has {count} marked regions, not 1"
    open(starter, "w").write(filled)
    ran = run([sys.executable, starter], env)
    if ran.returncode != 0:
        return f"{name}: the filled starter failed: {ran.stderr}"
    graded = run([os.path.join(folder, "check.sh")], env)
    if graded.returncode != 0:
        return f"{name}: check.sh rejected the solution (exit {graded.returncode}): {graded.stdout[-800:]}"
    # The same solution on hidden cases: other seeds and sizes, read from inputs/params.json.
    book = run([attnlab, "exercise", "grade", name, folder, "--seed", "5", "--python", sys.executable, "--format", "json"], env)
    if book.returncode != 0:
        return f"{name}: exercise grade exited {book.returncode}: {book.stderr}"
    cases = json.loads(book.stdout)["submissions"][0]["cases"]
    wrong = [f"{c['name']} {c['config']}: {c['verdict']}: {c['detail']}" for c in cases if c["verdict"] != "match"]
    if wrong or len(cases) != 6:
        return f"{name}: exercise grade did not give full marks on {len(cases)} cases: {wrong}"
    return None


def main():
    attnlab = os.path.abspath(sys.argv[1])
    env = dict(os.environ, PATH=os.path.dirname(attnlab) + os.pathsep + os.environ.get("PATH", ""), LANG="C")
    listed = json.loads(run([attnlab, "exercise", "list", "--format", "json"], env).stdout)["exercises"]
    every = int(sys.argv[3]) if len(sys.argv) == 4 and sys.argv[2] == "--every" else 1
    names = [e["name"] for e in listed][::every]
    missing = [e["name"] for e in listed if e["name"] not in SOLUTIONS]
    if missing:
        print(f"FAIL: no solution here for {missing}")
        return 1
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            problem = one(attnlab, name, env, tmp)
            print(problem and "FAIL: " + problem or f"ok: {name}")
            if problem:
                failures.append(name)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
