#!/usr/bin/env python3
"""Fails when a function of lib/ or app/ is longer than the limit (80 lines).

The code keeps the style of the project: a function's body opens with '{' alone at column 0
and closes with '}' at column 0, so a body is the span between the two. Lambdas and nested
blocks count towards the function that holds them.
Usage: function_length.py LIMIT ROOT
"""
import pathlib
import sys


def long_functions(path, limit):
    lines = path.read_text().split("\n")
    start = None
    for i, line in enumerate(lines):
        if line == "{" and start is None:
            start = i
        elif start is not None and line.startswith("}") and not line.startswith("}  // namespace"):
            length = i - start + 2  # the signature line and both braces
            if length > limit:
                yield f"{path}:{start}: {length} lines: {lines[start - 1].strip()}"
            start = None


def main():
    limit, root = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    files = sorted(p for d in ("lib", "app") for p in (root / d).rglob("*") if p.suffix in (".cpp", ".hpp"))
    found = [f for p in files for f in long_functions(p, limit)]
    for f in found:
        print(f)
    print(f"{len(files)} files read, {len(found)} functions over {limit} lines")
    return 1 if found or not files else 0


if __name__ == "__main__":
    sys.exit(main())
