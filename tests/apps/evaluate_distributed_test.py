#!/usr/bin/env python3
"""`attn evaluate` as several data-parallel workers, end to end, on the tiny run's models: with
`--nproc N` and under torchrun (--no_python) the workers share the CSV's rows and rank 0 writes one
predictions file and one metrics JSON, byte for byte those one process writes, and prints the same
report; a bad input fails the command with the error one process gives, and writes nothing.

usage: evaluate_distributed_test.py ATTN TINY_RUN_DIR WORK_DIR   (exit 77: torchrun missing, its part skipped)
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402

ATTN, DIR, WORK = sys.argv[1:4]
TORCHRUN = shutil.which("torchrun")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

# (model, CSV, extra flags): each task, seq2seq with beam search, the hierarchical model's documents.
CASES = {
    "text": ("run", "toxic.csv", []),
    "features": ("features", "features.csv", []),
    "dates": ("dates", "dates.csv", ["--source-column", "human", "--target-column", "machine", "--beam", "2"]),
    "hierarchical": ("hierarchical", "documents_heldout.csv", []),
}


def evaluate(name, tag, launch=(), workers=()):
    """Runs attn evaluate on a case; returns (exit code, stdout, stderr, predictions bytes, metrics bytes)."""
    model, csv, extra = CASES[name]
    out = os.path.join(WORK, f"{name}-{tag}")
    command = [*launch, ATTN, "evaluate", "--model", os.path.join(DIR, model), "--csv", os.path.join(DIR, csv), *extra,
               "--predictions", out + ".csv", "--metrics", out + ".json", "--batch-size", "100", "--threads", "1", *workers]
    p = subprocess.run(command, capture_output=True, text=True, timeout=600)
    read = lambda path: open(path, "rb").read() if os.path.exists(path) else None  # noqa: E731
    return p.returncode, p.stdout, p.stderr, read(out + ".csv"), read(out + ".json")


alone = {}
for name in CASES:
    alone[name] = evaluate(name, "alone")
    check(alone[name][0] == 0 and alone[name][3] and alone[name][4], f"{name}: one process scores the CSV: {alone[name][2]}")

for name in CASES:
    got = evaluate(name, "nproc2", workers=["--nproc", "2"])
    check(got[0] == 0, f"{name}: --nproc 2 exits 0: {got[2][-1500:]}")
    check(got[3] == alone[name][3], f"{name}: --nproc 2 writes the predictions one process writes, byte for byte")
    check(got[4] == alone[name][4], f"{name}: --nproc 2 writes the metrics one process writes, byte for byte")
    check(got[1] == alone[name][1], f"{name}: only rank 0 prints, the report one process prints")

got = evaluate("text", "nproc3", workers=["--nproc", "3"])
check(got[0] == 0 and got[3] == alone["text"][3] and got[4] == alone["text"][4], "text: three workers write the same files")

# A bad input: the workers fail as one process does (the first failure stops the others); no file
# is written.
model, csv, _ = CASES["text"]
bad = os.path.join(WORK, "bad")
p = subprocess.run([ATTN, "evaluate", "--model", os.path.join(DIR, model), "--csv", os.path.join(DIR, csv), "--text-column", "nope",
                    "--predictions", bad + ".csv", "--nproc", "2"], capture_output=True, text=True, timeout=300)
check(p.returncode != 0, f"a missing column fails the workers (exit {p.returncode})")
check("attn evaluate: error:" in p.stderr and "no column 'nope'" in p.stderr, f"the error names the column: {p.stderr[-800:]}")
check(not os.path.exists(bad + ".csv"), "nothing written after a failure")

if not TORCHRUN:
    print("torchrun missing: its checks skipped", file=sys.stderr)
    finish(skipped=True)

# torchrun's workers (--no_python): the same files.
launch = [TORCHRUN, "--standalone", "--nproc_per_node", "2", "--redirects", "1", "--tee", "1", "--log_dir",
          os.path.join(WORK, "torchrun-logs"), "--monitor_interval", "0.2", "--no_python"]
for name in ("text", "dates"):
    got = evaluate(name, "torchrun", launch=launch)
    check(got[0] == 0, f"{name}: torchrun exits 0: {got[1][-1500:]} {got[2][-1500:]}")
    check(got[3] == alone[name][3] and got[4] == alone[name][4], f"{name}: torchrun's workers write the files one process writes")

finish()
