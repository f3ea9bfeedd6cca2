#!/usr/bin/env python3
"""Exercise and submission folders from strangers: random tampered folders, each handed to
attnlab as a teacher would (exercise solve, exercise new --force, check.sh, --against with
--save). Every run must:
  - end with exit 0, 1 or 2 within 20 s (no crash, no signal, no hang on a FIFO);
  - on exit 2, print nothing on stdout and exactly one line on stderr;
  - refuse (exit 2) a folder whose exercise.json or inputs were tampered with;
  - write nothing outside its folder: the files beside it, and those its links point at, are
    byte-identical afterwards, and no new file appears beside it.
Usage: tampered_folders.py ATTNLAB [SEED] [FOLDERS]
"""
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile



def exercises(exe):
    """Every exercise, as `exercise list` gives them: the catalogue is the one list."""
    listed = subprocess.run([exe, "exercise", "list", "--format", "json"], capture_output=True, text=True, check=True).stdout
    return [e["name"] for e in json.loads(listed)["exercises"]]


def run(args, cwd, env):
    try:
        p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return None
    return p


def snapshot(root, skip):
    """Every file under root except the folder being tampered with: path -> hash (links by target)."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) != skip]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                seen[path] = "link:" + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    seen[path] = hashlib.sha256(f.read()).hexdigest()
            else:
                seen[path] = "special"
    return seen


def json_tamperings(outside):
    """Changes to exercise.json that make the folder unusable: solve must refuse each."""
    def drop(key):
        return lambda j: j.pop(key, None)

    def set_to(path, value):
        def change(j):
            target = j
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
        return change

    evil_files = ["../outside/secret.npy", "/etc/passwd", "inputs/../../outside/secret.npy", "", "inputs/\x1b[2Jx.npy",
                  "a" * 5000, os.path.join(outside, "secret.npy"), "inputs//x.npy", "./../x"]
    changes = [drop(k) for k in ("name", "seed", "sizes", "inputs")]
    changes += [set_to([k], v) for k in ("name", "seed", "sizes", "inputs") for v in (None, 3.5, -1, "x", [], {})
                if not (k == "sizes" and v == {}) and not (k == "inputs" and v == [])]  # both valid: the seeded inputs
    changes += [lambda j, f=f: j["inputs"] and j["inputs"][0].update(file=f) for f in evil_files]
    changes += [lambda j: j["inputs"] and j["inputs"][0].pop("name"), lambda j: j["inputs"] and j["inputs"][0].pop("file"),
                lambda j: j["inputs"].append(7), lambda j: j["inputs"].append({"name": 1, "file": "x"}),
                lambda j: j["sizes"].update({k: -5 for k in j["sizes"]}) if j["sizes"] else j.pop("name"),
                lambda j: j["sizes"].update({k: 2 ** 40 for k in j["sizes"]}) if j["sizes"] else j.pop("name"),
                lambda j: j["sizes"].update({k: "4" for k in j["sizes"]}) if j["sizes"] else j.pop("name"),
                lambda j: j.update(name="no-such-exercise"), lambda j: j.update(seed=-3)]
    return changes


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)


def replacements(rng, outside):
    """What a file in the folder is replaced with: links out, special files, odd bytes."""
    return {
        "link to a file outside": lambda p: os.symlink(os.path.join(outside, "secret.npy"), p),
        "dangling link out": lambda p: os.symlink(os.path.join(outside, "created-by-a-link.npy"), p),
        "link to /dev/zero": lambda p: os.symlink("/dev/zero", p),
        "FIFO": os.mkfifo,
        "directory": os.mkdir,
        "empty file": lambda p: write_bytes(p, b""),
        "random bytes": lambda p: write_bytes(p, rng.randbytes(rng.randrange(1, 3000))),
        "deep brackets": lambda p: write_bytes(p, b"[" * 100000 + rng.randbytes(100)),
        "huge NPY shape": lambda p: write_bytes(p, b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, "
                                                   b"'shape': (99999999999, 99999999), }" + b" " * 40),
        "escape sequences": lambda p: write_bytes(p, b"1,2\n3,\x1b]0;owned\x07\n"),
    }


def replace_file(rng, path, outside, kinds):
    if os.path.lexists(path):
        os.remove(path)
    kind = rng.choice(kinds)
    replacements(rng, outside)[kind](path)
    return kind


def tamper_json(rng, folder, outside):
    path = os.path.join(folder, "exercise.json")
    if rng.random() < 0.6:
        with open(path) as f:
            j = json.load(f)
        original = json.dumps(j)
        rng.choice(json_tamperings(outside))(j)
        if json.dumps(j) == original:  # the change found nothing to change (an exercise without inputs)
            j.pop("name")
        text = json.dumps(j)
        with open(path, "w") as f:
            f.write(text)
        return "changed exercise.json"
    kind = replace_file(rng, path, outside, ["link to a file outside", "link to /dev/zero", "FIFO", "deep brackets", "directory"])
    return "exercise.json: " + kind


def tamper_input(rng, folder, outside):
    inputs = os.path.join(folder, "inputs")
    names = sorted(n for n in os.listdir(inputs) if n != "params.json")  # the sizes, read by the student's program only
    if not names:  # an exercise without inputs: its exercise.json instead
        return tamper_json(rng, folder, outside)
    if rng.random() < 0.15:
        shutil.rmtree(inputs)
        os.symlink(outside, inputs)
        return "inputs/ a link out"
    kinds = ["link to a file outside", "link to /dev/zero", "FIFO", "directory", "empty file", "huge NPY shape", "random bytes"]
    return "input: " + replace_file(rng, os.path.join(inputs, rng.choice(names)), outside, kinds)


def tamper_answer(rng, folder, outside):
    kinds = ["link to a file outside", "dangling link out", "FIFO", "link to /dev/zero", "random bytes", "escape sequences"]
    return "answer: " + replace_file(rng, os.path.join(folder, "answer.npy"), outside, kinds)


def check_run(p, must_refuse, what):
    if p is None:
        return f"{what}: did not end within 20 s"
    if p.returncode not in (0, 1, 2):
        return f"{what}: exit {p.returncode}; stderr {p.stderr[-300:]!r}"
    if p.returncode == 2 and (p.stdout or p.stderr.count(b"\n") != 1 or not p.stderr.endswith(b"\n")):
        return f"{what}: exit 2 without exactly one stderr line: {p.stderr[-300:]!r}"
    if b"\x1b" in p.stderr or b"\x1b" in p.stdout:
        return f"{what}: an escape byte reached the terminal"
    if must_refuse and p.returncode != 2:
        return f"{what}: exit {p.returncode}, not refused"
    return None


def one_folder(rng, exe, root, bases, outside, i, env):
    name = rng.choice(sorted(bases))
    folder = os.path.join(root, "work", f"f{i}")
    shutil.copytree(bases[name], folder, symlinks=True)
    part = rng.choice(["json", "input", "answer"])
    how = {"json": tamper_json, "input": tamper_input, "answer": tamper_answer}[part](rng, folder, outside)
    with open(os.path.join(root, "base-" + name, "exercise.json")) as f:
        command = json.load(f)["command"]
    before = snapshot(root, folder)
    if part == "answer":
        op = rng.choice(["solve", "check", "against"])
    else:
        op = rng.choice(["solve", "solve", "new-force"])
    if op == "solve":
        args = [exe, "exercise", "solve", name, folder] + (["--mistake", "nonexistent"] if rng.random() < 0.05 else [])
        must_refuse = part != "answer"
    elif op == "new-force":
        args, must_refuse = [exe, "exercise", "new", name, folder, "--force", "--lang", "en"], False
    elif op == "check":
        args, must_refuse = ["sh", os.path.join(folder, "check.sh")], False
    else:
        args = [exe] + command[1:] + ["--quiet", "--against", os.path.join(folder, "answer.npy"), "--save", os.path.join(folder, "s")]
        must_refuse = False
    problem = check_run(run(args, folder, env), must_refuse, f"folder {i} ({name}, {how}, {op})")
    after = snapshot(root, folder)
    if problem is None and after != before:
        changed = sorted(set(after.items()) ^ set(before.items()))[:3]
        problem = f"folder {i} ({name}, {how}, {op}): wrote outside its folder: {changed}"
    shutil.rmtree(folder, ignore_errors=True)
    return problem


def main():
    exe = os.path.abspath(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    rng = random.Random(seed)
    root = tempfile.mkdtemp(prefix="attnlab-tampered-")
    env = dict(os.environ, PATH=os.path.dirname(exe) + os.pathsep + os.environ.get("PATH", ""))
    outside = os.path.join(root, "outside")
    os.makedirs(outside)
    with open(os.path.join(outside, "secret.npy"), "w") as f:
        f.write("root:x:0:0:secret\nsecond line\n")
    os.makedirs(os.path.join(root, "work"))
    bases = {}
    for name in exercises(exe):
        base = os.path.join(root, "base-" + name)
        for args in ([exe, "exercise", "new", name, base, "--lang", "en"], [exe, "exercise", "solve", name, base]):
            p = subprocess.run(args, capture_output=True)
            if p.returncode != 0:
                print(f"setting up {name}: {p.stderr!r}")
                return 1
        bases[name] = base
    problems = [p for p in (one_folder(rng, exe, root, bases, outside, i, env) for i in range(count)) if p]
    for p in problems[:20]:
        print(p)
    print(f"{count} tampered folders: {len(problems)} problems")
    shutil.rmtree(root, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
