#!/usr/bin/env python3
"""A class graded in four shards, as four array tasks would grade it, and merged.

Usage: grade_shards.py ATTNLAB

A class of 40 submissions of causal-mask (shell programs: right at the visible size only,
crashing, missing, timing out) is graded once on one machine (`--out one`), then in four
shards run at once as plain processes, each with the variables a Slurm array task has
(SLURM_ARRAY_TASK_ID from 1, SLURM_ARRAY_TASK_MIN 1, SLURM_ARRAY_TASK_COUNT 4), into parts/,
and merged (`exercise merge parts/*.json --out merged`). Every format of the merge must equal
the one-machine grading, timings aside; a shard graded again replaces its part and changes
nothing; a merge without a shard exits 2 naming it.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXERCISE = "causal-mask"
COMMON = ["--seed", "3", "--run", "sh run.sh", "--hidden", "2", "--timeout", "1", "--jobs", "1"]
SHARDS = 4


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env)


def make_class(attnlab, tmp):
    hw = os.path.join(tmp, "hw")
    if run([attnlab, "exercise", "new", EXERCISE, hw, "--seed", "3"]).returncode != 0 or run([attnlab, "exercise", "solve", EXERCISE, hw]).returncode != 0:
        fail("exercise new or solve")
    kinds = ["[ -f saved.npy ] && cp saved.npy answer.npy; exit 0", "exit 3", "exit 0"]
    subs = []
    for i in range(40):
        folder = os.path.join(tmp, "subs", f"student{i:02d}")
        os.makedirs(folder)
        program = "sleep 30" if i in (7, 27) else kinds[i % len(kinds)]  # two that time out
        open(os.path.join(folder, "run.sh"), "w").write(program + "\n")
        shutil.copy(os.path.join(hw, "solution", "answer.npy"), os.path.join(folder, "saved.npy"))
        subs.append(folder)
    return sorted(subs)


def grade_shards(attnlab, subs, parts, only=None):
    """The shards at once, each a process with a Slurm array task's variables."""
    running = []
    for task in range(1, SHARDS + 1):
        if only is not None and task - 1 != only:
            continue
        env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN="1", SLURM_ARRAY_TASK_COUNT=str(SHARDS))
        running.append(subprocess.Popen([attnlab, "exercise", "grade", EXERCISE, *subs, *COMMON, "--shard", "auto", "--out", parts],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    for p in running:
        out, err = p.communicate(timeout=600)
        if p.returncode != 0 or err:
            fail(f"a shard exited {p.returncode}: {err}")


def untimed(name, text):
    """A gradebook file without what differs between two gradings of the same class: times."""
    if name.endswith(".json"):
        j = json.loads(text)
        j.pop("execution_time", None)
        for sub in j.get("submissions", []):
            sub.pop("time_s", None)
            for c in sub["cases"]:
                c.pop("time_s", None)
        return j
    if name == "junit.xml":
        return re.sub(r' (time|timestamp)="[^"]*"', "", text)
    return text


def files(folder):
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            path = os.path.join(root, n)
            out[os.path.relpath(path, folder)] = untimed(n, open(path).read())
    return out


def main():
    attnlab = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        subs = make_class(attnlab, tmp)
        one = os.path.join(tmp, "one")
        done = run([attnlab, "exercise", "grade", EXERCISE, *subs, *COMMON, "--out", one])
        if done.returncode != 0:
            fail(f"the one-machine grading: {done.stderr}")
        parts = os.path.join(tmp, "parts")
        grade_shards(attnlab, subs, parts)
        if sorted(os.listdir(parts)) != [f"part-{i}-of-{SHARDS}.json" for i in range(SHARDS)]:
            fail(f"parts: {sorted(os.listdir(parts))}")
        sizes = [len(json.load(open(os.path.join(parts, f"part-{i}-of-{SHARDS}.json")))["submissions"]) for i in range(SHARDS)]
        if sizes != [10, 10, 10, 10]:
            fail(f"shard sizes {sizes}")
        part_files = sorted(os.path.join(parts, n) for n in os.listdir(parts))
        for attempt in range(2):  # then again, after shard 2 is graded anew
            merged = os.path.join(tmp, f"merged{attempt}")
            done = run([attnlab, "exercise", "merge", *part_files, "--out", merged])
            if done.returncode != 0:
                fail(f"merge: {done.stderr}")
            want, got = files(one), files(merged)
            if sorted(want) != sorted(got):
                fail(f"the merge wrote {sorted(got)}, one machine {sorted(want)}")
            for name in want:
                if want[name] != got[name]:
                    fail(f"{name} differs between the merge and one machine")
            grade_shards(attnlab, subs, parts, only=2)
        done = run([attnlab, "exercise", "merge", *[p for p in part_files if "part-1-" not in p]])
        if done.returncode != 2 or done.stdout or "the parts lack shard 1 of 4" not in done.stderr:
            fail(f"a merge without shard 1: exit {done.returncode}, {done.stderr!r}")
    print(f"ok: 40 submissions in {SHARDS} shards with Slurm's variables merge into the one-machine gradebook, in every format")


if __name__ == "__main__":
    main()
