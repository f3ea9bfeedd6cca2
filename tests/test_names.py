#!/usr/bin/env python3
"""Fails when a doctest TEST_CASE name holds ';': CMake splits ctest names there, and the
pieces run no case (the test main's guard then fails them at run time; this says why sooner).
Usage: test_names.py TESTS_DIR
"""
import pathlib
import re
import sys

bad = []
files = sorted(pathlib.Path(sys.argv[1]).glob("*.cpp"))
for path in files:
    for n, line in enumerate(path.read_text().split("\n"), 1):
        m = re.search(r'TEST_CASE\("((?:[^"\\]|\\.)*)"', line)
        if m and ";" in m.group(1):
            bad.append(f"{path}:{n}: {m.group(1)}")
print("\n".join(bad))
print(f"{len(files)} files read, {len(bad)} test names with ';'")
sys.exit(1 if bad or not files else 0)
