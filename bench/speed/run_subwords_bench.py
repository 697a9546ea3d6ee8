#!/usr/bin/env python3
"""What --subwords costs and what `attn embed` takes (bench/speed/results/subwords.json):

- the training step: bilstm-attention at the seed's sizes, one epoch without and one with --subwords,
  alternated for --rounds rounds (the seconds metrics.jsonl records per epoch), on generated
  Jigsaw-format comments (`attn datagen toxic`: maxlen 200, the seed's batch of 512) and, when the
  corpus is there, on HateXplain's train split (one class per row: batch 64);
- `attn embed` (skip-gram, 100 dimensions, 5 epochs, 32768 n-gram rows, 2 threads) on about a
  million words of generated comments.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, attn, epochs, median_of, result_path, timed, workdir, write_hatexplain_splits, write_result  # noqa: E402


def step_costs(work, name, train_flags, rounds, threads):
    words, subwords = [], []
    for r in range(rounds):
        for flags, into in ((["--word-only"], words), (["--subwords"], subwords)):
            run = os.path.join(work, f"{name}_{r}_{flags[0][2:]}")
            attn("train", *train_flags, "--epochs", "1", "--threads", threads, "--out", run, *flags)
            into.extend(e["seconds"] for e in epochs(run))
    return {"epoch_seconds_words": words, "epoch_seconds_subwords": subwords,
            "ratio_of_medians": round(median_of(subwords) / median_of(words), 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--corpus", default=os.path.join(REALDATA, "hatexplain"))
    ap.add_argument("--out", default=result_path(__file__, "subwords.json"))
    a = ap.parse_args()
    work = workdir("subwords")
    out = {}
    toxic = os.path.join(work, "toxic.csv")
    attn("datagen", "toxic", "--rows", "20000", "--seed", "1", "--out", toxic)
    out["step_generated_jigsaw"] = step_costs(work, "toxic", ["--csv", toxic], a.rounds, a.threads)
    if os.path.exists(os.path.join(a.corpus, "eraser", "docs.jsonl")):
        write_hatexplain_splits(a.corpus, work)
        out["step_hatexplain"] = step_costs(
            work, "hx", ["--csv", os.path.join(work, "train.jsonl"), "--text-column", "text", "--label-column", "label"],
            a.rounds, a.threads)
    big = os.path.join(work, "big.csv")
    attn("datagen", "toxic", "--rows", "40000", "--seed", "2", "--out", big)
    tokens = 0
    with open(big, newline="") as f:
        for row in csv.DictReader(f):
            tokens += len(row["comment_text"].split())
    seconds, _ = timed(attn, "embed", "--csv", big, "--out", os.path.join(work, "big.vec"), "--threads", a.threads)
    out["embed"] = {"words_split_on_spaces": tokens, "seconds": round(seconds, 1),
                    "command": "attn embed --csv big.csv --out big.vec --threads " + a.threads}
    write_result(a.out, out)


if __name__ == "__main__":
    main()
