#!/usr/bin/env python3
"""Benchmark of `attn prepare` on a 160,000-comment corpus with Jigsaw train.csv's profile,
against keras_preprocessing's Tokenizer(num_words=20000).fit_on_texts + texts_to_sequences +
pad_sequences(maxlen=200) on the same file and machine. Writes the figures as JSON.

usage: python3 bench/speed/run_prepare_bench.py [--rows 160000] [--runs 5] [--keras-runs 3] [--no-keras] [--out bench/speed/results/prepare.json]
Keras' runs alternate with attn's (this host's speed drifts within minutes); the speed-up is the ratio of the medians.
Needs a built tree (bash scripts/setup.sh). Targets: >= 20x Keras' time, peak memory < 1 GB.
"""
import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, attn, result_path, run_with_rss, workdir, write_result  # noqa: E402

KERAS = r"""
import csv, json, resource, sys, time
from keras_preprocessing.sequence import pad_sequences
from keras_preprocessing.text import Tokenizer
csv.field_size_limit(1 << 30)
t0 = time.perf_counter()
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    texts = [row["comment_text"] for row in csv.DictReader(f)]
t1 = time.perf_counter()
tok = Tokenizer(num_words=20000)
tok.fit_on_texts(texts)
x = pad_sequences(tok.texts_to_sequences(texts), maxlen=200)
t2 = time.perf_counter()
print(json.dumps({"read_csv_seconds": t1 - t0, "tokenizer_and_pad_seconds": t2 - t1, "shape": list(x.shape),
                  "vocabulary_size": len(tok.word_index),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=160000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2018)
    ap.add_argument("--keras-runs", type=int, default=3)
    ap.add_argument("--no-keras", action="store_true")
    ap.add_argument("--out", default=result_path(__file__, "prepare.json"))
    args = ap.parse_args()

    work = workdir("prepare-bench")
    print(f"generating the corpus in {work}", file=sys.stderr)
    corpus = os.path.join(work, "jigsaw_profile.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, str(args.rows), str(args.seed)], check=True)

    attn_runs, keras_runs, keras_error = [], [], None
    for i in range(max(args.runs, 0 if args.no_keras else args.keras_runs)):
        if i < args.runs:
            # A fresh output directory each run (replacing last run's 137 MB data.pt would add the
            # file system's cost of deleting it), and dirty pages flushed first, so runs start alike.
            out = os.path.join(work, f"prepared-{i}")
            subprocess.run(["sync"], check=True)
            wall, rss = run_with_rss([ATTN, "prepare", "--csv", corpus, "--out", out])
            with open(os.path.join(out, "prepare.json")) as f:
                report = json.load(f)
            shutil.rmtree(out)
            attn_runs.append({"wall_seconds": wall, "peak_rss_mb": rss, "phases": report["seconds"]})
            print(f"attn prepare run {i + 1}: {wall:.3f} s, peak {rss:.0f} MB", file=sys.stderr)
        if not args.no_keras and i < args.keras_runs and keras_error is None:
            proc = subprocess.run(["/usr/bin/python3", "-c", KERAS, corpus], capture_output=True, text=True)
            if proc.returncode == 0:
                keras_runs.append(json.loads(proc.stdout))
                print(f"keras run {i + 1}: {keras_runs[-1]['tokenizer_and_pad_seconds']:.2f} s", file=sys.stderr)
            else:
                keras_error = proc.stderr.strip().splitlines()[-1:]
    walls = [r["wall_seconds"] for r in attn_runs]
    # Applying a fitted Jigsaw-sized tokenizer (as for Kaggle's test.csv): prepare --tokenizer.
    fitted = os.path.join(work, "fitted")
    attn("prepare", "--csv", corpus, "--out", fitted)
    apply_wall, apply_rss = run_with_rss([ATTN, "prepare", "--csv", corpus, "--out",
                                          os.path.join(work, "applied"), "--tokenizer", os.path.join(fitted, "tokenizer.json")])
    words = []
    with open(corpus, newline="", encoding="utf-8") as f:
        csv.field_size_limit(1 << 30)
        for row in csv.DictReader(f):
            words.append(len(row["comment_text"].split()))

    result = {
        "benchmark": "attn prepare vs keras_preprocessing Tokenizer(num_words=20000) + pad_sequences(maxlen=200)",
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "corpus": {
            "rows": args.rows,
            "bytes": os.path.getsize(corpus),
            "words_per_comment_median": statistics.median(words),
            "words_per_comment_mean": statistics.fmean(words),
            "distinct_tokens": report["tokenizer"]["vocabulary_size"],
            "mean_tokens_after_num_words_and_maxlen": report["tokens"]["emitted"] / args.rows
            - report["tokens"]["truncated_by_maxlen"] / args.rows,
        },
        "attn": {
            "command": "attn prepare --csv CORPUS --out DIR  (defaults: num_words 20000, maxlen 200, all cores)",
            "runs": attn_runs,
            "wall_seconds_median": statistics.median(walls),
            "wall_seconds_min": min(walls),
            "peak_rss_mb_max": max(r["peak_rss_mb"] for r in attn_runs),
            "note": "wall time of the whole command: start-up, CSV reading, tokenizing, padding, writing all files",
            "apply_fitted_tokenizer_wall_seconds": apply_wall,
            "apply_fitted_tokenizer_peak_rss_mb": apply_rss,
        },
        "targets": {"speedup_vs_keras": 20, "peak_rss_mb_below": 1024},
    }
    if keras_runs:
        median = {k: statistics.median(r[k] for r in keras_runs) for k in ("read_csv_seconds", "tokenizer_and_pad_seconds")}
        result["keras"] = {**keras_runs[0], **median, "runs": keras_runs, "note": "medians of the runs"}
        result["speedup_vs_keras"] = {
            "tokenizer_and_pad_only_vs_attn_whole_command_median": median["tokenizer_and_pad_seconds"] / statistics.median(walls),
            "with_csv_reading_vs_attn_whole_command_median":
                (median["tokenizer_and_pad_seconds"] + median["read_csv_seconds"]) / statistics.median(walls),
        }
    elif keras_error:
        result["keras"] = {"error": keras_error}
    write_result(args.out, result, show=("corpus", "speedup_vs_keras"))
    print(f"attn median {statistics.median(walls):.3f} s, peak {result['attn']['peak_rss_mb_max']:.0f} MB; wrote {args.out}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
