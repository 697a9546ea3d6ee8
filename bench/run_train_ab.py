#!/usr/bin/env python3
"""Training and scoring A/B: one epoch of bilstm-attention (seed sizes, batch 512) on a Jigsaw-profile
corpus, then `attn evaluate` of 20,000 other comments with the trained model, each run alternately by a
baseline build and this tree's, in one session (hosts and runs differ by ±20%, so only a same-run
comparison counts). Records per run the epoch time, wall, user and system CPU and peak RSS, and checks
that both builds give the same metrics.

usage: python3 bench/run_train_ab.py --baseline DIR [--rows 32000] [--repeats 3] [--threads 2]
       [--out bench/results/train_ab.json]
DIR holds a baseline build's binaries, e.g. from `git worktree add /tmp/base-src COMMIT` built with
scripts/setup.sh, or a copy of build/bin taken before a change.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from benchlib import BIN, RESULTS, last_epoch, workdir, write_result


def timed_process(argv):
    """(wall, user, system seconds, peak RSS MB) of one process, its stdout discarded."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"{argv[0]} failed ({status})")
    return {"wall_seconds": round(time.perf_counter() - t0, 2), "user_seconds": round(usage.ru_utime, 2),
            "system_seconds": round(usage.ru_stime, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def one_epoch(binary, corpus, out, threads):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(binary, [binary, "--csv", corpus, "--model", "bilstm-attention", "--epochs", "1",
                          "--batch-size", "512", "--threads", str(threads), "--out", out])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"{binary} failed ({status})")
    m = last_epoch(out)
    return {"epoch_seconds": m["seconds"], "wall_seconds": round(wall, 2),
            "user_seconds": round(usage.ru_utime, 2), "system_seconds": round(usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024)}, {k: v for k, v in m.items() if k not in ("seconds", "rows_per_second")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True, help="directory with the baseline build's attn-train")
    ap.add_argument("--rows", type=int, default=32000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(RESULTS, "train_ab.json"))
    args = ap.parse_args()
    work = workdir("train-ab")
    corpus = os.path.join(work, "corpus.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, str(args.rows), "2018"], check=True)
    scored = os.path.join(work, "score.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), scored, "20000", "7"], check=True)
    builds = {"baseline": args.baseline, "current": BIN}
    runs = {name: [] for name in builds}
    scoring = {name: [] for name in builds}
    metrics, scored_metrics = {}, {}
    for i in range(args.repeats):
        for name, bin_dir in builds.items():
            print(f"repeat {i + 1}/{args.repeats}: {name} ...", file=sys.stderr)
            run = os.path.join(work, f"{name}-{i}")
            figures, m = one_epoch(os.path.join(bin_dir, "attn-train"), corpus, run, args.threads)
            runs[name].append(figures)
            metrics[name] = m
            out = os.path.join(work, f"{name}-{i}-metrics.json")
            scoring[name].append(timed_process([os.path.join(bin_dir, "attn-evaluate"), "--model", os.path.join(work, f"baseline-{i}"),
                                                "--csv", scored, "--threads", str(args.threads), "--metrics", out]))
            with open(out) as f:
                scored_metrics[name] = json.load(f)
    median = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    scoring_median = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in scoring.items()}
    result = {
        "benchmark": "one epoch of bilstm-attention (embed 128, BiLSTM 2x60, batch 512), baseline build vs current, alternating",
        "corpus": {"rows": args.rows, "generator": "bench/gen_jigsaw_profile 2018"},
        "threads": args.threads,
        "runs": runs,
        "median": median,
        "epoch_speedup": round(median["baseline"]["epoch_seconds"] / median["current"]["epoch_seconds"], 3),
        "same_metrics": metrics["baseline"] == metrics["current"],
        "evaluate": {"what": "attn evaluate of 20,000 Jigsaw-profile comments (gen_jigsaw_profile 7) with the baseline's model, whole process",
                     "runs": scoring, "median": scoring_median,
                     "speedup": round(scoring_median["baseline"]["wall_seconds"] / scoring_median["current"]["wall_seconds"], 3),
                     "same_metrics": scored_metrics["baseline"] == scored_metrics["current"]},
    }
    write_result(args.out, result)


if __name__ == "__main__":
    main()
