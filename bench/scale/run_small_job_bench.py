#!/usr/bin/env python3
"""A small data-parallel job, end to end (start-up, data, every epoch, validation, the files): 3,000
e-mail-like documents (attn datagen documents), bilstm-attention, batch 64, 3 epochs, 1 thread per
worker, as one process, as `attn train --nproc 2`, and as torchrun's two workers (`torchrun
--standalone --nproc_per_node 2 --no_python attn train`, with its default --monitor_interval of 5 s
and with 0.1 s). Wall seconds of the whole command, in
alternating rounds (the machine's load drifts), the median of each; and each run's epoch seconds.

usage: /usr/bin/python3 bench/scale/run_small_job_bench.py [--rounds 3] [--out bench/scale/results/small_job.json]
Needs a built tree (bash scripts/setup.sh). Target: 2 workers >= 1.4x one process.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, arguments, attn, epochs, workdir, write_result  # noqa: E402


def main():
    args = arguments(__file__, "small_job.json", rows=3000, rounds=3).parse_args()
    work = workdir("small-job")
    corpus = os.path.join(work, "documents.csv")
    attn("datagen", "documents", "--rows", str(args.rows), "--seed", "7", "--out", corpus)
    train = ["train", "--csv", corpus, "--epochs", "3", "--batch-size", "64", "--threads", "1"]
    torchrun = shutil.which("torchrun")
    ways = {
        "one_process": lambda out: [ATTN, *train, "--out", out],
        "nproc_2": lambda out: [ATTN, *train, "--out", out, "--nproc", "2"],
    }
    if torchrun:
        # (torchrun 1.13 on bookworm starts no worker without --redirects/--tee/--log_dir: platform notes)
        # torchrun's agent looks at its workers every --monitor_interval seconds (default 5): a job
        # this short waits most of that after it ends; 0.1 shows the rest of torchrun's cost.
        for name, interval in (("torchrun_2", []), ("torchrun_2_monitor_interval_0.1", ["--monitor_interval", "0.1"])):
            ways[name] = lambda out, interval=interval: [torchrun, "--standalone", "--nproc_per_node", "2", *interval, "--redirects", "1",
                                                         "--tee", "1", "--log_dir", out + "-logs", "--no_python", ATTN, *train, "--out", out]
    seconds = {name: [] for name in ways}
    epoch_seconds = {}
    for r in range(args.rounds):
        for name, command in ways.items():
            out = os.path.join(work, f"{name}-{r}")
            print(f"+ round {r + 1}: {name}", file=sys.stderr)
            t0 = time.perf_counter()
            subprocess.run(command(out), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=dict(os.environ, OMP_NUM_THREADS="1"))
            seconds[name].append(round(time.perf_counter() - t0, 3))
            epoch_seconds[name] = [round(e["seconds"], 3) for e in epochs(out)]
    median = {name: statistics.median(s) for name, s in seconds.items()}
    result = {
        "corpus": {"rows": args.rows, "generator": "attn datagen documents --seed 7"},
        "command": "attn " + " ".join(train[:1] + ["--csv", "documents.csv"] + train[3:]),
        "rounds": args.rounds,
        "seconds": seconds,
        "median_seconds": median,
        "epoch_training_seconds_last_round": epoch_seconds,
        "speedup_nproc_2": round(median["one_process"] / median["nproc_2"], 3),
        "target_speedup": 1.4,
    }
    for name in median:
        if name.startswith("torchrun"):
            result["speedup_" + name] = round(median["one_process"] / median[name], 3)
    write_result(args.out, result)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
