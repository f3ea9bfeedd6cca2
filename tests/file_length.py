#!/usr/bin/env python3
"""No source file under DIR/lib is longer than LIMIT lines: a file that grows past it holds
more than one job and is split. Usage: file_length.py LIMIT DIR"""
import os
import sys

limit, root = int(sys.argv[1]), sys.argv[2]
long_files, read = [], 0
for folder, _, names in os.walk(os.path.join(root, "lib")):
    for name in sorted(names):
        if name.endswith((".cpp", ".hpp", ".in")):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                lines = sum(1 for _ in f)
            read += 1
            if lines > limit:
                long_files.append((lines, os.path.relpath(path, root)))
for lines, path in sorted(long_files, reverse=True):
    print(f"{path}: {lines} lines (limit {limit})")
print(f"{read} files read, {len(long_files)} over {limit} lines")
sys.exit(1 if long_files or read == 0 else 0)
