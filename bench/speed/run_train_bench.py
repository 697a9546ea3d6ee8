#!/usr/bin/env python3
"""Training benchmark: one epoch of bilstm-attention (the seed's sizes, batch 512) on a corpus with
Jigsaw train.csv's length profile, with length-bucketed batches (attn's default) and with every
batch padded to maxlen 200 (--no-bucket). Writes seconds per epoch, rows/s and the ratio as JSON.

usage: python3 bench/speed/run_train_bench.py [--rows 160000] [--out bench/speed/results/train.json]
Needs a built tree (bash scripts/setup.sh). Target: bucketed >= 3.5x faster than padded to 200.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import BIN, arguments, attn, last_epoch, workdir, write_result  # noqa: E402


def main():
    args = arguments(__file__, "train.json", rows=160000, threads=os.cpu_count()).parse_args()
    work = workdir("train-bench")
    corpus, data = os.path.join(work, "corpus.csv"), os.path.join(work, "data")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, str(args.rows), "2018"], check=True)
    attn("prepare", "--csv", corpus, "--out", data)
    prepared = json.load(open(os.path.join(data, "prepare.json")))
    result = {
        "benchmark": "one training epoch of bilstm-attention (embed 128, BiLSTM 2x60, batch 512), bucketed vs padded to 200",
        "corpus": {"rows": args.rows, "train_rows": int(args.rows * 0.8),
                   "mean_tokens_per_row_after_maxlen": (prepared["tokens"]["emitted"] - prepared["tokens"]["truncated_by_maxlen"]) / args.rows},
        "threads": args.threads,
    }
    for name, extra in (("bucketed", []), ("padded_to_200", ["--no-bucket"])):
        run = os.path.join(work, name)
        print(f"training one epoch, {name} ...", file=sys.stderr)
        attn("train", "--data", data, "--out", run, "--epochs", "1", "--batch-size", "512", "--threads", str(args.threads), *extra)
        m = last_epoch(run)
        result[name] = {"seconds_per_epoch": m["seconds"], "rows_per_second": m["rows_per_second"],
                        "tokens_in_batches": m["train_tokens"]}
        print(f"  {m['seconds']:.1f} s, {m['rows_per_second']:.0f} rows/s", file=sys.stderr)
    result["speedup_bucketed_vs_padded"] = result["padded_to_200"]["seconds_per_epoch"] / result["bucketed"]["seconds_per_epoch"]
    result["target_speedup"] = 3.5
    write_result(args.out, result)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
