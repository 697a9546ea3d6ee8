#!/usr/bin/env python3
"""Scoring throughput: `attn evaluate` of 20,000 Jigsaw-profile comments (whole process: model load,
CSV, tokenising, scoring, metrics) against the Python way (bench/speed/python_evaluate.py: torch.jit.load,
the embedded Keras tokenizer, pad to maxlen 200, batches of 512), both on 2 threads, alternated.

usage: python3 bench/speed/perf_evaluate.py [--model RUN_DIR] [--rows 20000] [--runs 3] [--threads 2]
       [--out bench/speed/results/perf_evaluate.json]
Target: attn >= 8x the Python way.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, JIGSAW_MODEL_HELP, PYTHON, arguments, jigsaw_model, median_of, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = arguments(__file__, "perf_evaluate.json", rows=20000, runs=3, threads=2)
    ap.add_argument("--model", help=JIGSAW_MODEL_HELP)
    args = ap.parse_args()
    work = workdir("perf-evaluate")
    run = args.model or jigsaw_model(work)
    scored = os.path.join(work, "score.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), scored, str(args.rows), "7"], check=True)
    attn_runs, python_runs = [], []
    for i in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run([ATTN, "evaluate", "--model", run, "--csv", scored, "--threads", str(args.threads),
                        "--predictions", os.path.join(work, "predictions.csv")], check=True, stdout=subprocess.DEVNULL)
        attn_runs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        out = subprocess.run([PYTHON, os.path.join(HERE, "python_evaluate.py"), os.path.join(run, "model.pt"), scored,
                              str(args.threads)], check=True, capture_output=True, text=True).stdout
        python_runs.append({"wall_seconds": time.perf_counter() - t0, **json.loads(out)})
        print(f"run {i + 1}/{args.runs}: attn {attn_runs[-1]:.2f} s, python {python_runs[-1]['wall_seconds']:.2f} s", file=sys.stderr)
    attn_s, python_s = median_of(attn_runs), median_of([r["wall_seconds"] for r in python_runs])
    result = {
        "benchmark": f"scoring {args.rows} Jigsaw-profile comments, whole process, {args.threads} threads",
        "attn": {"command": "attn evaluate --model RUN --csv CSV --predictions OUT", "runs": [round(x, 3) for x in attn_runs],
                 "median_seconds": round(attn_s, 3), "comments_per_second": round(args.rows / attn_s)},
        "python": {"command": "bench/speed/python_evaluate.py MODEL.pt CSV", "runs": python_runs, "median_seconds": round(python_s, 3)},
        "speedup": round(python_s / attn_s, 2),
        "target": {"speedup_at_least": 8},
    }
    result["target_met"] = result["speedup"] >= 8
    write_result(args.out, result, show=("attn", "speedup", "target_met"))


if __name__ == "__main__":
    main()
