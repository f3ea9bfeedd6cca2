#!/usr/bin/env python3
"""Every output block of README.md and docs/*.md runs, or says why it does not.

A fenced block of program output is one of:
- ```console: its `$ attnlab ...` lines are run by tests/cli_readme.cpp;
- ```text preceded by `<!-- run: COMMAND -->`: COMMAND runs here with sh, in a fresh folder
  shared by the page's blocks (attnlab on PATH), and prints exactly the block (the folder's
  path reads /tmp/sess);
- ```text preceded by `<!-- not run: REASON -->`, where REASON says why (a timing of one
  machine, say).
A block of code (```python, ```sh, ```yaml) is input, not output. `<!-- file: NAME -->` before
one writes it to NAME in the page's folder; `<!-- fill: NAME -->` before a ```python block puts
the lines between its "your code: start" and "your code: end" markers in place of those of
NAME (an exercise's starter). A fence with no language is refused.

Usage: docs_blocks.py ATTNLAB SOURCE_DIR
Exits 77 (skipped) when numpy is missing (the pages' Python needs it).
"""
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

MARKER = re.compile(r"^<!-- (run|not run|file|fill): (.+?) -->$")
CODE = {"python", "sh", "yaml", "console"}
YOURS = re.compile(r"(# --- your code: start ---\n)(.*?)(\s*# --- your code: end ---)", re.S)


def blocks(lines):
    """(marker, language, body, line number) for each fenced block."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            lang = lines[i][3:].strip()
            marker = MARKER.match(lines[i - 1]) if i > 0 else None
            end = lines.index("```", i + 1)
            out.append((marker.groups() if marker else None, lang, "\n".join(lines[i + 1:end]) + "\n", i + 1))
            i = end + 1
        else:
            i += 1
    return out


def fill(path, body):
    mine = YOURS.search(body)
    text = open(path).read()
    if not mine or not YOURS.search(text):
        raise ValueError(f"{path}: no 'your code' markers to fill")
    open(path, "w").write(YOURS.sub(lambda m: m.group(1) + mine.group(2) + m.group(3), text, count=1))


def check_page(page, attnlab, failures):
    lines = open(page).read().split("\n")
    env = dict(os.environ, PATH=os.path.dirname(attnlab) + os.pathsep + "/usr/bin:/bin", LANG="C")
    ran = 0
    with tempfile.TemporaryDirectory() as folder:
        for marker, lang, body, at in blocks(lines):
            where = f"{os.path.basename(page)}:{at}"
            if lang == "":
                failures.append(f"{where}: a fence with no language (```text for output, or the code's language)")
            elif marker and marker[0] == "file":
                open(os.path.join(folder, marker[1]), "w").write(body)
            elif marker and marker[0] == "fill":
                fill(os.path.join(folder, marker[1]), body)
            elif lang in CODE:
                continue
            elif lang != "text":
                failures.append(f"{where}: ```{lang} is neither output nor a known language")
            elif not marker or marker[0] not in ("run", "not run") or not marker[1].strip():
                failures.append(f"{where}: an output block neither run (<!-- run: ... -->) nor marked <!-- not run: REASON -->")
            elif marker[0] == "run":
                r = subprocess.run(["sh", "-c", marker[1]], cwd=folder, env=env, capture_output=True, text=True, timeout=120)
                got = (r.stdout + r.stderr).replace(os.path.realpath(folder), "/tmp/sess").replace(folder, "/tmp/sess")
                if got != body:
                    failures.append(f"{where}: `{marker[1]}` printed\n{got}\ninstead of\n{body}")
                ran += 1
    return ran


def main():
    attnlab, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    pages = [os.path.join(source, "README.md")] + sorted(
        os.path.join(source, "docs", f) for f in os.listdir(os.path.join(source, "docs")) if f.endswith(".md"))
    failures = []
    ran = sum(check_page(p, attnlab, failures) for p in pages)
    for f in failures:
        print("FAIL: " + f)
    if ran < 3:
        print(f"FAIL: only {ran} output blocks ran")
        return 1
    print(f"{ran} output blocks ran and printed what they show; {len(pages)} pages read")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
