#!/usr/bin/env python3
"""A class graded: `exercise grade` on submissions made here, one of each kind a teacher meets.

Usage: exercise_grade.py ATTNLAB [quick]

The exercise is rope-interleaved (seed 7, default sizes) with 3 hidden cases. The class of 30:
correct ones in numpy, one in PyTorch (left out where torch is missing), one per catalogued
mistake, one that crashes, one that loops forever, one that writes NaN, one with the wrong
shape, one that copies the visible answer, one that is right only at the visible size, and
hostile or unlucky ones (output that is not UTF-8, a double-forked daemon, a disk filler,
processes that hold memory together, a float16 answer, one that runs the grader's binary).
They are graded under bubblewrap where it works and without a sandbox, and after each grading
no process of theirs and no temporary folder is left.
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

# The verdicts on the cases visible (len 8, dim 8, heads 2); hidden-1 (len 2, dim 4, heads 1,
# the smallest sizes at which every catalogued mistake is wrong: at len 1 the only position is
# 0 and RoPE is the identity, at dim 2 both pairings agree); hidden-2 (len 10, dim 4, heads 2);
# hidden-3 (len 2, dim 10, heads 1). Each hidden case is drawn where every mistake differs, so
# each mistake fails every hidden case; swapping the head and position axes changes the shape
# wherever heads != len. The visible case's dim is 8, which no hidden case has.
M, D, W, C, T, N = "match", "differs", "wrong_shape", "crash", "timeout", "nan"
EXPECTED = {
    "numpy": [M, M, M, M],
    "torch": [M, M, M, M],
    "pairing_half": [D, D, D, D],
    "rotation_reversed": [D, D, D, D],
    "missing_factor_2": [D, D, D, D],
    "positions_from_1": [D, D, D, D],
    "heads_and_positions_swapped": [W, W, W, W],
    "crash": [C, C, C, C],
    "loop": [T, T, T, T],
    "nan": [N, N, N, N],
    "wrong_shape": [W, W, W, W],
    "copies_visible": [M, W, W, W],
    "visible_size_only": [M, D, D, D],
    # hostile or unlucky: output that is not UTF-8 (a Chinese traceback cut by the excerpt),
    # a double-forked daemon (its answer is right; the daemon must not outlive the case), a
    # disk filler, three processes that hold memory together, an answer stored as float16, and
    # one that looks for the grader's own binary through /proc to run exercise solve (under
    # bubblewrap it cannot see it; without a sandbox it could, which is why that is not one)
    "not_utf8": [C, C, C, C],
    "daemon": [M, M, M, M],
    "fills_disk": [C, C, C, C],
    "holds_memory": [C, C, C, C],
    "float16": [D, D, D, D],
    "finds_grader": [C, C, C, C],
    # hostile, against the limits and the isolation: 2 GiB written to /dev/shm, ten memfds of
    # 200 MiB, a fork bomb of 1,023 processes (each stops the program before its answer);
    # reading a root-only file or telling a hidden case from its path or mounts, a fork chain
    # left behind, and 50,000 files beside the program (each writes the right answer, and must
    # not be able to do harm)
    "fills_shm": [C, C, C, C],
    "memfds": [C, C, C, C],
    "fork_bomb": [C, C, C, C],
    "reads_root_file": [M, M, M, M],
    "tells_hidden": [M, M, M, M],
    "fork_chain": [M, M, M, M],
    "many_files": [M, M, M, M],
    # two who hand in the same code with the same uncatalogued mistake: a lead for the teacher
    "copier_a": [D, D, D, D],
    "copier_b": [D, D, D, D],
}
# Right answers, so that the class holds 30 submissions.
for i in range(2, 13):
    EXPECTED[f"numpy_{i}"] = [M, M, M, M]
BODIES.update({
    "not_utf8": """
    import sys
    sys.stderr.buffer.write(b"bad \\xff\\xfe " + "\u9519\u8bef\uff1a".encode() * 60 + b"\\n")
    raise SystemExit(1)
""",
    "daemon": """
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import time
            time.sleep(31.93)
        os._exit(0)
    os.wait()
""" + CORRECT.lstrip("\n"),
    "fills_disk": """
    with open(os.path.join(HERE, "filler"), "wb") as f:
        for _ in range(400):
            f.write(b"x" * (1 << 20))
            f.flush()
""" + CORRECT.lstrip("\n"),
    "holds_memory": """
    import subprocess, sys
    hold = "import time; b = bytearray(b'x') * (400 << 20); time.sleep(30)"
    children = [subprocess.Popen([sys.executable, "-c", hold]) for _ in range(3)]
    for c in children:
        c.wait()
""" + CORRECT.lstrip("\n"),
    "float16": CORRECT.replace("return out", "return out.astype(np.float16)"),
    "finds_grader": """
    import subprocess
    for pid in os.listdir("/proc"):
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if os.path.basename(exe) == "attnlab":
            subprocess.run([exe, "exercise", "solve", EXERCISE_NAME, HERE, "--force"], check=True)
            import shutil
            shutil.copy(os.path.join(HERE, "solution", "answer.npy"), os.path.join(HERE, "answer.npy"))
            raise SystemExit(0)
    raise SystemExit("no grader found")
""",
})
BODIES.update({
    "fills_shm": """
    for i in range(10):  # 2 GiB in files of 200 MiB, each under the file size limit
        with open(f"/dev/shm/filler{i}", "wb") as f:
            for _ in range(200):
                f.write(b"x" * (1 << 20))
                f.flush()
""" + CORRECT.lstrip("\n"),
    "memfds": """
    fds = []
    for i in range(10):
        fd = os.memfd_create(f"hold{i}")
        for _ in range(200):
            os.write(fd, b"x" * (1 << 20))
        fds.append(fd)
""" + CORRECT.lstrip("\n"),
    "fork_bomb": """
    import time
    for _ in range(1023):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
""" + CORRECT.lstrip("\n"),
    "reads_root_file": """
    for secret in ("/etc/shadow", ROOT_ONLY):
        try:
            open(secret, "rb").read(1)
        except OSError:
            continue
        raise SystemExit("read " + secret)
""" + CORRECT.lstrip("\n"),
    "tells_hidden": """
    seen = os.getcwd() + open("/proc/self/mountinfo").read() + os.environ.get("TMPDIR", "")
    if "hidden" in seen:
        return np.zeros_like(q)
""" + CORRECT.lstrip("\n"),
    # each generation sleeps, starts the next in the background and exits: the chain is nobody's
    # child for long; 31.93 marks its processes for leftovers()
    "fork_chain": """
    import subprocess
    chain = 'sleep 0.02; sh -c "$0" "$0" "$1" & exit'
    subprocess.Popen(["sh", "-c", chain, chain, "31.93"], start_new_session=True)
""" + CORRECT.lstrip("\n"),
    "many_files": CORRECT,
    "copier_a": CORRECT.replace("return out", "return out * 2.0"),
    "copier_b": CORRECT.replace("return out", "return out * 2.0"),
})
for i in range(2, 13):
    BODIES[f"numpy_{i}"] = CORRECT
EXPECTED_NAMES = list(EXPECTED)
MISTAKES = ["pairing_half", "rotation_reversed", "missing_factor_2", "positions_from_1", "heads_and_positions_swapped"]
HOSTILE = ["not_utf8", "daemon", "fills_disk", "holds_memory", "float16", "finds_grader", "fills_shm", "memfds", "fork_bomb",
           "reads_root_file", "tells_hidden", "fork_chain", "many_files", "torch"]
# A file only root may read, in a folder anyone may pass: a run must not read it.
ROOT_ONLY = "/var/tmp/attnlab-grade-test-root-only"
# The smaller class the other formats are checked on.
SMALL = ["numpy", "positions_from_1", "heads_and_positions_swapped", "crash", "nan", "copies_visible", "not_utf8", "copier_a", "copier_b"]
CONFIGS = [(8, 8, 2), (2, 4, 1), (10, 4, 2), (2, 10, 1)]  # (len, dim, heads) of each case
LIMITS = ["--memory", "1", "--disk", "0.25"]


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
        program = program.replace("EXERCISE_NAME", repr(EXERCISE)).replace("ROOT_ONLY", repr(ROOT_ONLY))
        open(os.path.join(folder, "starter.py"), "w").write(program)
        if name == "copies_visible":
            shutil.copy(os.path.join(hw, "solution", "answer.npy"), os.path.join(folder, "saved.npy"))
        if name == "many_files":
            os.mkdir(os.path.join(folder, "junk"))
            for i in range(50000):
                open(os.path.join(folder, "junk", f"{i:05d}"), "w").close()
    # a stale answer in the folder is never graded: the grader leaves it out of the copy
    shutil.copy(os.path.join(hw, "solution", "answer.npy"), os.path.join(subs, "crash", "answer.npy"))
    return [os.path.join(subs, n) for n in names]


def grade(attnlab, submissions, fmt, *extra):
    timeout = LOOP_TIMEOUT if [os.path.basename(s) for s in submissions] == ["loop"] else TIMEOUT
    done = run([attnlab, "exercise", "grade", EXERCISE, *submissions, "--seed", "7", "--hidden", str(HIDDEN),
                "--python", sys.executable, "--timeout", timeout, "--jobs", "2", *LIMITS, "--format", fmt, *extra])
    if done.returncode != 0 or done.stderr:
        fail(f"grade --format {fmt} exited {done.returncode}: {done.stderr}")
    return done.stdout


def expected(name, isolation):
    """The verdicts, where they depend on the interpreter or on what the machine lets the grader do."""
    if name == "torch" and not HAVE_TORCH:
        return [C, C, C, C]  # its import fails: that submission alone crashes
    if name == "fork_bomb" and "processes not capped" in isolation:
        return [M, M, M, M]  # neither a cgroup nor a uid of its own to cap it
    if name == "fills_shm" and "polled" in isolation and "uid of its own" not in isolation and isolation.startswith("none"):
        return [M, M, M, M]  # the host's /dev/shm, owned by the grader's uid: not counted
    return EXPECTED[name]


def check_json(book, submissions):
    if [s["path"] for s in book["submissions"]] != submissions:
        fail("the gradebook is not in argument order")
    for sub in book["submissions"]:
        name = os.path.basename(sub["path"])
        got = [c["verdict"] for c in sub["cases"]]
        if got != expected(name, book["isolation"]):
            fail(f"{name}: verdicts {got}, expected {expected(name, book['isolation'])}")
        if [c["name"] for c in sub["cases"]] != ["visible"] + [f"hidden-{i}" for i in range(1, HIDDEN + 1)]:
            fail(f"{name}: case names {[c['name'] for c in sub['cases']]}")
        for case, (length, dim, heads) in zip(sub["cases"], CONFIGS):
            if (case["config"]["len"], case["config"]["dim"], case["config"]["heads"]) != (length, dim, heads):
                fail(f"{name}: {case['name']} has config {case['config']}")
            if case["points"] != (1 if case["verdict"] == M else 0) or case["max_points"] != 1:
                fail(f"{name}: {case['name']} points {case['points']}/{case['max_points']}")
        if sub["score"] != expected(name, book["isolation"]).count(M) or sub["max_score"] != HIDDEN + 1:
            fail(f"{name}: score {sub['score']}/{sub['max_score']}")
        if name in MISTAKES:
            first = sub["cases"][0]["diagnosis"]
            if not first or first[0]["id"] != name or first[0]["certainty"] != "matches":
                fail(f"{name}: the visible case's diagnosis is {first}")
        if name == "crash":
            check_traceback(sub["cases"][0])
        check_smallest(name, sub)
        check_hostile(name, sub, book["isolation"])
    check_leads(book)


def check_traceback(case):
    """A Python crash keeps its traceback, its paths relative to the submission in every sandbox."""
    tail = case["stderr_tail"]
    if case["last_line"] != "RuntimeError: not written yet" or tail[0] != "Traceback (most recent call last):" or tail[-1] != case["last_line"]:
        fail(f"crash: last line {case['last_line']!r}, stderr {tail}")
    if not any(line.startswith('  File "starter.py", line ') for line in tail) or case["stdout_tail"]:
        fail(f"crash: the traceback's file is not read relative to the submission: {tail}, stdout {case['stdout_tail']}")


def check_leads(book):
    """The same uncatalogued wrong answer, and the same files, are leads in the JSON gradebook."""
    names = {os.path.basename(s["path"]): s["path"] for s in book["submissions"]}
    if "copier_a" not in names:
        return
    pair = [names["copier_a"], names["copier_b"]]
    wrong = [lead for lead in book["leads"]["same_wrong_answer"] if set(lead["submissions"]) & set(pair)]
    if [(lead["case"], lead["submissions"]) for lead in wrong] != [(c, pair) for c in ["visible"] + [f"hidden-{i}" for i in range(1, HIDDEN + 1)]]:
        fail(f"leads, the same wrong answer: {wrong}")
    if pair not in book["leads"]["same_code"]:
        fail(f"leads, the same code: {book['leads']['same_code']}")
    catalogued = {n for n in MISTAKES if n in names}
    for lead in book["leads"]["same_wrong_answer"]:
        if {os.path.basename(p) for p in lead["submissions"]} & catalogued:
            fail(f"a catalogued mistake is a lead: {lead}")


def check_hostile(name, sub, isolation):
    """What the gradebook says of the hostile submissions beyond their verdicts."""
    detail = sub["cases"][0]["detail"]
    if name == "fork_bomb" and "a cgroup per run" in isolation and "it reached the cap of 256 processes" not in detail:
        fail(f"fork_bomb: the process cap is not named: {detail}")
    if name == "torch" and not HAVE_TORCH and ("ModuleNotFoundError" not in detail or "does not have that module" not in detail):
        fail(f"torch: the import error is not said: {detail}")
    if name == "many_files":
        counted = [n for n in sub["not_copied"] if "more files and folders" in n]
        # the four files and junk/ first, then 4,091 of junk's 50,000: 45,909 left out
        if counted != ["45909 more files and folders (at most 4096 are copied)"]:
            fail(f"many_files: not copied {sub['not_copied'][-3:]}")


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
    if name == "visible_size_only" and ((c["len"], c["dim"]) != (2, 4) or smallest["runs"] != 2):
        # len 2 is the least with a second position; dim 4 the least with a second angle. From
        # hidden-1 (len 2, dim 4, heads 1): len 1 (passes), dim 2 (passes; dim 3 is odd, which
        # RoPE refuses, and heads is already 1): 2 runs
        fail(f"visible_size_only: shrunk to {c} in {smallest['runs']} runs, expected len 2 and dim 4 in 2")


def case_line(case, student=False):
    if student and case["hidden"]:  # the verdict, a crash's exception line, the mistake matched
        crash = f": {case['last_line']}" if case["verdict"] == "crash" and case["last_line"] else ""
        ids = [d["id"] for d in case["diagnosis"] if d["certainty"] == "matches"]
        return f"{case['name']}: {case['verdict']}{crash}" + (f"; mistake: {', '.join(ids)}" if ids else "")
    sizes = case["config"]
    line = f"{case['name']} (seed {sizes['seed']}, len {sizes['len']}, dim {sizes['dim']}, heads {sizes['heads']}): {case['verdict']}: {case['detail']}"
    ids = [d["id"] + ("" if d["certainty"] == "matches" else " (closest)") for d in case["diagnosis"]]
    return line + (f"; mistake: {', '.join(ids)}" if ids else "")


def output_lines(case, indent):
    """A shown case's last lines of stdout and of stderr, as the gradebook indents them."""
    if case["hidden"]:
        return []
    lines = []
    for name in ("stdout", "stderr"):
        tail = case[name + "_tail"]
        if tail:
            lines += [f"{indent}{name}, last {len(tail)} lines:"] + [f"{indent}  {t}" for t in tail]
    return lines


def case_output(case):
    """Gradescope's and JUnit's text of a case: its line, then its output's lines."""
    return "\n".join([case_line(case, student=True)] + output_lines(case, "")) + ("\n" if output_lines(case, "") else "")


def check_text(text, book, isolation):
    """The text a student may see: a hidden case's name, verdict, matched mistake and exception line, no smallest failing case."""
    width = max(10, *(len(s["path"]) for s in book["submissions"]))
    lines = [f"exercise {EXERCISE}: 1 visible case, {HIDDEN} hidden", f"isolation: {isolation}", f"{'submission':<{width}}  score"]
    for sub in book["submissions"]:
        lines.append(f"{sub['path']:<{width}}  {sub['score']:g}/{sub['max_score']:g}")
        for c in sub["cases"]:
            if c["verdict"] != M:
                lines += ["  " + case_line(c, student=True)] + output_lines(c, "    ")
    if text != "\n".join(lines) + "\n":
        fail("text gradebook:\n" + text + "\nexpected:\n" + "\n".join(lines))
    for sub in book["submissions"]:
        for c in sub["cases"]:
            if c["hidden"] and str(c["config"]["seed"]) in text:
                fail(f"the text gradebook shows {c['name']}'s seed")


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
            if p is not None and (p.tag != ("error" if c["verdict"] in (C, T) else "failure") or p.text != case_output(c)):
                fail(f"junit {sub['path']} {c['name']}: <{p.tag}> {p.text!r}")


def check_gradescope(results, sub):
    if set(results) != {"score", "execution_time", "output", "tests"} or results["score"] != sub["score"] or results["output"] != "":
        fail(f"gradescope {sub['path']}: {sorted(results)} score {results.get('score')} output {results.get('output')!r}")
    expected = [{"name": c["name"], "score": c["points"], "max_score": c["max_points"],
                 "status": "passed" if c["verdict"] == M else "failed", "output": case_output(c),
                 "visibility": "after_published" if c["hidden"] else "visible"} for c in sub["cases"]]
    if results["tests"] != expected:
        fail(f"gradescope {sub['path']}: {results['tests']}")


def leftovers(tmp):
    """Fails on what grading left."""
    left = left_after(tmp)
    if left:
        fail(f"left after grading: {left}")


def left_after(tmp):
    """What grading left: a process of the daemon's or the fork chain's, a process of a run's
    own uid, a temporary folder, a cgroup, a file in /dev/shm."""
    alive = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = open(f"/proc/{pid}/cmdline", "rb").read()
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if (b"31.93" in cmdline or b"400 << 20" in cmdline) and state != "Z":
            alive.append(pid)
        try:
            uid = int(open(f"/proc/{pid}/status").read().split("Uid:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if RUN_UIDS[0] <= uid < RUN_UIDS[1] and state != "Z":
            alive.append(f"{pid} (uid {uid})")
    left = [n for n in os.listdir(tmp) if n.startswith("attnlab-grade-")]
    left += [n for n in os.listdir("/tmp") if n.startswith("attnlab-grade-")]
    left += cgroups_left()
    if os.geteuid() == 0:  # a root grader's runs have uids of their own: what they leave is removed
        left += [f"/dev/shm/{n}" for n in os.listdir("/dev/shm") if n.startswith("filler")]
    return ([f"processes {alive}"] if alive else []) + left


# The uids a root grader gives its runs (accounting.hpp: kUidBase, 256 per grading).
RUN_UIDS = (0x5A000000, 0x5B000000)


def cgroups_left():
    """The graders' cgroup folders (attnlab-grade-PID) still under this process's own cgroups."""
    import glob
    left = []
    for line in open("/proc/self/cgroup"):
        _, controllers, path = line.rstrip("\n").split(":", 2)
        bases = ["/sys/fs/cgroup"] if controllers == "" else [f"/sys/fs/cgroup/{c}" for c in controllers.split(",")]
        for base in bases:
            left += glob.glob(os.path.join(base, path.lstrip("/"), "attnlab-grade-*"))
    return sorted(set(left))


def check_interpreter_folders(attnlab, tmp, numpy_sub):
    """Under bubblewrap the runs see the interpreter's installation and nothing beside it.

    A link to the interpreter in the teacher's own folder (~/bin/python3) does not show that
    folder: a submission that reads the teacher's grading file there finds nothing. A virtual
    environment made under /tmp is shown, and works. One in a folder the runs' uid cannot pass
    is refused before any grading, with bubblewrap's own words.
    """
    teacher = os.path.join(tmp, "teacher")
    os.makedirs(os.path.join(teacher, "bin"))
    os.symlink(os.path.realpath(sys.executable), os.path.join(teacher, "bin", "python3"))
    secret = os.path.join(teacher, "hw1.grading.json")
    open(secret, "w").write('{"hidden_seeds": [1]}')
    peek = os.path.join(tmp, "subs", "peeks")
    shutil.copytree(numpy_sub, peek)
    program = open(os.path.join(peek, "starter.py")).read()
    program = program.replace("    # --- your code: start ---\n", "    # --- your code: start ---\n    if os.path.exists(%r):\n        return np.zeros_like(q)\n" % secret)
    open(os.path.join(peek, "starter.py"), "w").write(program)
    link = os.path.join(teacher, "bin", "python3")
    book = json.loads(grade_with(attnlab, [peek], link))
    if [c["verdict"] for c in book["submissions"][0]["cases"]] != [M, M]:
        fail(f"--python {link}: the run saw the teacher's folder: {book['submissions'][0]['cases']}")
    venv = tempfile.mkdtemp(prefix="attnlab-test-venv-", dir="/tmp")
    try:
        os.chmod(venv, 0o755)
        made = run([os.path.realpath(sys.executable), "-m", "venv", "--system-site-packages", "--without-pip", os.path.join(venv, "v")])
        if made.returncode != 0:
            print(f"note: no virtual environment here ({made.stderr.strip()}): the venv under /tmp is not graded")
        else:
            book = json.loads(grade_with(attnlab, [numpy_sub], os.path.join(venv, "v", "bin", "python3")))
            if [c["verdict"] for c in book["submissions"][0]["cases"]] != [M, M]:
                fail(f"a venv under /tmp: {book['submissions'][0]['cases']}")
            if os.geteuid() == 0:
                os.chmod(venv, 0o700)  # the runs' own uids cannot pass it
                done = run([attnlab, "exercise", "grade", EXERCISE, numpy_sub, "--seed", "7", "--hidden", "1", "--sandbox", "bwrap",
                            "--python", os.path.join(venv, "v", "bin", "python3"), "--format", "json"])
                if done.returncode != 2 or done.stdout or "the sandbox cannot be set up for the runs: bwrap:" not in done.stderr:
                    fail(f"an interpreter the runs cannot reach: exit {done.returncode}, {done.stderr!r}")
    finally:
        shutil.rmtree(venv)


def grade_with(attnlab, submissions, python):
    done = run([attnlab, "exercise", "grade", EXERCISE, *submissions, "--seed", "7", "--hidden", "1", "--sandbox", "bwrap",
                "--python", python, "--timeout", TIMEOUT, "--format", "json"])
    if done.returncode != 0 or done.stderr:
        fail(f"grade --python {python} exited {done.returncode}: {done.stderr}")
    return done.stdout


def check_cpu_share(attnlab, tmp, numpy_sub):
    """With a cgroup per run, the CPU is shared between runs, not between processes: a correct
    program that needs 1 s of CPU finishes within a 4 s timeout beside a neighbour that spins
    15 processes on this machine's cores (shared between processes, it would get a sixteenth
    of them: 1 s of CPU in 8 s at best on two cores). The neighbour is ended by its timeout."""
    spinner, busy = os.path.join(tmp, "subs", "spinner"), os.path.join(tmp, "subs", "busy")
    for folder, code in ((spinner, "    for _ in range(15):\n        if os.fork() == 0:\n            break\n    while True:\n        pass\n"),
                         (busy, "    import time\n    start = time.process_time()\n    while time.process_time() - start < 1.0:\n        pass\n")):
        shutil.copytree(numpy_sub, folder)
        program = open(os.path.join(folder, "starter.py")).read()
        open(os.path.join(folder, "starter.py"), "w").write(program.replace("    # --- your code: start ---\n", "    # --- your code: start ---\n" + code))
    for box in sandboxes(attnlab, tmp, quiet=True):
        done = run([attnlab, "exercise", "grade", EXERCISE, spinner, busy, "--seed", "7", "--hidden", "0", "--python", sys.executable,
                    "--timeout", "4", "--cpu-time", "1000", "--jobs", "2", "--sandbox", box, "--format", "json"])
        book = json.loads(done.stdout)
        verdicts = [s["cases"][0]["verdict"] for s in book["submissions"]]
        if "a cgroup per run" not in book["isolation"]:
            print(f"note: no cgroup here ({book['isolation']}): the CPU is not shared between runs, not tested")
            return
        if verdicts != [T, M]:
            fail(f"{box}: a spinning neighbour and a correct program: {verdicts}, expected [timeout, match]: "
                 f"{[s['cases'][0]['detail'] for s in book['submissions']]}")
        leftovers(tmp)


def check_sigkill(attnlab, tmp, daemon):
    """A grader killed by SIGKILL takes its runs with it: its watchdog kills what they left
    (a double-forked daemon, without a sandbox), removes their cgroups and its temporary folder."""
    sleeper = os.path.join(tmp, "subs", "sleeper")
    shutil.copytree(daemon[0], sleeper)
    program = open(os.path.join(sleeper, "starter.py")).read()
    # a daemon in a session of its own whose command line carries the mark, and a long wait
    stay = ("    import subprocess, time\n    subprocess.Popen(['sh', '-c', 'sleep 60; exit 0', '31.93'], start_new_session=True)\n"
            "    time.sleep(60)\n")
    open(os.path.join(sleeper, "starter.py"), "w").write(program.replace("    # --- your code: start ---\n", "    # --- your code: start ---\n" + stay))
    grader = subprocess.Popen([attnlab, "exercise", "grade", EXERCISE, sleeper, "--seed", "7", "--hidden", "1", "--sandbox", "none",
                               "--python", sys.executable, "--timeout", "120", "--format", "json"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import time
    deadline = time.time() + 60
    while time.time() < deadline and not marked_running():
        time.sleep(0.1)
    if not marked_running():
        fail("the daemon did not start within 60 s")
    grader.kill()
    grader.wait()
    for _ in range(100):  # the watchdog's work takes a moment
        if not left_after(tmp):
            return
        time.sleep(0.1)
    fail(f"left after a SIGKILL to the grader: {left_after(tmp)}")


def marked_running():
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and b"31.93" in open(f"/proc/{pid}/cmdline", "rb").read():
                return True
        except OSError:
            pass
    return False


def sandboxes(attnlab, tmp, quiet=False):
    """bubblewrap where it works here, and none (the fallback) always."""
    probe = os.path.join(tmp, "probe")
    os.makedirs(probe, exist_ok=True)
    open(os.path.join(probe, "run.sh"), "w").write("exit 0\n")
    done = run([attnlab, "exercise", "grade", EXERCISE, probe, "--hidden", "0", "--run", "sh run.sh", "--sandbox", "bwrap", "--format", "json"])
    if done.returncode == 0:
        return ["bwrap", "none"]
    if not quiet:
        print(f"note: bubblewrap is not usable here ({done.stderr.strip()}); the fallback alone is graded")
    return ["none"]


def main():
    attnlab, quick = os.path.abspath(sys.argv[1]), sys.argv[2:] == ["quick"]
    if shutil.which("xmllint") is None:
        fail("xmllint is missing (Debian: libxml2-utils; setup.sh installs it)")
    global LIMITS
    if os.geteuid() == 0:
        with open(ROOT_ONLY, "w") as f:
            f.write("root's")
        os.chmod(ROOT_ONLY, 0o600)
    try:
        grade_class(attnlab, quick)
    finally:
        for path in [ROOT_ONLY] + [f"/dev/shm/filler{i}" for i in range(10)]:
            if os.path.exists(path):
                os.remove(path)


def grade_class(attnlab, quick):
    global LIMITS
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TMPDIR"] = tmp  # the grader's temporary folders, looked for afterwards
        submissions = make_submissions(attnlab, tmp)
        small = [s for s in submissions if os.path.basename(s) in SMALL]
        loop = [s for s in submissions if os.path.basename(s) == "loop"]
        others = [s for s in submissions if s not in loop]
        boxes = sandboxes(attnlab, tmp)
        LIMITS = LIMITS + ["--sandbox", boxes[0]]
        loop_book = json.loads(grade(attnlab, loop, "json"))
        check_json(loop_book, loop)
        if quick:
            check_json(json.loads(grade(attnlab, small, "json")), small)
            leftovers(tmp)
            print(f"ok: {len(small) + 1} submissions graded on {HIDDEN + 1} cases (json)")
            return
        for box in boxes:
            LIMITS[-1] = box
            # without a sandbox a submission can run the grader's own binary: not a security sandbox
            # (the fallback grades the hostile ones and the smaller class: the right answers' copies add nothing there)
            graded = others if box == boxes[0] and box == "bwrap" else [
                s for s in others if os.path.basename(s) in SMALL + HOSTILE and os.path.basename(s) != "finds_grader"]
            full = json.loads(grade(attnlab, graded, "json"))
            check_json(full, graded)
            leftovers(tmp)
        isolation = full["isolation"]
        out = os.path.join(tmp, "out")
        teacher = os.path.join(tmp, "teacher.txt")
        grade(attnlab, small, "text", "--out", out, "--lang", "en", "--teacher-report", teacher)
        book = json.load(open(os.path.join(out, "grades.json")))
        report = open(teacher).read()
        pair = ", ".join(s for s in small if os.path.basename(s).startswith("copier_"))
        if "leads, not verdicts" not in report or f"  visible: {pair}\n" not in report:
            fail("the teacher's report does not list the copiers' pair:\n" + report)
        for name in ("grades.txt", "grades.csv", "junit.xml"):
            if "leads" in open(os.path.join(out, name)).read():
                fail(f"{name}, which a student may see, speaks of leads")
        check_json(book, small)
        check_text(open(os.path.join(out, "grades.txt")).read(), book, isolation)
        check_csv(open(os.path.join(out, "grades.csv")).read(), book)
        check_junit(open(os.path.join(out, "junit.xml")).read(), book, tmp)
        for sub in book["submissions"]:
            check_gradescope(json.load(open(os.path.join(out, "gradescope", os.path.basename(sub["path"]), "results.json"))), sub)
        check_junit(grade(attnlab, loop, "junit"), loop_book, tmp)  # errors, not failures
        one = json.loads(grade(attnlab, small[-1:], "gradescope"))
        check_gradescope(one, book["submissions"][-1])
        leftovers(tmp)
        numpy_sub = [s for s in submissions if os.path.basename(s) == "numpy"]
        if "bwrap" in boxes:
            check_interpreter_folders(attnlab, tmp, numpy_sub[0])
        check_cpu_share(attnlab, tmp, numpy_sub[0])
        check_sigkill(attnlab, tmp, [s for s in submissions if os.path.basename(s) == "daemon"])
        leftovers(tmp)
    print(f"ok: {len(submissions)} submissions graded on {HIDDEN + 1} cases under {' and '.join(boxes)}; "
          "json, text, csv, junit and gradescope agree")


if __name__ == "__main__":
    main()
