#!/usr/bin/env python3
"""The Gradescope and PrairieLearn bundles of `exercise new --platform`, run as the platform runs them.

Usage: platform_bundles.py ATTNLAB

Gradescope: autograder.zip is unpacked to /autograder/source, run_autograder copied to
/autograder/run_autograder, a submission put in /autograder/submission, and run_autograder run
inside bubblewrap with that folder bound at /autograder (its own PID and network namespaces,
the system read-only), as the autograder's container runs it. Its results.json is checked field
by field against Gradescope's documented format: a right submission gets every point, a wrong
one 0 on each case it fails, a hidden case is after_published and shows no seed or size.
PrairieLearn: the bundle's tests/ at /grade/tests, the submission at /grade/student, run.sh run
the same way; results.json holds gradable, a score in 0..1 and tests with points, max_points
and message; an empty submission is gradable: false. Exits 77 (skipped) without bubblewrap or
numpy.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

EXERCISE = "rope-interleaved"
HIDDEN = 5  # exercise grade's default, which the bundles use


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def in_container(folder, mount_at, entry):
    """ENTRY run inside bubblewrap with FOLDER bound at MOUNT_AT, as the platform's container would."""
    args = ["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-net", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in ("/bin", "/sbin", "/lib", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", folder, mount_at, "--chdir", mount_at, "--", entry]
    done = run(args, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    if done.returncode != 0:
        fail(f"{entry} exited {done.returncode}: {done.stderr}")


def submissions(attnlab, tmp):
    """A right and a wrong program (the half pairing), each a copy of the handed-out folder."""
    from exercise_starters import SOLUTIONS
    hw = os.path.join(tmp, "hw")
    starter = open(os.path.join(hw, "starter.py")).read()
    import re
    out = {}
    for name, body in (("right", SOLUTIONS[EXERCISE]), ("wrong", SOLUTIONS["rope-half"])):
        folder = os.path.join(tmp, name)
        shutil.copytree(hw, folder)
        program = re.sub(r"(# --- your code: start ---\n).*?(    # --- your code: end ---)", lambda m: m.group(1) + body.lstrip("\n") + m.group(2), starter, flags=re.S)
        open(os.path.join(folder, "starter.py"), "w").write(program)
        out[name] = folder
    return out


def no_seed(text, grading):
    for seed in grading["hidden_seeds"]:
        if str(seed) in text:
            fail(f"a hidden seed is shown: {text[:200]}")


def gradescope(attnlab, tmp, subs, grading):
    bundle = os.path.join(tmp, "hw.autograder.zip")
    for name, folder in subs.items():
        root = os.path.join(tmp, "gs-" + name)
        os.makedirs(os.path.join(root, "source"))
        with zipfile.ZipFile(bundle) as z:
            if sorted(z.namelist()) != ["attnlab", "grading.json", "run_autograder", "setup.sh"]:
                fail(f"autograder.zip holds {z.namelist()}")
            z.extractall(os.path.join(root, "source"))
            for info in z.infolist():  # extractall drops the modes
                os.chmod(os.path.join(root, "source", info.filename), info.external_attr >> 16 & 0o777)
        shutil.copy(os.path.join(root, "source", "run_autograder"), os.path.join(root, "run_autograder"))
        shutil.copytree(folder, os.path.join(root, "submission"))
        in_container(root, "/autograder", "/autograder/run_autograder")
        results = json.load(open(os.path.join(root, "results", "results.json")))
        check_gradescope(name, results, grading)


def check_gradescope(name, results, grading):
    if set(results) != {"score", "execution_time", "output", "tests"} or not isinstance(results["score"], (int, float)):
        fail(f"gradescope {name}: fields {sorted(results)}")
    tests = results["tests"]
    if [t["name"] for t in tests] != ["visible"] + [f"hidden-{i}" for i in range(1, HIDDEN + 1)]:
        fail(f"gradescope {name}: tests {[t.get('name') for t in tests]}")
    for t in tests:
        if set(t) != {"name", "score", "max_score", "status", "output", "visibility"} or t["max_score"] != 1:
            fail(f"gradescope {name}: test {t}")
        if t["visibility"] != ("visible" if t["name"] == "visible" else "after_published"):
            fail(f"gradescope {name}: {t['name']} visibility {t['visibility']}")
        want = 1 if name == "right" else 0
        if t["score"] != want or t["status"] != ("passed" if want else "failed"):
            fail(f"gradescope {name}: {t['name']} score {t['score']} status {t['status']}")
        no_seed(t["output"], grading)
    if results["score"] != (HIDDEN + 1 if name == "right" else 0):
        fail(f"gradescope {name}: score {results['score']}")


def prairielearn(attnlab, tmp, subs, grading):
    bundle = os.path.join(tmp, "hw.prairielearn")
    if sorted(os.listdir(bundle)) != ["info.json", "tests"] or sorted(os.listdir(os.path.join(bundle, "tests"))) != ["attnlab", "grading.json", "run.sh"]:
        fail(f"the PrairieLearn bundle holds {sorted(os.listdir(bundle))}")
    info = json.load(open(os.path.join(bundle, "info.json")))["externalGradingOptions"]
    if info["enabled"] is not True or info["entrypoint"] != "/grade/tests/run.sh":
        fail(f"info.json: {info}")
    for name, folder in list(subs.items()) + [("empty", None)]:
        root = os.path.join(tmp, "pl-" + name)
        shutil.copytree(os.path.join(bundle, "tests"), os.path.join(root, "tests"))
        if folder:
            shutil.copytree(folder, os.path.join(root, "student"))
        else:
            os.makedirs(os.path.join(root, "student"))
        in_container(root, "/grade", "/grade/tests/run.sh")
        check_prairielearn(name, json.load(open(os.path.join(root, "results", "results.json"))), grading)


def check_prairielearn(name, results, grading):
    if name == "empty":
        if results.get("gradable") is not False or "no file" not in results.get("message", ""):
            fail(f"prairielearn, an empty submission: {results}")
        return
    if results.get("gradable") is not True or set(results) != {"gradable", "score", "message", "output", "tests"}:
        fail(f"prairielearn {name}: {results}")
    if results["score"] != (1.0 if name == "right" else 0.0):
        fail(f"prairielearn {name}: score {results['score']}")
    for t in results["tests"]:
        if set(t) != {"name", "description", "points", "max_points", "message", "output"} or t["max_points"] != 1:
            fail(f"prairielearn {name}: test {t}")
        if t["points"] != (1 if name == "right" else 0):
            fail(f"prairielearn {name}: {t['name']} points {t['points']}")
        no_seed(t["message"], grading)


def main():
    attnlab = os.path.abspath(sys.argv[1])
    try:
        import numpy  # noqa: F401
    except ImportError:
        print("skipped: numpy is not installed (Debian: python3-numpy)")
        sys.exit(77)
    if shutil.which("bwrap") is None or run(["bwrap", "--ro-bind", "/", "/", "true"]).returncode != 0:
        print("skipped: bubblewrap cannot make a container here (Debian: bubblewrap)")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="attnlab-platforms-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)
        for platform in ("gradescope", "prairielearn"):
            made = run([attnlab, "exercise", "new", EXERCISE, os.path.join(tmp, "hw"), "--seed", "7", "--lang", "en", "--platform", platform, "--force"])
            if made.returncode != 0:
                fail(f"exercise new --platform {platform}: {made.stderr}")
        subs = submissions(attnlab, tmp)
        with zipfile.ZipFile(os.path.join(tmp, "hw.autograder.zip")) as z:  # each bundle keeps the seeds made with it
            gradescope(attnlab, tmp, subs, json.loads(z.read("grading.json")))
        prairielearn(attnlab, tmp, subs, json.load(open(os.path.join(tmp, "hw.prairielearn", "tests", "grading.json"))))
    print("ok: Gradescope's and PrairieLearn's bundles, run in their folder layouts, write results files in the platforms' formats")


if __name__ == "__main__":
    main()
