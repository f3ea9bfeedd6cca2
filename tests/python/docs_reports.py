#!/usr/bin/env python3
"""docs/ holds the tour's report in both languages, as docs/reports.sh makes them: runs the
script into a scratch folder and holds each page to the committed one. Figures are compared
to their structure only (a number's last digits and a cell's colour may differ between
machines with other vector units); every word, command, check and picture must be the same.
Usage: docs_reports.py ATTNLAB
"""
import os
import re
import subprocess
import sys
import tempfile

attnlab = os.path.abspath(sys.argv[1])
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")
COLOUR = re.compile(r"#[0-9a-f]{6}")
POINTS = re.compile(r'points="[^"]*"')  # a curve's coordinates follow its data


def shape_of(text):
    return COLOUR.sub("#c", NUMBER.sub("N", POINTS.sub('points="P"', text))).splitlines()


with tempfile.TemporaryDirectory() as tmp:
    r = subprocess.run([os.path.join(root, "docs", "reports.sh"), attnlab, tmp], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: docs/reports.sh: exit {r.returncode}: {r.stderr}")
    for lang in ("en", "zh"):
        name = f"tour.{lang}.html"
        with open(os.path.join(root, "docs", name), encoding="utf-8") as f:
            committed = shape_of(f.read())
        with open(os.path.join(tmp, name), encoding="utf-8") as f:
            fresh = shape_of(f.read())
        for i, (a, b) in enumerate(zip(committed, fresh)):
            if a != b:
                sys.exit(f"FAIL: docs/{name} is out of date at line {i + 1} (run docs/reports.sh):\n  committed: {a[:200]}\n  now:       {b[:200]}")
        if len(committed) != len(fresh):
            sys.exit(f"FAIL: docs/{name} is out of date: {len(committed)} lines, now {len(fresh)} (run docs/reports.sh)")
        print(f"ok: docs/{name} is up to date ({len(fresh)} lines)")
