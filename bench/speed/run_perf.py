#!/usr/bin/env python3
"""Issue 13's four measurements in one run, on this host (figures move between hosts and runs: only
a same-run comparison counts), each by its own script beside this one, figures in bench/speed/results/*.json:

  explain start-up    perf_explain.py       attn explain vs a LibTorch-only program and Python
  scoring             perf_evaluate.py      attn evaluate of 20k comments vs the Python way
  training step       run_train_ab.py       one epoch vs a build of --baseline-commit; share of sgemm peak
  prepare             run_prepare_bench.py  attn prepare of 160k comments vs Keras

usage: python3 bench/speed/run_perf.py [--baseline-commit 749db53 | --baseline DIR] [--skip NAME ...]
(--baseline DIR: that commit's attn-train and attn-evaluate already built, e.g. by an earlier run)
Writes bench/speed/results/perf.json: docs/benchmarks.md's "Performance" table.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import PYTHON, jigsaw_model, result_path, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def run(script, *args):
    print(f"== {script} {' '.join(args)}", file=sys.stderr)
    subprocess.run([PYTHON, os.path.join(HERE, script), *args], check=True)
    return json.load(open(result_path(__file__, {"perf_explain.py": "perf_explain.json", "perf_evaluate.py": "perf_evaluate.json",
                                                  "run_train_ab.py": "train_ab.json", "run_prepare_bench.py": "prepare.json"}[script])))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-commit", default="749db53", help="the training step's baseline (issue 13: the main of its day)")
    ap.add_argument("--baseline", help="a directory with --baseline-commit's attn-train and attn-evaluate, instead of building them")
    ap.add_argument("--skip", nargs="*", default=[], choices=["explain", "evaluate", "train", "prepare"])
    args = ap.parse_args()
    table = {}
    model = None
    if "explain" not in args.skip or "evaluate" not in args.skip:
        model = jigsaw_model(workdir("perf"))
    if "explain" not in args.skip:
        r = run("perf_explain.py", "--model", model)
        table["explain one sentence, model load included"] = {
            "attn_seconds": r["median_seconds"]["attn_explain"], "libtorch_floor_seconds": r["median_seconds"]["libtorch_floor"],
            "python_seconds": r["median_seconds"]["python"], "over_floor_seconds": r["attn_over_floor_seconds"],
            "target": "within 0.150 s of the floor", "met": r["target_met"]}
    if "evaluate" not in args.skip:
        r = run("perf_evaluate.py", "--model", model)
        table["score 20k Jigsaw-profile comments (attn evaluate)"] = {
            "attn_seconds": r["attn"]["median_seconds"], "python_seconds": r["python"]["median_seconds"], "speedup": r["speedup"],
            "target": ">= 8x the Python way", "met": r["target_met"]}
    if "train" not in args.skip:
        r = run("run_train_ab.py", *(["--baseline", args.baseline] if args.baseline else ["--baseline-commit", args.baseline_commit]))
        share = r["efficiency"]["current"]["share_of_sgemm_peak"]
        table["one training epoch, 32k Jigsaw-profile rows, batch 512, 2 threads"] = {
            "attn_seconds": r["median"]["current"]["epoch_seconds"], "baseline_seconds": r["median"]["baseline"]["epoch_seconds"],
            "baseline_commit": args.baseline_commit, "speedup": r["epoch_speedup"], "share_of_sgemm_peak": share,
            "sgemm_peak_gflop_per_second": r["sgemm_peak_gflop_per_second"],
            "target": ">= 1.5x the baseline; >= 40% of sgemm peak", "met": r["epoch_speedup"] >= 1.5 and share >= 0.4}
    if "prepare" not in args.skip:
        r = run("run_prepare_bench.py")
        speedup = r.get("speedup_vs_keras", {}).get("tokenizer_and_pad_only_vs_attn_whole_command_median")
        table["prepare, 160k comments, whole command"] = {
            "attn_seconds": r["attn"]["wall_seconds_median"], "keras_seconds": r.get("keras", {}).get("tokenizer_and_pad_seconds"),
            "speedup": speedup, "target": ">= 20x Keras", "met": bool(speedup and speedup >= 20)}
    write_result(result_path(__file__, "perf.json"), {"benchmark": "issue 13's table, one run on one host", "table": table})


if __name__ == "__main__":
    main()
