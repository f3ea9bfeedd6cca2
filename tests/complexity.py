#!/usr/bin/env python3
"""Fails when a function of app/ has a cyclomatic complexity above the limit (15), as pmccabe
counts it (its modified McCabe figure: a switch counts once).

The app is option plumbing: parse a request, read its files, run, emit, return the status. A
function that branches more than that does two of those at once.
pmccabe (Debian's package) does not parse C++17's nested namespace definitions, so each file is
handed to it with `namespace a::b {` opened as two namespaces, and closed as two.
Usage: complexity.py LIMIT ROOT
"""
import pathlib
import re
import subprocess
import sys
import tempfile


def figures(path):
    """(complexity, line, function) for each function pmccabe finds in path."""
    text = path.read_text()
    text = re.sub(r"^namespace (\w+)::(\w+) \{", r"namespace \1 { namespace \2 {", text, flags=re.M)
    text = re.sub(r"^\}  // namespace \w+::\w+$", "}}", text, flags=re.M)
    with tempfile.NamedTemporaryFile("w", suffix=".cpp") as f:
        f.write(text)
        f.flush()
        out = subprocess.run(["pmccabe", f.name], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split("\t")
        m = re.match(r".*\((\d+)\): (.*)", fields[-1])
        yield int(fields[0]), int(m.group(1)), m.group(2)


def main():
    limit, root = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    files = sorted((root / "app").glob("*.cpp"))
    counted = [(p, f) for p in files for f in figures(p)]
    if not counted:
        sys.exit(f"complexity.py: pmccabe found no function under {root / 'app'}")
    over = [(p, f) for p, f in counted if f[0] > limit]
    for p, (c, line, name) in over:
        print(f"{p}:{line}: {name}: complexity {c} (limit {limit})")
    print(f"{len(files)} files, {len(counted)} functions read, {len(over)} over complexity {limit}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
