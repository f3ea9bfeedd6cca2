#!/usr/bin/env python3
"""A variant for every student: a roster of 30, each graded on cases of their own.

Usage: grade_roster.py ATTNLAB

`exercise new rope-interleaved hw --roster roster.csv` must write one folder per student, each
with a seed and sizes of its own (no two alike), within the exercise's grading ranges, and
nothing of the secret in any of them. The class hands in: 25 right solutions written
differently (a line naming the student), two the same uncatalogued wrong program (the answer
times 1.5), one who hands in a classmate's right answer file, one whose program writes the
reference answer of the teacher's default exercise, and one more right solution. Graded with
the grading file alone, every right student gets full marks on their own visible case (the
seed and sizes of their folder) and on hidden cases of their own; the copier of a classmate's
answer and the teacher's-answer one fail every case; the two with the same wrong program are a
pair in the teacher's report and the JSON leads, and nowhere a student sees. A submission no
student hands in is refused (exit 2 naming it), or skipped and named with --unmatched skip; a
roster's folder column maps other folder names to the students; two submissions of one
student are refused; two shards merge into the one-machine gradebook.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy  # noqa: F401
except ImportError:
    print("skipped: numpy is not installed (Debian: python3-numpy)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exercise_starters import MARKED, SOLUTIONS  # noqa: E402

EXERCISE = "rope-interleaved"
STUDENTS = [f"s{i:02d}" for i in range(30)]
PAIR = ["s03", "s04"]        # the same uncatalogued wrong program
COPIER, SOURCE = "s07", "s08"  # s07 hands in s08's answer file
TEACHERS = "s09"             # writes the answer of the teacher's own exercise
HIDDEN = 2


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=cwd)


def write_program(folder, body):
    starter = os.path.join(folder, "starter.py")
    text, count = MARKED.subn(lambda m: m.group(1) + body.strip("\n") + "\n" + m.group(2), open(starter).read())
    if count != 1:
        fail(f"{starter}: {count} marked regions")
    open(starter, "w").write(text)


def make_class(attnlab, tmp):
    roster = os.path.join(tmp, "roster.csv")
    open(roster, "w").write("\n".join(STUDENTS) + "\n")
    hw = os.path.join(tmp, "hw")
    made = run([attnlab, "exercise", "new", EXERCISE, hw, "--roster", roster, "--lang", "en"])
    if made.returncode != 0 or "30 students" not in made.stdout:
        fail(f"exercise new --roster: exit {made.returncode}: {made.stdout} {made.stderr}")
    if sorted(os.listdir(hw)) != STUDENTS:
        fail(f"the folders of hw: {sorted(os.listdir(hw))}")
    # the teacher's own exercise (no roster), whose answer s09 hands in
    teacher = os.path.join(tmp, "teacher")
    if run([attnlab, "exercise", "new", EXERCISE, teacher]).returncode or run([attnlab, "exercise", "solve", EXERCISE, teacher]).returncode:
        fail("exercise new and solve of the teacher's exercise")
    if run([attnlab, "exercise", "solve", EXERCISE, os.path.join(hw, SOURCE)]).returncode:
        fail("exercise solve in a student's folder")
    subs = os.path.join(tmp, "subs")
    for sid in STUDENTS:
        folder = os.path.join(subs, sid)
        shutil.copytree(os.path.join(hw, sid), folder, ignore=shutil.ignore_patterns("solution"))
        right = SOLUTIONS[EXERCISE].rstrip("\n") + "\n"
        if sid in PAIR:
            body = right.replace("return out", "return out * 1.5")
        elif sid == COPIER:
            shutil.copy(os.path.join(hw, SOURCE, "solution", "answer.npy"), os.path.join(folder, "classmate.npy"))
            body = "    import shutil\n    shutil.copy(os.path.join(HERE, 'classmate.npy'), os.path.join(HERE, 'answer.npy'))\n    raise SystemExit(0)\n"
        elif sid == TEACHERS:
            shutil.copy(os.path.join(teacher, "solution", "answer.npy"), os.path.join(folder, "teacher.npy"))
            body = "    import shutil\n    shutil.copy(os.path.join(HERE, 'teacher.npy'), os.path.join(HERE, 'answer.npy'))\n    raise SystemExit(0)\n"
        else:
            body = right.replace("return out", f"student = '{sid}'  # written by {sid}\n    return out")
        write_program(folder, body)
    return hw, subs


def check_folders(hw, grading, tmp, attnlab):
    listed = json.loads(run([attnlab, "exercise", "list", "--format", "json"]).stdout)["exercises"]
    ranges = {k: (v["min"], v["max"]) for k, v in next(e for e in listed if e["name"] == EXERCISE)["sizes"].items()}
    seen = set()
    secret = json.load(open(grading))["variants"]["secret"]
    for sid in STUDENTS:
        j = json.load(open(os.path.join(hw, sid, "exercise.json")))
        key = (j["seed"], tuple(sorted(j["sizes"].items())))
        if key in seen:
            fail(f"{sid}: the seed and sizes of a classmate")
        seen.add(key)
        for name, (lo, hi) in ranges.items():
            if not lo <= j["sizes"][name] <= hi:
                fail(f"{sid}: {name} {j['sizes'][name]} outside {lo}..{hi}")
        for root, _, files in os.walk(os.path.join(hw, sid)):
            for f in files:
                if secret.encode() in open(os.path.join(root, f), "rb").read():
                    fail(f"{sid}/{f} holds the secret")
    if len({s for s, _ in seen}) != len(STUDENTS):
        fail("two students share a seed")
    return {sid: json.load(open(os.path.join(hw, sid, "exercise.json"))) for sid in STUDENTS}


def grade(attnlab, subs, grading, *extra):
    return run([attnlab, "exercise", "grade", EXERCISE, *subs, "--grading", grading, "--python", sys.executable, "--hidden", str(HIDDEN),
                "--sandbox", "none", "--jobs", "2", "--timeout", "20", *extra])


def check_book(book, folders):
    hidden_seeds = set()
    for sub in book["submissions"]:
        sid = os.path.basename(sub["path"])
        if sub["student"] != sid:
            fail(f"{sid}: graded as student {sub['student']}")
        visible = sub["cases"][0]
        mine = folders[sid]
        if visible["config"] != dict(seed=mine["seed"], **mine["sizes"]):
            fail(f"{sid}: visible case {visible['config']}, the folder's is seed {mine['seed']} {mine['sizes']}")
        for c in sub["cases"][1:]:
            hidden_seeds.add(c["config"]["seed"])
        verdicts = [c["verdict"] for c in sub["cases"]]
        wrong = sid in PAIR or sid in (COPIER, TEACHERS)
        if wrong and (sub["score"] != 0 or "match" in verdicts):
            fail(f"{sid}: a wrong answer scored {sub['score']} ({verdicts})")
        if not wrong and sub["score"] != sub["max_score"]:
            fail(f"{sid}: a right answer scored {sub['score']}/{sub['max_score']}: {[c['detail'] for c in sub['cases']]}")
    if len(hidden_seeds) != HIDDEN * len(book["submissions"]):
        fail(f"hidden cases shared between students: {len(hidden_seeds)} seeds for {len(book['submissions'])} students")
    pair = [p for p in (s["path"] for s in book["submissions"]) if os.path.basename(p) in PAIR]
    if pair not in book["leads"]["same_code"]:
        fail(f"the two with the same wrong program are no lead: {book['leads']}")
    if any(len(group) > 2 for group in book["leads"]["same_code"]):
        fail(f"right solutions written differently are a lead: {book['leads']['same_code']}")


def check_student_formats(out):
    for name in ["grades.txt", "grades.csv", "junit.xml"] + [f"gradescope/{s}/results.json" for s in STUDENTS]:
        text = open(os.path.join(out, name)).read()
        if "lead" in text or "same code" in text:
            fail(f"{name}, which a student may see, holds the leads")


def check_refusals(attnlab, subs, grading, tmp):
    stranger = os.path.join(tmp, "stranger")
    shutil.copytree(os.path.join(subs, "s00"), stranger)
    refused = grade(attnlab, [os.path.join(subs, "s00"), stranger], grading)
    if refused.returncode != 2 or refused.stdout or "stranger" not in refused.stderr or refused.stderr.count("\n") != 1:
        fail(f"a submission of no student: exit {refused.returncode}, {refused.stderr!r}")
    skipped = grade(attnlab, [os.path.join(subs, "s00"), stranger], grading, "--unmatched", "skip", "--format", "json")
    if skipped.returncode != 0 or json.loads(skipped.stdout)["not_graded"] != [stranger]:
        fail(f"--unmatched skip: exit {skipped.returncode}: {skipped.stderr}")
    # a roster whose folder column names the folders the platform hands back
    renamed = os.path.join(tmp, "renamed")
    with open(os.path.join(tmp, "folders.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "sid", "folder"])
        for sid in STUDENTS[:3]:
            shutil.copytree(os.path.join(subs, sid), os.path.join(renamed, f"submission {sid}, final"))
            w.writerow([f"Student {sid}", sid, f"submission {sid}, final"])
    mapped = grade(attnlab, sorted(os.path.join(renamed, d) for d in os.listdir(renamed)), grading, "--roster", os.path.join(tmp, "folders.csv"),
                   "--roster-column", "sid", "--folder-column", "folder", "--format", "json")
    if mapped.returncode != 0:
        fail(f"--folder-column: exit {mapped.returncode}: {mapped.stderr}")
    book = json.loads(mapped.stdout)
    if [(s["student"], s["score"]) for s in book["submissions"]] != [(sid, 1 + HIDDEN) for sid in STUDENTS[:3]]:
        fail(f"--folder-column: {[(s['student'], s['score']) for s in book['submissions']]}")
    twice = grade(attnlab, [os.path.join(subs, "s00"), os.path.join(renamed, "submission s01, final"), os.path.join(subs, "s01")], grading,
                  "--roster", os.path.join(tmp, "folders.csv"), "--roster-column", "sid", "--folder-column", "folder")
    if twice.returncode != 2 or "s00" not in twice.stderr:
        fail(f"two submissions of one student: exit {twice.returncode}, {twice.stderr!r}")


def untimed(text):
    return re.sub(r'"time_s": [0-9.e+-]+', '"time_s": 0', text)


def check_shards(attnlab, subs, grading, tmp):
    few = [os.path.join(subs, sid) for sid in STUDENTS[:6]]
    one = grade(attnlab, few, grading, "--format", "json")
    parts = os.path.join(tmp, "parts")
    for i in range(2):
        if grade(attnlab, few, grading, "--shard", f"{i}/2", "--out", parts).returncode != 0:
            fail(f"shard {i}/2")
    merged = run([attnlab, "exercise", "merge", os.path.join(parts, "part-0-of-2.json"), os.path.join(parts, "part-1-of-2.json"), "--format", "json"])
    if merged.returncode != 0 or untimed(merged.stdout) != untimed(one.stdout):
        fail(f"two shards of a class with a roster do not merge into the one-machine gradebook: {merged.stderr}")


def main():
    attnlab = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        hw, subs = make_class(attnlab, tmp)
        grading = hw + ".grading.json"
        folders = check_folders(hw, grading, tmp, attnlab)
        out = os.path.join(tmp, "book")
        graded = grade(attnlab, sorted(os.path.join(subs, s) for s in STUDENTS), grading, "--out", out, "--teacher-report",
                       os.path.join(tmp, "teacher.txt"))
        if graded.returncode != 0:
            fail(f"exercise grade: exit {graded.returncode}: {graded.stderr}")
        check_book(json.load(open(os.path.join(out, "grades.json"))), folders)
        teacher = open(os.path.join(tmp, "teacher.txt")).read()
        if f"{subs}/{PAIR[0]}, {subs}/{PAIR[1]}" not in teacher:
            fail(f"the teacher's report does not name the pair:\n{teacher}")
        check_student_formats(out)
        check_refusals(attnlab, subs, grading, tmp)
        check_shards(attnlab, subs, grading, tmp)
    print("ok: 30 students, each graded on cases of their own; the pair is a lead for the teacher alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
