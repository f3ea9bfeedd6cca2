#!/usr/bin/env python3
"""A class graded: `exercise grade` on submissions made here, one of each kind a teacher meets.

Usage: exercise_grade.py ATTNLAB [quick]

The exercise is rope-interleaved (seed 7, default sizes) with 3 hidden cases. The submissions:
a correct one in numpy, one in PyTorch (left out where torch is missing), one per catalogued
mistake, one that crashes, one that loops forever, one that writes NaN, one with the wrong
shape, one that copies the visible answer and one that is right only at the visible size.
Each case's verdict is checked against the table below, worked out from the cases' sizes;
then every format is checked against the JSON gradebook: text, csv, junit (valid against
junit.xsd, by xmllint) and gradescope, on a smaller class (each grading runs every program
again). The endless loop is graded on its own with --timeout 1, the rest with a timeout long
enough for any start on a loaded machine. `quick` (the sanitizer build) grades the loop and
the smaller class in JSON only. Exits 77 (skipped) without numpy.
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import numpy  # noqa: F401
except ImportError:
    print("skipped: numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)
try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

EXERCISE = "rope-interleaved"
HIDDEN = 3
# The endless loop is graded on its own with a short timeout; everything else with a long one,
# so that a slow start (PyTorch's import on a loaded machine) is never taken for a loop.
TIMEOUT = "120"
LOOP_TIMEOUT = "1"

from exercise_starters import SOLUTIONS  # noqa: E402  (the solutions written from each task's text)

CORRECT = SOLUTIONS["rope-interleaved"]

# Each submission's function body (or, for torch, its whole program).
BODIES = {
    "numpy": CORRECT,
    "pairing_half": """
    L, d = q.shape[2], q.shape[3]
    theta = base ** (-2.0 * np.arange(d // 2) / d)
    angle = np.arange(L)[:, None] * theta[None, :]
    c, s = np.cos(angle), np.sin(angle)
    a, b = q[..., : d // 2], q[..., d // 2:]
    return np.concatenate([a * c - b * s, a * s + b * c], axis=-1)
""",
    "rotation_reversed": CORRECT.replace("np.sin(angle)", "-np.sin(angle)"),
    "missing_factor_2": CORRECT.replace("-2.0 *", "-1.0 *"),
    "positions_from_1": CORRECT.replace("np.arange(L)[:, None]", "(np.arange(L) + 1)[:, None]"),
    "heads_and_positions_swapped": CORRECT.replace("return out", "return np.swapaxes(out, 1, 2)"),
    "crash": """
    raise RuntimeError("not written yet")
""",
    "loop": """
    while True:
        pass
""",
    "nan": """
    return np.full_like(q, np.nan)
""",
    "wrong_shape": """
    return q[..., : q.shape[3] // 2]
""",
    "copies_visible": """
    return np.load(os.path.join(HERE, "saved.npy"))
""",
    "visible_size_only": CORRECT.replace("/ d)", "/ 8)"),  # the visible dim, written as a constant
}

TORCH_PROGRAM = """import os
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
q = torch.from_numpy(np.load(os.path.join(HERE, "inputs", "q.npy")))
L, d = q.shape[2], q.shape[3]
theta = 10000.0 ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
angle = torch.arange(L, dtype=torch.float64)[:, None] * theta[None, :]
c, s = torch.cos(angle), torch.sin(angle)
x1, x2 = q[..., 0::2], q[..., 1::2]
out = torch.stack([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1).flatten(-2)
np.save(os.path.join(HERE, "answer.npy"), out.numpy())
"""

# The verdicts on the cases visible; hidden-1 (len 1, dim 2, heads 1, the smallest);
# hidden-2 (len 1, dim 16, heads 4); hidden-3 (len 2, dim 10, heads 1). At len 1 the only
# position is 0 and RoPE is the identity, so mistakes in the angle or the pairing give the
# right answer there; at dim 2 there is one pair and both pairings agree. Swapping the head
# and position axes keeps the shape only when both are 1. The visible case's dim is 8.
M, D, W, C, T, N = "match", "differs", "wrong_shape", "crash", "timeout", "nan"
EXPECTED = {
    "numpy": [M, M, M, M],
    "torch": [M, M, M, M],
    "pairing_half": [D, M, M, D],
    "rotation_reversed": [D, M, M, D],
    "missing_factor_2": [D, M, M, D],
    "positions_from_1": [D, D, D, D],
    "heads_and_positions_swapped": [W, M, W, W],
    "crash": [C, C, C, C],
    "loop": [T, T, T, T],
    "nan": [N, N, N, N],
    "wrong_shape": [W, W, W, W],
    "copies_visible": [M, W, W, W],
    "visible_size_only": [M, M, M, D],
}
EXPECTED_NAMES = [n for n in EXPECTED if n != "torch" or HAVE_TORCH]
MISTAKES = ["pairing_half", "rotation_reversed", "missing_factor_2", "positions_from_1", "heads_and_positions_swapped"]
# The smaller class the other formats are checked on.
SMALL = ["numpy", "positions_from_1", "heads_and_positions_swapped", "crash", "nan", "copies_visible"]
CONFIGS = [(8, 8, 2), (1, 2, 1), (1, 16, 4), (2, 10, 1)]  # (len, dim, heads) of each case


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def make_submissions(attnlab, tmp):
    hw = os.path.join(tmp, "hw")
    made = run([attnlab, "exercise", "new", EXERCISE, hw, "--seed", "7", "--lang", "en"])
    if made.returncode != 0:
        fail(f"exercise new: {made.stderr}")
    solved = run([attnlab, "exercise", "solve", EXERCISE, hw])
    if solved.returncode != 0:
        fail(f"exercise solve: {solved.stderr}")
    starter = open(os.path.join(hw, "starter.py")).read()
    subs = os.path.join(tmp, "subs")
    os.mkdir(subs)
    names = EXPECTED_NAMES
    for name in names:
        folder = os.path.join(subs, name)
        shutil.copytree(hw, folder, ignore=shutil.ignore_patterns("solution"))
        program = TORCH_PROGRAM if name == "torch" else re.sub(
            r"(# --- your code: start ---\n).*?(    # --- your code: end ---)",
            lambda m: m.group(1) + BODIES[name].lstrip("\n") + m.group(2), starter, flags=re.S)
        open(os.path.join(folder, "starter.py"), "w").write(program)
        if name == "copies_visible":
            shutil.copy(os.path.join(hw, "solution", "answer.npy"), os.path.join(folder, "saved.npy"))
    # a stale answer in the folder is never graded: the grader leaves it out of the copy
    shutil.copy(os.path.join(hw, "solution", "answer.npy"), os.path.join(subs, "crash", "answer.npy"))
    return [os.path.join(subs, n) for n in names]


def grade(attnlab, submissions, fmt, *extra):
    timeout = LOOP_TIMEOUT if [os.path.basename(s) for s in submissions] == ["loop"] else TIMEOUT
    done = run([attnlab, "exercise", "grade", EXERCISE, *submissions, "--seed", "7", "--hidden", str(HIDDEN),
                "--python", sys.executable, "--timeout", timeout, "--jobs", "2", "--format", fmt, *extra])
    if done.returncode != 0 or done.stderr:
        fail(f"grade --format {fmt} exited {done.returncode}: {done.stderr}")
    return done.stdout


def check_json(book, submissions):
    if [s["path"] for s in book["submissions"]] != submissions:
        fail("the gradebook is not in argument order")
    for sub in book["submissions"]:
        name = os.path.basename(sub["path"])
        got = [c["verdict"] for c in sub["cases"]]
        if got != EXPECTED[name]:
            fail(f"{name}: verdicts {got}, expected {EXPECTED[name]}")
        if [c["name"] for c in sub["cases"]] != ["visible"] + [f"hidden-{i}" for i in range(1, HIDDEN + 1)]:
            fail(f"{name}: case names {[c['name'] for c in sub['cases']]}")
        for case, (length, dim, heads) in zip(sub["cases"], CONFIGS):
            if (case["config"]["len"], case["config"]["dim"], case["config"]["heads"]) != (length, dim, heads):
                fail(f"{name}: {case['name']} has config {case['config']}")
            if case["points"] != (1 if case["verdict"] == M else 0) or case["max_points"] != 1:
                fail(f"{name}: {case['name']} points {case['points']}/{case['max_points']}")
        if sub["score"] != EXPECTED[name].count(M) or sub["max_score"] != HIDDEN + 1:
            fail(f"{name}: score {sub['score']}/{sub['max_score']}")
        if name in MISTAKES:
            first = sub["cases"][0]["diagnosis"]
            if not first or first[0]["id"] != name or first[0]["certainty"] != "matches":
                fail(f"{name}: the visible case's diagnosis is {first}")
        check_smallest(name, sub)


def check_smallest(name, sub):
    failing = [c for c in sub["cases"] if c["hidden"] and c["verdict"] != M]
    smallest = sub["smallest_failing"]
    if not failing or failing[0]["verdict"] == T:
        if smallest is not None:
            fail(f"{name}: a smallest failing case where none is searched: {smallest}")
        return
    if smallest is None:
        fail(f"{name}: no smallest failing case")
    start = failing[0]["config"]
    if any(smallest["config"][k] > start[k] for k in ("len", "dim", "heads")) or smallest["config"]["seed"] != start["seed"]:
        fail(f"{name}: the smallest failing case {smallest['config']} is not below {start}")
    c = smallest["config"]
    if smallest["command"] != f"attnlab exercise new {EXERCISE} DIR --seed {c['seed']} --len {c['len']} --dim {c['dim']} --heads {c['heads']}":
        fail(f"{name}: smallest failing command {smallest['command']!r}")
    if name == "visible_size_only" and ((c["len"], c["dim"]) != (2, 4) or smallest["runs"] != 8):
        # len 2 is the least with a second position; dim 4 the least with a second angle. From
        # hidden-3 (len 2, dim 10, heads 1), each distinct candidate once: len 1 (passes), dim 2
        # (passes), dim 6 (fails); len 1, dim 2, dim 4 (fails); len 1, dim 2 (both pass; dim 3
        # is odd, which RoPE refuses, and heads is already 1): 8 runs
        fail(f"visible_size_only: shrunk to {c} in {smallest['runs']} runs, expected len 2 and dim 4 in 8")


def case_line(case):
    sizes = case["config"]
    line = f"{case['name']} (seed {sizes['seed']}, len {sizes['len']}, dim {sizes['dim']}, heads {sizes['heads']}): {case['verdict']}: {case['detail']}"
    ids = [d["id"] + ("" if d["certainty"] == "matches" else " (closest)") for d in case["diagnosis"]]
    return line + (f"; mistake: {', '.join(ids)}" if ids else "")


def check_text(text, book):
    width = max(10, *(len(s["path"]) for s in book["submissions"]))
    lines = [f"exercise {EXERCISE}: 1 visible case, {HIDDEN} hidden", f"{'submission':<{width}}  score"]
    for sub in book["submissions"]:
        lines.append(f"{sub['path']:<{width}}  {sub['score']:g}/{sub['max_score']:g}")
        lines += ["  " + case_line(c) for c in sub["cases"] if c["verdict"] != M]
        if sub["smallest_failing"]:
            s = sub["smallest_failing"]
            lines.append(f"  smallest failing case ({s['verdict']}, {s['runs']} runs): {s['command']}")
    if text != "\n".join(lines) + "\n":
        fail("text gradebook:\n" + text + "\nexpected:\n" + "\n".join(lines))


def check_csv(text, book):
    rows = list(csv.reader(io.StringIO(text)))
    cases = ["visible"] + [f"hidden-{i}" for i in range(1, HIDDEN + 1)]
    if rows[0] != ["submission", "score", "max_score"] + cases + [c + "_verdict" for c in cases]:
        fail(f"csv header {rows[0]}")
    expected = [[s["path"], f"{s['score']:g}", f"{s['max_score']:g}"] + [f"{c['points']:g}" for c in s["cases"]]
                + [c["verdict"] for c in s["cases"]] for s in book["submissions"]]
    if rows[1:] != expected:
        fail(f"csv rows {rows[1:]}, expected {expected}")


def check_junit(text, book, tmp):
    path = os.path.join(tmp, "junit.xml")
    open(path, "w").write(text)
    schema = os.path.join(os.path.dirname(os.path.abspath(__file__)), "junit.xsd")
    valid = run(["xmllint", "--noout", "--schema", schema, path])
    if valid.returncode != 0:
        fail(f"the JUnit XML does not validate against junit.xsd: {valid.stderr}")
    root = ET.fromstring(text)
    suites = root.findall("testsuite")
    if [s.get("name") for s in suites] != [s["path"] for s in book["submissions"]]:
        fail("junit: one testsuite per submission, in order")
    for suite, sub in zip(suites, book["submissions"]):
        cases = suite.findall("testcase")
        problems = [(c.find("failure") if c.find("failure") is not None else c.find("error")) for c in cases]
        got = [("match" if p is None else p.get("type")) for p in problems]
        if got != [c["verdict"] for c in sub["cases"]]:
            fail(f"junit {sub['path']}: {got}")
        errors = sum(v in (C, T) for v in got)
        if (suite.get("tests"), suite.get("errors"), suite.get("failures")) != (str(len(got)), str(errors), str(len(got) - errors - got.count(M))):
            fail(f"junit {sub['path']}: counts {suite.attrib}")
        for p, c in zip(problems, sub["cases"]):
            if p is not None and (p.tag != ("error" if c["verdict"] in (C, T) else "failure") or p.text != case_line(c)):
                fail(f"junit {sub['path']} {c['name']}: <{p.tag}> {p.text!r}")


def check_gradescope(results, sub):
    if set(results) != {"score", "execution_time", "output", "tests"} or results["score"] != sub["score"]:
        fail(f"gradescope {sub['path']}: {sorted(results)} score {results.get('score')}")
    expected = [{"name": c["name"], "score": c["points"], "max_score": c["max_points"],
                 "status": "passed" if c["verdict"] == M else "failed", "output": case_line(c)} for c in sub["cases"]]
    if results["tests"] != expected:
        fail(f"gradescope {sub['path']}: {results['tests']}")


def main():
    attnlab, quick = os.path.abspath(sys.argv[1]), sys.argv[2:] == ["quick"]
    if shutil.which("xmllint") is None:
        fail("xmllint is missing (Debian: libxml2-utils; setup.sh installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        submissions = make_submissions(attnlab, tmp)
        small = [s for s in submissions if os.path.basename(s) in SMALL]
        loop = [s for s in submissions if os.path.basename(s) == "loop"]
        others = [s for s in submissions if s not in loop]
        loop_book = json.loads(grade(attnlab, loop, "json"))
        check_json(loop_book, loop)
        if quick:
            check_json(json.loads(grade(attnlab, small, "json")), small)
            print(f"ok: {len(small) + 1} submissions graded on {HIDDEN + 1} cases (json)")
            return
        full = json.loads(grade(attnlab, others, "json"))
        check_json(full, others)
        # the smaller class's gradebook is the full one's entries (the same cases, the same programs)
        book = {"submissions": [s for s in full["submissions"] if s["path"] in small]}
        check_text(grade(attnlab, small, "text", "--lang", "en"), book)
        check_csv(grade(attnlab, small, "csv"), book)
        check_junit(grade(attnlab, small, "junit"), book, tmp)
        check_junit(grade(attnlab, loop, "junit"), loop_book, tmp)  # errors, not failures
        one = json.loads(grade(attnlab, small[-1:], "gradescope"))
        check_gradescope(one, book["submissions"][-1])
        out = os.path.join(tmp, "gradescope")
        grade(attnlab, small, "gradescope", "--out", out)
        for sub in book["submissions"]:
            check_gradescope(json.load(open(os.path.join(out, os.path.basename(sub["path"]), "results.json"))), sub)
    print(f"ok: {len(submissions)} submissions graded on {HIDDEN + 1} cases; json, text, csv, junit and gradescope agree")


if __name__ == "__main__":
    main()
