#!/usr/bin/env python3
"""Writes what the program prints under each `$ attnlab ...` line of every ```console block
of README.md and docs/*.md, in place: the output tests/cli_readme.cpp holds them to.

    docs/examples.py [ATTNLAB]   (default: build/release/attnlab; run from anywhere)

A command's output is its stdout, then its stderr; a `$ echo $?` line and the status after
it are kept. Arguments split on spaces, '...' quoting one that holds spaces (as the test)."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def split_args(s):
    out, cur, quoted, any_ = [], "", False, False
    for c in s:
        if c == "'":
            quoted, any_ = not quoted, True
        elif c == " " and not quoted:
            if any_:
                out.append(cur)
            cur, any_ = "", False
        else:
            cur, any_ = cur + c, True
    if any_:
        out.append(cur)
    return out


def run(exe, line):
    args = split_args(line[len("$ attnlab "):])
    r = subprocess.run([exe] + args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    return (r.stdout + r.stderr).splitlines()


def rewrite(path, exe):
    lines, out, i, in_console = path.read_text().split("\n"), [], 0, False
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if not in_console:
            in_console = line == "```console"
            continue
        if line == "```":
            in_console = False
        elif line == "$ echo $?":
            out.append(lines[i])
            i += 1
        elif line.startswith("$ attnlab"):
            out.extend(run(exe, line))
            while i < len(lines) and lines[i] != "```" and not lines[i].startswith("$ "):
                i += 1
    path.write_text("\n".join(out))


def main():
    exe = str(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build/release/attnlab").resolve())
    for path in [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")):
        rewrite(path, exe)


if __name__ == "__main__":
    main()
