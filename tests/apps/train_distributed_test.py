#!/usr/bin/env python3
"""`attn train` as several data-parallel workers, end to end: `attn train --nproc 2` and torchrun
(--no_python) give the same run, only rank 0 writes and prints, runs are deterministic for a given
(seed, world size), a killed worker makes the others fail with a clear error instead of hanging,
torchrun's --max_restarts continues from the checkpoint and ends as the unfaulted run, and --resume
takes another world size.

usage: train_distributed_test.py ATTN WORK_DIR      (exit 77: torchrun missing, skipped in part)
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402

ATTN, WORK = sys.argv[1:3]
TORCHRUN = shutil.which("torchrun")


def run(*args, timeout=300):
    p = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def metrics(d):
    """metrics.jsonl without the clock's fields."""
    out = []
    with open(os.path.join(d, "metrics.jsonl")) as f:
        for line in f:
            m = json.loads(line)
            m.pop("seconds"), m.pop("rows_per_second")
            out.append(m)
    return out


def torchrun(log_dir, *extra):
    # bookworm's torchrun (torch 1.13, Python 3.11) needs --redirects/--tee/--log_dir to start workers.
    return [TORCHRUN, "--standalone", "--nproc_per_node", "2", "--redirects", "1", "--tee", "1", "--log_dir", log_dir, *extra,
            "--no_python", ATTN]


def workers_of(out_dir):
    """pid -> RANK of the attn train processes writing out_dir: torchrun's workers carry RANK in their
    environment; attn train --nproc's are named attn-worker-RANK (forked, they share the launcher's)."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            if not comm.startswith("attn") or out_dir.encode() not in cmd:
                continue
            if comm.startswith("attn-worker-"):
                found[int(pid)] = int(comm[len("attn-worker-"):])
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
            if b"RANK" in env:
                found[int(pid)] = int(env[b"RANK"])
        except OSError:
            continue
    return found


def kill_rank_after_first_epoch(proc, out_dir, rank):
    """Reads the run's output as it is printed until its first epoch's line (the checkpoint is written
    before it), then SIGKILLs worker `rank`. Returns (killed, the output read so far); not killed if the
    run ended first."""
    head = []
    for line in proc.stdout:
        head.append(line)
        if "epoch 1/" in line:
            for pid, r in workers_of(out_dir).items():
                if r == rank:
                    os.kill(pid, signal.SIGKILL)
                    return True, "".join(head)
    return False, "".join(head)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
csv = os.path.join(WORK, "toxic.csv")
code, out = run(ATTN, "datagen", "toxic", "--rows", "4000", "--seed", "4", "--out", csv)
assert code == 0, out
small = ["--set", "embed_dim=8", "--set", "lstm_units=4", "--batch-size", "32", "--seed", "2"]
train = [ATTN, "train", "--csv", csv, "--epochs", "3", *small, "--out"]
# A run a worker is killed in: 30 epochs of a smaller file (1,500 rows: a tenth of a second or more an
# epoch), so the kill after the first lands with most of the run to go.
faulted_csv = os.path.join(WORK, "toxic-1500.csv")
code, out = run(ATTN, "datagen", "toxic", "--rows", "1500", "--seed", "4", "--out", faulted_csv)
assert code == 0, out
faulted = [ATTN, "train", "--csv", faulted_csv, "--epochs", "30", *small, "--out"]

# --nproc 2: a complete run, written and printed once (by rank 0).
d1 = os.path.join(WORK, "nproc")
code, out = run(*train, d1, "--nproc", "2")
check(code == 0, f"--nproc 2 exits 0 (got {code}): {out[-2000:]}")
check(out.count("epoch 3/3") == 1, "the epoch lines are printed once, by rank 0")
check("[rank 1] training bilstm-attention" in out and "[rank 1] done:" in out, "the other worker's lines start with its rank")
check(all(os.path.exists(os.path.join(d1, f)) for f in ("config.json", "model.pt", "checkpoint.pt", "metrics.jsonl")),
      "rank 0 wrote the run directory")
check(len(metrics(d1)) == 3 and metrics(d1)[-1]["train_rows"] == 3200, "every training row once per epoch, across the workers")

# Deterministic for a given seed and world size (dropout on: each worker draws its own masks).
d2 = os.path.join(WORK, "nproc-again")
code, out = run(*train, d2, "--nproc", "2")
check(code == 0 and metrics(d2) == metrics(d1), "two runs with the same seed and world size give the same metrics")

# The model explains like any other.
code, out = run(ATTN, "explain", "--model", d1, "you are an idiot")
check(code == 0 and "idiot" in out, f"the workers' model.pt explains: {out[-500:]}")

# A killed worker: the others fail with a clear error, and do not hang.
d3 = os.path.join(WORK, "killed")
t0 = time.time()
proc = subprocess.Popen([*faulted, d3, "--nproc", "2", "--worker-timeout", "60"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
killed, head = kill_rank_after_first_epoch(proc, d3, 1)
check(killed, "worker 1 was killed while the run was going on")
try:  # (--worker-timeout 60 and the launcher's 30 s of grace bound it; 300 s: a hang, not a slow machine)
    out = head + proc.communicate(timeout=300)[0]
except subprocess.TimeoutExpired:
    proc.kill()
    out = head + proc.communicate()[0]
    check(False, "the launcher hung after a worker was killed")
check(proc.returncode not in (0, None), f"a killed worker fails the run (exit {proc.returncode})")
check("worker 0 of 2" in out and "failed" in out, f"rank 0 says the group broke: {out[-1500:]}")
print(f"killed worker: the launcher ended {time.time() - t0:.1f} s after starting", file=sys.stderr)

# --resume with another world size (2 workers, then 1 process).
code, out = run(ATTN, "train", "--resume", d1, "--epochs", "4")
check(code == 0 and len(metrics(d1)) == 4, f"--resume of a 2-worker run in one process: {out[-800:]}")

if not TORCHRUN:
    print("torchrun missing: its checks skipped")
    finish(skipped=True)

# torchrun --no_python: the same run as --nproc 2.
d4 = os.path.join(WORK, "torchrun")
code, out = run(*torchrun(os.path.join(WORK, "logs1")), *train[1:], d4)
check(code == 0, f"torchrun exits 0 (got {code}): {out[-2000:]}")
check(os.path.exists(os.path.join(d4, "metrics.jsonl")) and metrics(d4) == metrics(d2),
      "torchrun's workers give the run --nproc 2 gives")

# torchrun --max_restarts 1: a worker killed after the first of 30 epochs; the restarted group resumes
# from the checkpoint with the same command line and ends as the unfaulted run (30 epochs, --nproc 2:
# the run torchrun's workers give, as above).
d6 = os.path.join(WORK, "unfaulted")
code, out = run(*faulted, d6, "--nproc", "2", timeout=600)
check(code == 0, f"the unfaulted 30-epoch run exits 0 (got {code}): {out[-2000:]}")
d5 = os.path.join(WORK, "restarted")
proc = subprocess.Popen([*torchrun(os.path.join(WORK, "logs2"), "--max_restarts", "1"), *faulted[1:], d5],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
killed, head = kill_rank_after_first_epoch(proc, d5, 1)
check(killed, "a torchrun worker was killed while the run was going on")
try:
    out = head + proc.communicate(timeout=600)[0]
except subprocess.TimeoutExpired:
    proc.kill()
    out = head + proc.communicate()[0]
check(proc.returncode == 0, f"the restarted group finishes (exit {proc.returncode}): {out[-2500:]}")
check(os.path.exists(os.path.join(d5, "metrics.jsonl")) and os.path.exists(os.path.join(d6, "metrics.jsonl"))
      and len(metrics(d5)) == 30 and metrics(d5) == metrics(d6), "the restarted run ends as the unfaulted one")

finish()
