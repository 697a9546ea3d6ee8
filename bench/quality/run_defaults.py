#!/usr/bin/env python3
"""Training with no training flags at all: does each model's registry recipe give a good model on
data written independently of attn (by this script, with Python's own random and datetime)?

  dates     attn datagen dates (its defaults: 20,000 rows), then `attn train --model seq2seq-attention`
            with only the data's column flags; exact match on 2,000 dates this script writes with
            Python's strftime in the seed's formats and random case (target >= 0.99).
  features  100,000 rows like seed 001's (10 standard-normal features; the label follows x1 and x2
            through a noisy linear rule, written here), `attn train --model feature-attention`
            with no flags; held-out accuracy (target >= 0.85) and the attention on x1 and x2.

usage: python3 bench/quality/run_defaults.py [--only dates,features] [--out bench/quality/results/defaults.json]
"""
import csv
import datetime
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import arguments, attn, last_epoch, run_parts, timed  # noqa: E402

# Seed 002's formats (datalogue/keras-attention), written with strftime: day and month as numbers
# with and without zero padding, month names long and short, English weekdays.
DATE_FORMATS = ["%-d %b %Y", "%-d %B %Y", "%d %b %Y", "%-d %b, %Y", "%-d %B, %Y", "%d, %b %Y", "%-d %m %y",
                "%B %-d %Y", "%B %-d, %Y", "%d.%m.%y", "%-m/%-d/%y", "%b %-d, %Y", "%A, %B %-d, %Y"]


def write_dates(path, rows, seed):
    rng = random.Random(seed)
    start, days = datetime.date(1950, 1, 1), (datetime.date(2049, 12, 31) - datetime.date(1950, 1, 1)).days
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["human", "machine"])
        for _ in range(rows):
            d = start + datetime.timedelta(days=rng.randrange(days + 1))
            text = d.strftime(rng.choice(DATE_FORMATS))
            text = rng.choice([str.lower, str.upper, str.title, lambda s: s])(text)
            w.writerow([text, d.isoformat()])


def dates(work, threads):
    train, test = os.path.join(work, "dates.csv"), os.path.join(work, "dates-python.csv")
    attn("datagen", "dates", "--out", train)
    write_dates(test, 2000, 7)
    run = os.path.join(work, "dates")
    seconds, _ = timed(attn, "train", "--model", "seq2seq-attention", "--csv", train, "--source-column", "human",
                       "--target-column", "machine", "--out", run, "--threads", str(threads))
    metrics = os.path.join(work, "dates-test.json")
    attn("evaluate", "--model", run, "--csv", test, "--metrics", metrics, "--predictions", os.path.join(work, "dates-predictions.csv"))
    m = json.load(open(metrics))
    config = json.load(open(os.path.join(run, "config.json")))
    return {"train": "attn datagen dates (20,000 rows) ; attn train --model seq2seq-attention --csv dates.csv "
                     "--source-column human --target-column machine",
            "training": config["training"], "test": "2,000 dates written by Python's strftime in the seed's formats",
            "exact_match": m["exact_match"], "char_accuracy": m["char_accuracy"], "seconds": round(seconds, 1),
            "target_met": m["exact_match"] >= 0.99}


def write_features(path, rows, seed):
    """x ~ N(0, 1)^10; label = [x1 + 0.8 x2 + N(0, 0.4^2) > 0] (the best accuracy is about 0.90)."""
    rng = random.Random(seed)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"x{i}" for i in range(10)] + ["label"])
        for _ in range(rows):
            x = [rng.gauss(0, 1) for _ in range(10)]
            w.writerow([f"{v:.6f}" for v in x] + [int(x[1] + 0.8 * x[2] + rng.gauss(0, 0.4) > 0)])


def features(work, threads):
    data = os.path.join(work, "features.csv")
    write_features(data, 100000, 11)
    run = os.path.join(work, "features")
    seconds, _ = timed(attn, "train", "--model", "feature-attention", "--csv", data, "--out", run, "--threads", str(threads))
    m = last_epoch(run)
    config = json.load(open(os.path.join(run, "config.json")))
    share = m["val_mean_attention"]["x1"] + m["val_mean_attention"]["x2"]
    ceiling = 0.5 + math.asin(math.sqrt(1.64 / 1.80)) / math.pi  # P(sign agrees) for correlated Gaussians
    return {"data": "100,000 rows written here: label = [x1 + 0.8 x2 + N(0, 0.16) > 0]",
            "train": "attn train --model feature-attention --csv features.csv", "training": config["training"],
            "val_accuracy": m["val_accuracy"], "best_possible_accuracy": round(ceiling, 4), "val_mean_auc": m["val_mean_auc"],
            "attention_on_x1_x2": share, "seconds": round(seconds, 1), "target_met": m["val_accuracy"] >= 0.85}


def main():
    args = arguments(__file__, "defaults.json", only="dates,features", threads=os.cpu_count()).parse_args()
    run_parts(args.out, args.only, {"dates": dates, "features": features}, "defaults", args.threads)


if __name__ == "__main__":
    main()
