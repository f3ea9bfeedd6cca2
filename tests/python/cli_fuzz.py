#!/usr/bin/env python3
"""Random command lines from every subcommand's options and hostile values: each run must
exit 0, 1 or 2, never hang (20 s each), and keep the contract: exit 2 is one stderr line and
an empty stdout, exit 1 names the failed checks, nothing prints "internal error".
Usage: cli_fuzz.py ATTNLAB [SEED] [RUNS]
"""
import os
import random
import re
import subprocess
import sys

A = sys.argv[1]
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
vals = ["0", "1", "2", "3", "-1", "7", "16", "1e9", "nan", "inf", "-inf", "abc", "", "0.5", "4294967296", "2,1,0", "3,0", "1,1"]

def registered_options():
    """Every registered option from the manual's options table (docs/experiments.md; a unit test holds the table to
    the option rows): {command: [flags]}, the choices of each enum option, and the flags."""
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "experiments.md")
    text = open(readme, encoding="utf-8").read()
    table = text[text.index("<!-- options:begin -->"):text.index("<!-- options:end -->")]
    opts, enums, flags = {}, {}, set()
    for line in table.splitlines()[3:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        command, flag, takes = cells[0].strip("`"), cells[1].strip("`"), cells[2].replace("\\|", "|")
        opts.setdefault(command, []).append(flag)
        if takes == "flag":
            flags.add(flag)
        elif not takes.startswith(("whole", "number", "list", "text")):
            enums.setdefault(flag, set()).update(takes.split("|"))
    return opts, {k: sorted(v) for k, v in enums.items()}, flags


opts, enums, flags = registered_options()
assert len(opts) >= 7 and sum(map(len, opts.values())) >= 70, "the options table of docs/experiments.md is missing"
opts["tour"] = ["--section", "--lang"]
# the tour's sections, as its own error message lists them
sections = subprocess.run([A, "tour", "--section", "?"], capture_output=True, text=True).stderr.strip().split("sections: ")[1].split(", ")
assert len(sections) >= 6, sections
enums.update({"--section": sections, "--lang": ["en", "zh"]})
# bench's and train's sizes are fixed small (bench's defaults time a 4096-query run, train's
# train for 13 s); the rest is random.
prefix = {"bench": ["--len", "64", "--heads", "2"],
          "train": ["--steps", "3", "--d-model", "16", "--heads", "2", "--train-len", "4", "--batch", "4"]}
common = [["--dtype", "float64"], ["--dtype", "float16"], ["--dtype", "bfloat16"], ["--format", "json"], ["--format", "csv"], ["--quiet"], ["--tol", "0"], ["--lang", "zh"]]
bad = 0
codes = {}
for n in range(int(sys.argv[3]) if len(sys.argv) > 3 else 300):
    cmd = rng.choice(list(opts))
    args = [cmd] + prefix.get(cmd, [])
    # the whole tour and its section on length, which trains (seconds a run), are the same run
    # whatever is drawn here, and the tour's own tests run them; a line of tour runs one of the
    # other sections, or a hostile name
    if cmd == "tour":
        args += ["--section", rng.choice([s for s in sections if s != "length"] + vals)]
    for _ in range(rng.randint(0, 5)):
        o = rng.choice(opts[cmd])
        if o in flags: args.append(o)
        elif o in enums and rng.random() < 0.8: args += [o, rng.choice(enums[o])]
        else: args += [o, rng.choice(vals)]
    if rng.random() < 0.5: args += rng.choice(common)
    try:
        r = subprocess.run([A] + args, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        print("TIMEOUT", args); bad += 1; continue
    codes[r.returncode] = codes.get(r.returncode, 0) + 1
    one_line = r.returncode != 2 or (r.stdout == "" and r.stderr.count("\n") == 1)
    if r.returncode not in (0, 1, 2) or "internal error" in r.stderr or not one_line or (r.returncode == 1 and "failed checks" not in r.stderr):
        print(r.returncode, args, r.stderr[:300]); bad += 1
print(f"{sum(codes.values())} random command lines, {bad} broke the contract; exit codes {codes}")
sys.exit(1 if bad else 0)
