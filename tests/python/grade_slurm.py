#!/usr/bin/env python3
"""A class graded on a real single-node Slurm cluster: an array of four tasks, then the merge.

Usage: grade_slurm.py ATTNLAB

Starts munged, slurmctld and slurmd from Debian's packages (slurm-wlm, munge) with a munge key
and a slurm.conf written into a temporary folder (their own socket, ports, spool, state and
logs: nothing of the machine's configuration is read or changed), waits for the node, submits
`sbatch --array=0-3 --wait` grading the class of 40 of grade_shards.py with `--shard auto`,
merges the parts and compares every format with the one-machine gradebook, timings aside.
The daemons are stopped by their pids at the end, whatever happened. Where Slurm cannot start
(not root, or the packages missing), it says why and exits 77 (skipped); grade_shards.py runs
the same four shards as plain processes with Slurm's variables, so the shard logic is tested
everywhere.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grade_shards import COMMON, EXERCISE, SHARDS, fail, files, make_class  # noqa: E402

DAEMONS = ("munged", "slurmctld", "slurmd")


def skip(why):
    print(f"skipped: {why}; grade_shards.py runs the same shards as plain processes")
    sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(home):
    host = socket.gethostname().split(".")[0]
    ports = (free_port(), free_port())
    for d in ("state", "spool", "munge"):
        os.makedirs(os.path.join(home, d), mode=0o700)
    key = os.path.join(home, "munge", "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o400)
    conf = os.path.join(home, "slurm.conf")
    open(conf, "w").write(f"""ClusterName=attnlab-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ports[0]}
SlurmdPort={ports[1]}
AuthType=auth/munge
AuthInfo=socket={home}/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation={home}/state
SlurmdSpoolDir={home}/spool
SlurmctldPidFile={home}/slurmctld.pid
SlurmdPidFile={home}/slurmd.pid
SlurmctldLogFile={home}/slurmctld.log
SlurmdLogFile={home}/slurmd.log
PlugStackConfig={home}/plugstack.conf
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
    open(os.path.join(home, "plugstack.conf"), "w").write("")
    return conf


def start(home, env):
    munge = os.path.join(home, "munge")
    steps = [["munged", "--force", f"--socket={munge}/munge.socket", f"--key-file={munge}/munge.key", f"--pid-file={home}/munged.pid",
              f"--log-file={home}/munged.log", f"--seed-file={munge}/munged.seed"],
             ["slurmctld", "-i"], ["slurmd"]]
    for args in steps:
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} did not start: {done.stderr.strip()}; its log: {log_tail(home, args[0])}")
    deadline = time.time() + 90
    while time.time() < deadline:
        state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True, timeout=30).stdout.split()
        if state and all(s in ("idle", "mix", "alloc") for s in state):
            return
        time.sleep(0.5)
    raise RuntimeError(f"the node did not come up within 90 s (sinfo: {state}); slurmd's log: {log_tail(home, 'slurmd')}")


def log_tail(home, daemon):
    path = os.path.join(home, f"{daemon}.log")
    return open(path, errors="replace").read()[-600:] if os.path.exists(path) else "(none)"


def stop(home):
    """Each daemon by the pid it wrote, then waits for it to go."""
    for daemon in reversed(DAEMONS):
        path = os.path.join(home, f"{daemon}.pid")
        try:
            pid = int(open(path).read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        for _ in range(100):
            if not os.path.exists(f"/proc/{pid}"):
                break
            time.sleep(0.1)
        else:
            os.kill(pid, signal.SIGKILL)


def main():
    attnlab = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        skip("a single-node Slurm needs root to start slurmd, and the tests do not run as root")
    missing = [d for d in DAEMONS + ("sbatch", "sinfo") if shutil.which(d) is None]
    if missing:
        skip(f"{', '.join(missing)} not installed (Debian: slurm-wlm, munge; setup.sh installs them)")
    with tempfile.TemporaryDirectory(prefix="attnlab-slurm-", dir="/tmp") as home:
        os.chmod(home, 0o755)
        env = dict(os.environ, SLURM_CONF=write_config(home))
        try:
            start(home, env)
            grade(attnlab, home, env)
        except RuntimeError as e:
            fail(str(e))
        finally:
            stop(home)
    print(f"ok: 40 submissions graded by a Slurm array of {SHARDS} tasks on a real single-node cluster merge into the one-machine gradebook")


def grade(attnlab, home, env):
    subs = make_class(attnlab, home)
    one = os.path.join(home, "one")
    done = subprocess.run([attnlab, "exercise", "grade", EXERCISE, *subs, *COMMON, "--out", one], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        fail(f"the one-machine grading: {done.stderr}")
    parts = os.path.join(home, "parts")
    quoted = " ".join(f"'{s}'" for s in subs) + " " + " ".join(f"'{a}'" for a in COMMON)
    script = os.path.join(home, "grade.sbatch")
    open(script, "w").write(f"#!/bin/sh\nexec '{attnlab}' exercise grade {EXERCISE} {quoted} --shard auto --out '{parts}'\n")
    done = subprocess.run(["sbatch", f"--array=0-{SHARDS - 1}", "--wait", "--chdir", home, "--output", f"{home}/task-%a.out", script],
                          env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        outs = [open(os.path.join(home, n)).read()[-300:] for n in sorted(os.listdir(home)) if n.startswith("task-")]
        raise RuntimeError(f"sbatch exited {done.returncode}: {done.stderr.strip()}; the tasks said {outs}; slurmd: {log_tail(home, 'slurmd')}")
    merged = os.path.join(home, "merged")
    part_files = sorted(os.path.join(parts, n) for n in os.listdir(parts))
    if len(part_files) != SHARDS:
        fail(f"the array wrote {part_files}")
    done = subprocess.run([attnlab, "exercise", "merge", *part_files, "--out", merged], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        fail(f"merge: {done.stderr}")
    want, got = files(one), files(merged)
    if sorted(want) != sorted(got) or any(want[n] != got[n] for n in want):
        fail("the merged gradebook differs from the one-machine one: " + ", ".join(n for n in want if want[n] != got.get(n)))


if __name__ == "__main__":
    main()
