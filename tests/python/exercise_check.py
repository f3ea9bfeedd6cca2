#!/usr/bin/env python3
"""One exercise end to end, as a teacher and a student would use it (no numpy needed).

Usage: exercise_check.py ATTNLAB NAME
       exercise_check.py ATTNLAB all    (every exercise `attnlab exercise list` names, two at a time)

`exercise new` writes the folder; starter.py compiles; `exercise solve` gives an answer that
check.sh accepts (exit 0); every catalogued mistake gives an answer that check.sh rejects
(exit 1) and names; check.sh exits 2 with one line when the answer or attnlab is missing.
"""
import concurrent.futures
import json
import os
import py_compile
import re
import subprocess
import sys
import tempfile


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, env=None, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def main():
    attnlab, name = os.path.abspath(sys.argv[1]), sys.argv[2]
    env = dict(os.environ, PATH=os.path.dirname(attnlab) + os.pathsep + os.environ.get("PATH", ""), LANG="C")
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "hw")
        made = run([attnlab, "exercise", "new", name, folder, "--lang", "en", "--seed", "3"], env)
        if made.returncode != 0:
            fail(f"exercise new exited {made.returncode}: {made.stderr}")
        files = sorted(os.listdir(folder))
        if files != ["README.md", "check.sh", "exercise.json", "inputs", "starter.py"]:
            fail(f"files: {files}")
        spec = json.load(open(os.path.join(folder, "exercise.json")))
        for key in ["name", "subcommand", "params", "command", "answer", "inputs"]:
            if key not in spec:
                fail(f"exercise.json has no {key}")
        if spec["name"] != name or spec["command"][0] != spec["subcommand"]:
            fail(f"exercise.json names {spec['name']} / {spec['command'][0]}")
        if sorted(os.listdir(os.path.join(folder, "inputs"))) != sorted([os.path.basename(i["file"]) for i in spec["inputs"]] + ["params.json"]):
            fail("inputs/ holds other files than exercise.json lists, and params.json")
        sizes = json.load(open(os.path.join(folder, "inputs", "params.json")))
        if sizes != spec["sizes"] or any(not spec["size_range"][k][0] <= sizes[k] <= spec["size_range"][k][1] for k in spec["size_range"]):
            fail(f"inputs/params.json {sizes} is not exercise.json's sizes {spec['sizes']} within {spec['size_range']}")
        if any(os.path.isabs(i["file"]) for i in spec["inputs"]) or os.path.isabs(spec["answer"]["file"]):
            fail("a path in exercise.json is absolute")
        if any(i["name"] == spec["answer"]["tensor"] for i in spec["inputs"]):
            fail("the answer is among the inputs")
        py_compile.compile(os.path.join(folder, "starter.py"), doraise=True)
        check = os.path.join(folder, "check.sh")

        missing = run([check], env)
        if missing.returncode != 2 or missing.stdout or missing.stderr.count("\n") != 1 or "no answer" not in missing.stderr:
            fail(f"check.sh without an answer: exit {missing.returncode}, stderr {missing.stderr!r}")

        solved = run([attnlab, "exercise", "solve", name, folder], env)
        if solved.returncode != 0 or os.path.exists(os.path.join(folder, "answer.npy")):
            fail(f"exercise solve exited {solved.returncode} ({solved.stderr}) or wrote the student's answer.npy")
        beside = run([check, os.path.join(folder, "solution", "answer.npy")], env)
        if beside.returncode != 0 or "MATCH" not in beside.stdout:
            fail(f"check.sh on solution/answer.npy exited {beside.returncode}: {beside.stdout[-600:]} {beside.stderr}")
        forced = run([attnlab, "exercise", "solve", name, folder, "--force"], env)
        if forced.returncode != 0:
            fail(f"exercise solve --force exited {forced.returncode}: {forced.stderr}")
        right = run([check], env)
        if right.returncode != 0 or "MATCH" not in right.stdout:
            fail(f"check.sh on the reference answer exited {right.returncode}: {right.stdout[-600:]} {right.stderr}")
        # The answer's path as an argument, relative to where check.sh is called from.
        relative = run([os.path.join("hw", "check.sh"), os.path.join("hw", "answer.npy")], env, cwd=tmp)
        if relative.returncode != 0:
            fail(f"check.sh hw/answer.npy from the parent folder exited {relative.returncode}: {relative.stderr}")
        no_attnlab = run(["/bin/sh", check], dict(env, PATH="/usr/bin:/bin"))
        if no_attnlab.returncode != 2 or "not on PATH" not in no_attnlab.stderr:
            fail(f"check.sh without attnlab: exit {no_attnlab.returncode}, {no_attnlab.stderr!r}")

        if not spec["mistakes"]:
            fail("no catalogued mistake")
        for mistake in spec["mistakes"]:
            wrong = run([attnlab, "exercise", "solve", name, folder, "--mistake", mistake["id"], "--force"], env)
            if wrong.returncode != 0:
                fail(f"solve --mistake {mistake['id']} exited {wrong.returncode}: {wrong.stderr}")
            graded = run([check], env)
            if graded.returncode != 1:
                fail(f"check.sh accepted mistake {mistake['id']} (exit {graded.returncode})")
            if f"matches {mistake['id']}" not in graded.stdout:
                fail(f"check.sh did not name mistake {mistake['id']}: {graded.stdout[-600:]}")
            if graded.stderr.count("\n") != 1 or "failed checks: against" not in graded.stderr:
                fail(f"stderr for mistake {mistake['id']}: {graded.stderr!r}")
        check_chinese(attnlab, name, spec["mistakes"][0]["id"], env, tmp)
        print(f"ok: {name}: reference accepted, {len(spec['mistakes'])} mistakes rejected and named; Chinese throughout")


ENGLISH = re.compile(r"\b[A-Za-z]{3,}[ ,]+[A-Za-z]{3,}\b")


def english_left(line):
    """Two English words in a row, once what is not prose is taken out: formulas between |...|,
    calls f(...), identifiers with an underscore, dtype and option names, a shell command."""
    line = re.sub(r"\|[^|]*\||export PATH=\S+", " ", line)
    for _ in range(3):
        line = re.sub(r"[A-Za-z_][A-Za-z0-9_.]*\([^()]*\)", " ", line)
    line = re.sub(r"\b[A-Za-z0-9]*_[A-Za-z0-9_]*\b|--[a-z-]+|\b(?:b?float(?:16|32|64)|MATCH|DIFFERS)\b", " ", line)
    return ENGLISH.findall(line)


def check_chinese(attnlab, name, mistake, env, tmp):
    """A Chinese exercise speaks Chinese: check.sh, exercise solve's message, the against block
    on a catalogued mistake (ids, option names, numbers and the verdict words aside)."""
    folder = os.path.join(tmp, "zh")
    made = run([attnlab, "exercise", "new", name, folder, "--lang", "zh", "--seed", "3"], env)
    solved = run([attnlab, "exercise", "solve", name, folder, "--mistake", mistake, "--force", "--lang", "zh"], env)
    graded = run([os.path.join(folder, "check.sh")], env)
    script = open(os.path.join(folder, "check.sh")).read()
    comments = [l for l in script.splitlines() if l.lstrip().startswith("#") and not l.startswith("#!")]
    texts = [made.stdout, solved.stdout, graded.stdout] + comments + [l for l in script.splitlines() if "echo" in l]
    left = [(t, english_left(line)) for t in texts for line in t.splitlines() if english_left(line)]
    if graded.returncode != 1 or left:
        fail(f"{name} in Chinese: English left in {left[:3]} (check.sh exit {graded.returncode})")


def check_all(attnlab):
    """Each exercise of the catalogue in a process of its own; one line each, then the count."""
    listed = run([attnlab, "exercise", "list", "--format", "json"])
    if listed.returncode != 0:
        fail(f"exercise list exited {listed.returncode}: {listed.stderr}")
    names = [e["name"] for e in json.loads(listed.stdout)["exercises"]]
    one = lambda name: subprocess.run([sys.executable, os.path.abspath(__file__), attnlab, name], capture_output=True, text=True, timeout=300)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, names))
    failed = 0
    for name, r in zip(names, results):
        lines = (r.stdout + r.stderr).strip().splitlines()
        print(lines[-1] if lines else f"FAIL: {name}: no output")
        failed += r.returncode != 0
    print(f"{len(names) - failed} passed, {failed} failed")
    sys.exit(1 if failed or not names else 0)


if __name__ == "__main__":
    if sys.argv[2:] == ["all"]:
        check_all(os.path.abspath(sys.argv[1]))
    else:
        main()
