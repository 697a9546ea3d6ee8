#!/usr/bin/env python3
"""Sharded scoring: `attn evaluate` of a large CSV of comments (whole process: model load, CSV,
tokenising, scoring, files) by one process and by `--nproc 2` workers (and torchrun's), 1 thread
each, alternated; the workers' predictions and metrics files are checked byte for byte against the
one process's. One process on 2 threads is the other way to use both cores.

The CSV is data/toxic_sample.csv's comments repeated to --rows, scored with runs/toxic, the model
scripts/main.sh trains on them (their words are its vocabulary).

usage: python3 bench/scale/run_sharded_evaluate_bench.py [--rows 50000] [--runs 3] [--out bench/scale/results/sharded_evaluate.json]
"""
import csv
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, ROOT, arguments, median_of, workdir, write_result  # noqa: E402


def main():
    args = arguments(__file__, "sharded_evaluate.json", rows=50000, runs=3).parse_args()
    work = workdir("sharded-evaluate")
    run = os.path.join(ROOT, "runs", "toxic")
    if not os.path.exists(os.path.join(run, "model.pt")):
        sys.exit("no runs/toxic/model.pt: run bash scripts/main.sh first")
    scored = os.path.join(work, "score.csv")
    with open(os.path.join(ROOT, "data", "toxic_sample.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    with open(scored, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(rows[0])
        for i in range(args.rows):
            w.writerow(rows[1 + i % (len(rows) - 1)])
    torchrun = shutil.which("torchrun")
    setups = {
        "one_process_1_thread": ([], ["--threads", "1"]),
        "one_process_2_threads": ([], ["--threads", "2"]),
        "nproc_2_x_1_thread": ([], ["--threads", "1", "--nproc", "2"]),
    }
    if torchrun:
        setups["torchrun_2_x_1_thread"] = ([torchrun, "--standalone", "--nproc_per_node", "2", "--redirects", "1", "--tee", "1",
                                            "--log_dir", os.path.join(work, "logs"), "--monitor_interval", "0.1", "--no_python"],
                                           ["--threads", "1"])
    times = {name: [] for name in setups}
    files = {}
    for i in range(args.runs):
        for name, (launch, flags) in setups.items():
            out = os.path.join(work, name)
            t0 = time.perf_counter()
            subprocess.run([*launch, ATTN, "evaluate", "--model", run, "--csv", scored, "--predictions", out + ".csv",
                            "--metrics", out + ".json", *flags], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - t0)
            files[name] = (open(out + ".csv", "rb").read(), open(out + ".json", "rb").read())
        print(f"round {i + 1}/{args.runs}: " + ", ".join(f"{n} {t[-1]:.2f} s" for n, t in times.items()), file=sys.stderr)
    base = median_of(times["one_process_1_thread"])
    result = {
        "benchmark": f"attn evaluate of {args.rows} comments (data/toxic_sample.csv's, repeated) with runs/toxic, whole command",
        "command": "attn evaluate --model runs/toxic --csv CSV --predictions OUT.csv --metrics OUT.json --threads T [--nproc 2]",
        "setups": {name: {"runs": [round(x, 3) for x in t], "median_seconds": round(median_of(t), 3),
                          "speedup_over_one_process_1_thread": round(base / median_of(t), 2),
                          "same_files_as_one_process": files[name] == files["one_process_1_thread"]}
                   for name, t in times.items()},
    }
    write_result(args.out, result, show=("setups",))


if __name__ == "__main__":
    main()
