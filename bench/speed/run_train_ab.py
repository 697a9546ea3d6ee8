#!/usr/bin/env python3
"""Training and scoring A/B: one epoch of bilstm-attention (seed sizes, batch 512) on a Jigsaw-profile
corpus, then `attn evaluate` of 20,000 other comments with the trained model, each run alternately by a
baseline build and this tree's, in one session (hosts and runs differ by ±20%, so only a same-run
comparison counts). Records per run the epoch time, wall, user and system CPU, page faults and peak RSS, and checks
that both builds give the same metrics.

Also records the training step's useful work as a share of this host's sgemm peak: 0.63 MFLOP per
real token forward and backward (the seed model's products: the LSTM's input and recurrent
weights, the attention's Dense), over the epoch's training seconds.

usage: python3 bench/speed/run_train_ab.py (--baseline DIR | --baseline-commit COMMIT) [--rows 32000]
       [--repeats 3] [--threads 2] [--out bench/speed/results/train_ab.json]
DIR holds a baseline build's binaries (attn-train, attn-evaluate), e.g. a copy of build/bin taken
before a change; --baseline-commit builds them from that commit of this repository in a temporary
worktree (issue 13 measures against 749db53, the main of the day it was filed).
Targets: >= 1.5x the baseline's epoch; >= 40% of the sgemm peak.
"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import BIN, PYTHON, ROOT, arguments, last_epoch, measured, sgemm_peak_gflops, workdir, write_result  # noqa: E402

FLOP_PER_TOKEN = 0.63e6  # forward and backward, bilstm-attention at the seed's sizes


def build_baseline(commit, work):
    """bin/ of a Release build of `commit` (attn-train, attn-evaluate) in a temporary worktree."""
    src = os.path.join(work, "baseline-src")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", src, commit], check=True)
    build = os.path.join(src, "build")
    subprocess.run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DATTN_BUILD_TESTS=OFF",
                    "-DATTN_BUILD_BENCH=OFF"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build, "--target", "attn-train", "attn-evaluate"], check=True)
    return os.path.join(build, "bin"), src


def differences(a, b):
    """|a - b| of the numeric metrics both builds report (names changed between builds: see docs/commands.md's metric vocabulary)."""
    return {k: abs(a[k] - b[k]) for k in sorted(set(a) & set(b)) if isinstance(a[k], (int, float)) and isinstance(b[k], (int, float))}


def real_training_tokens(run):
    """The real (unpadded) tokens of a run's training rows: its data.pt lengths, less the validation split."""
    code = ("import json, sys, torch\nrun = sys.argv[1]\nc = json.load(open(run + '/config.json'))\n"
            "n = torch.load(c['data']['dir'] + '/data.pt')['lengths']\n"
            "train = len(n) - int(len(n) * c['training']['val_split'])\nprint(int(n[:train].sum()))")
    return int(subprocess.run([PYTHON, "-c", code, run], check=True, capture_output=True, text=True).stdout)


def timed_process(argv):
    """(wall, user, system seconds, peak RSS MB) of one process, its stdout discarded."""
    wall, usage = measured(argv)
    return {"wall_seconds": round(wall, 2), "user_seconds": round(usage.ru_utime, 2),
            "system_seconds": round(usage.ru_stime, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def one_epoch(binary, corpus, out, threads):
    wall, usage = measured([binary, "--csv", corpus, "--model", "bilstm-attention", "--epochs", "1",
                            "--batch-size", "512", "--threads", str(threads), "--out", out])
    m = last_epoch(out)
    return {"epoch_seconds": m["seconds"], "wall_seconds": round(wall, 2),
            "user_seconds": round(usage.ru_utime, 2), "system_seconds": round(usage.ru_stime, 2),
            "page_faults": usage.ru_minflt, "peak_rss_mb": round(usage.ru_maxrss / 1024)}, \
        {k: v for k, v in m.items() if k not in ("seconds", "rows_per_second")}


def main():
    ap = arguments(__file__, "train_ab.json", rows=32000, repeats=3, threads=2)
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--baseline", help="directory with the baseline build's attn-train and attn-evaluate")
    group.add_argument("--baseline-commit", help="build the baseline from this commit first")
    args = ap.parse_args()
    work = workdir("train-ab")
    baseline_src = None
    if args.baseline_commit:
        args.baseline, baseline_src = build_baseline(args.baseline_commit, work)
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
            scoring[name].append(timed_process([os.path.join(bin_dir, "attn-evaluate"), "--model", run,
                                                "--csv", scored, "--threads", str(args.threads), "--metrics", out]))
            with open(out) as f:
                scored_metrics[name] = json.load(f)
    median = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    tokens = real_training_tokens(os.path.join(work, f"current-{args.repeats - 1}"))
    peak = sgemm_peak_gflops(args.threads)
    efficiency = {name: {"gflop_per_second": round(FLOP_PER_TOKEN * tokens / m["epoch_seconds"] / 1e9, 1),
                         "share_of_sgemm_peak": round(FLOP_PER_TOKEN * tokens / m["epoch_seconds"] / 1e9 / peak, 3)}
                  for name, m in median.items()}
    scoring_median = {name: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for name, rs in scoring.items()}
    result = {
        "benchmark": "one epoch of bilstm-attention (embed 128, BiLSTM 2x60, batch 512), baseline build vs current, alternating",
        "corpus": {"rows": args.rows, "generator": "bench/gen_jigsaw_profile 2018"},
        "threads": args.threads,
        "runs": runs,
        "median": median,
        "epoch_speedup": round(median["baseline"]["epoch_seconds"] / median["current"]["epoch_seconds"], 3),
        "training_tokens": tokens,
        "sgemm_peak_gflop_per_second": round(peak, 1),
        "efficiency": efficiency,
        "targets": {"epoch_speedup_at_least": 1.5, "share_of_sgemm_peak_at_least": 0.4},
        "metrics_difference": differences(metrics["baseline"], metrics["current"]),
        "evaluate": {"what": "attn evaluate of 20,000 Jigsaw-profile comments (gen_jigsaw_profile 7) with the build's own model, whole process",
                     "runs": scoring, "median": scoring_median,
                     "speedup": round(scoring_median["baseline"]["wall_seconds"] / scoring_median["current"]["wall_seconds"], 3),
                     "metrics_difference": differences(scored_metrics["baseline"], scored_metrics["current"])},
    }
    if args.baseline_commit:
        result["baseline_commit"] = args.baseline_commit
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", baseline_src], check=False)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
