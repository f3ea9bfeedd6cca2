#!/usr/bin/env python3
"""How long a class takes to grade: on one machine, in four shards, and per run.

Usage: grade_class.py ATTNLAB [--students N] [--hidden H] [--jobs J] [--sandbox bwrap|none]

A class of N students (300 by default) of rope-interleaved, each handing in a numpy program:
80 % right, 10 % one catalogued mistake (positions from 1), 10 % crashing. Graded on the visible
case and H hidden ones (9: ten cases in all) with --python /usr/bin/python3:
  1. on one machine, --jobs J;
  2. in four shards (--shard I/4), one after another on this machine, each timed: on four such
     machines the class takes the longest shard plus the merge;
  3. the merge of the four parts;
  4. one submission alone, as a platform's container grades it (--format gradescope, the
     interpreter checked first as every grading does), the mean of five.
Then the cost of one run, from 100 runs of each of three programs (`true`, `python3 -c pass`,
`python3 -c 'import numpy'`), one at a time: the sandbox, the copy in and the answer read, then
the interpreter, then numpy. Prints a Markdown table; nothing is asserted (a benchmark, not a
test). Run it on an idle machine.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from exercise_starters import MARKED, SOLUTIONS  # noqa: E402

EXERCISE = "rope-interleaved"
PYTHON = "/usr/bin/python3"


def make_class(attnlab, tmp, students):
    hw = os.path.join(tmp, "hw")
    subprocess.run([attnlab, "exercise", "new", EXERCISE, hw, "--hidden-seeds", "--lang", "en"], check=True, capture_output=True)
    right = SOLUTIONS[EXERCISE].strip("\n")
    bodies = [right] * 8 + [right.replace("np.arange(L)[:, None]", "(np.arange(L)[:, None] + 1)"), "    raise ValueError('not done')"]
    subs = []
    for i in range(students):
        folder = os.path.join(tmp, "subs", f"student{i:04d}")
        shutil.copytree(hw, folder)
        starter = os.path.join(folder, "starter.py")
        text = MARKED.sub(lambda m: m.group(1) + bodies[i % len(bodies)] + "\n" + m.group(2), open(starter).read())
        open(starter, "w").write(text)
        subs.append(folder)
    return hw + ".grading.json", subs


def timed(args):
    start = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args[:4])}...: exit {r.returncode}: {r.stderr}")
    return time.monotonic() - start, r.stdout


def runs_in(book):
    return sum(len(s["cases"]) + (s["smallest_failing"]["runs"] if s["smallest_failing"] else 0) for s in book["submissions"])


def per_run(attnlab, tmp, grading, sandbox, program, count=100):
    """Seconds a run takes, from `count` runs of PROGRAM one at a time (its answer is missing)."""
    folder = os.path.join(tmp, "empty")
    os.makedirs(folder, exist_ok=True)
    seconds, _ = timed([attnlab, "exercise", "grade", EXERCISE, *[folder] * count, "--grading", grading, "--hidden", "0", "--run", program,
                        "--python", PYTHON, "--sandbox", sandbox, "--jobs", "1", "--format", "csv"])
    return seconds / count


def main():
    p = argparse.ArgumentParser()
    p.add_argument("attnlab")
    p.add_argument("--students", type=int, default=300)
    p.add_argument("--hidden", type=int, default=9)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--sandbox", default="bwrap")
    a = p.parse_args()
    attnlab = os.path.abspath(a.attnlab)
    common = ["--python", PYTHON, "--hidden", str(a.hidden), "--jobs", str(a.jobs), "--sandbox", a.sandbox]
    with tempfile.TemporaryDirectory() as tmp:
        grading, subs = make_class(attnlab, tmp, a.students)
        whole, text = timed([attnlab, "exercise", "grade", EXERCISE, *subs, "--grading", grading, "--format", "json", *common])
        runs = runs_in(json.loads(text))
        shards = []
        for i in range(4):
            seconds, _ = timed([attnlab, "exercise", "grade", EXERCISE, *subs, "--grading", grading, "--shard", f"{i}/4", "--out", os.path.join(tmp, "parts"), *common])
            shards.append(seconds)
        merge, _ = timed([attnlab, "exercise", "merge", *[os.path.join(tmp, "parts", f"part-{i}-of-4.json") for i in range(4)], "--out", os.path.join(tmp, "merged")])
        alone = []
        for sub in subs[:5]:
            seconds, _ = timed([attnlab, "exercise", "grade", EXERCISE, sub, "--grading", grading, "--format", "gradescope", *common])
            alone.append(seconds)
        costs = {program: per_run(attnlab, tmp, grading, a.sandbox, program) for program in ["true", "python3 -c pass", "python3 -c 'import numpy'"]}
    cases = 1 + a.hidden
    print(f"{a.students} students x {cases} cases of {EXERCISE}, {runs} runs (the smallest-failing-case search included), "
          f"--jobs {a.jobs}, --sandbox {a.sandbox}, {os.cpu_count()} cores\n")
    print("| how | wall time |")
    print("|---|---|")
    print(f"| one machine | {whole:.0f} s ({whole / runs * 1000:.0f} ms a run) |")
    print(f"| four shards, each on a machine like this one | {max(shards):.0f} s for the longest shard + {merge:.2f} s merge "
          f"(shards: {', '.join(f'{s:.0f} s' for s in shards)}) |")
    print(f"| a platform, one container a submission | {sum(alone) / len(alone):.1f} s a submission |")
    print("\n| one run of | seconds, one at a time |")
    print("|---|---|")
    for program, seconds in costs.items():
        print(f"| `{program}` | {seconds:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
