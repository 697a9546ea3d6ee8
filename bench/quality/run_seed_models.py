#!/usr/bin/env python3
"""The targets of the seed 001-003 systems, measured end to end with the attn command:

  features     seed 001: feature-attention on 100,000 generated rows (D=10, informative x1, x2),
               validation accuracy (target >= 0.90) and the share of the mean attention on the
               informative features (target >= 80%), with the seed's recipe (16 epochs, batch 128,
               validation_split 0.3) and with 30 epochs.
  dates        seed 002: seq2seq-attention trained on 50,000 generated en_US dates (40,000 after the
               validation split), exact match on 2,000 other generated dates whose text it never saw
               (target >= 99%); with --scores, every score of the library (4 epochs each).
  transformer  seed 003: transformer-classifier next to bilstm-attention on data/toxic_sample.csv
               (3 epochs, batch 64, as scripts/main.sh), mean ROC AUC on the held-out 20%.

usage: python3 bench/quality/run_seed_models.py [--only features,dates,transformer] [--scores] [--out FILE]
Needs a built tree (bash scripts/setup.sh). Writes bench/quality/results/seed_models.json.
"""
import argparse
import csv
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ROOT, attn, last_epoch, result_path, timed, workdir, write_result  # noqa: E402


def timed_train(*args):
    return timed(attn, "train", *args)[0]


def features(work, threads):
    data = os.path.join(work, "features.csv")
    attn("datagen", "features", "--rows", "100000", "--dims", "10", "--informative", "1,2", "--seed", "1", "--out", data)
    out = {"data": "attn datagen features --rows 100000 --dims 10 --informative 1,2 --seed 1", "runs": []}
    for epochs in (16, 30):
        run = os.path.join(work, f"features-{epochs}")
        seconds = timed_train("--model", "feature-attention", "--csv", data, "--out", run, "--epochs", str(epochs),
                              "--batch-size", "128", "--val-split", "0.3", "--threads", str(threads))
        m = last_epoch(run)
        informative = m["val_mean_attention"]["x1"] + m["val_mean_attention"]["x2"]
        out["runs"].append({"command": f"attn train --model feature-attention --csv features.csv --epochs {epochs} "
                                       "--batch-size 128 --val-split 0.3",
                            "val_accuracy": m["val_accuracy"], "val_auc": m["val_mean_auc"], "mean_attention": m["val_mean_attention"],
                            "informative_attention_share": informative, "seconds": round(seconds, 1),
                            "targets_met": m["val_accuracy"] >= 0.90 and informative >= 0.80})
    return out


def unseen_dates(work, train_csv, rows, seed):
    """`rows` generated dates whose human text is not in the training file."""
    seen = {r["human"] for r in csv.DictReader(open(train_csv, newline="", encoding="utf-8"))}
    raw = os.path.join(work, "dates-raw-test.csv")
    attn("datagen", "dates", "--rows", str(rows * 2), "--seed", str(seed), "--out", raw)
    kept = [r for r in csv.DictReader(open(raw, newline="", encoding="utf-8")) if r["human"] not in seen][:rows]
    path = os.path.join(work, "dates-test.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, quoting=csv.QUOTE_MINIMAL)
        w.writerow(["human", "machine"])
        w.writerows([[r["human"], r["machine"]] for r in kept])
    return path, len(kept)


def evaluate_dates(run, test):
    metrics = run + "-test.json"
    attn("evaluate", "--model", run, "--csv", test, "--metrics", metrics, "--predictions", run + "-test-predictions.csv")
    return json.load(open(metrics))


def dates(work, threads, scores):
    train = os.path.join(work, "dates.csv")
    attn("datagen", "dates", "--rows", "50000", "--seed", "1", "--out", train)
    test, n = unseen_dates(work, train, 2000, 99)
    out = {"data": "attn datagen dates --rows 50000 --seed 1 (train: the first 40,000, validation: the last 10,000)",
           "test": f"{n} dates of attn datagen dates --seed 99 whose human text is not in the training file", "runs": []}
    configs = [("additive", "bahdanau", 4)]
    if scores:  # the default again is skipped
        configs = []
        configs += [(s, "bahdanau", 4) for s in ("additive", "general", "dot", "scaled-dot", "cosine", "location")]
        configs += [("general", "luong", 4), ("dot", "luong", 4)]
    for score, style, epochs in configs:
        run = os.path.join(work, f"dates-{score}-{style}-{epochs}")
        seconds = timed_train("--model", "seq2seq-attention", "--csv", train, "--source-column", "human", "--target-column",
                              "machine", "--set", f"score={score}", "--set", f"style={style}", "--epochs", str(epochs),
                              "--batch-size", "64", "--out", run, "--threads", str(threads))
        m, t = last_epoch(run), evaluate_dates(run, test)
        out["runs"].append({"score": score, "style": style, "epochs": epochs, "val_exact_match": m["val_exact_match"],
                            "test_exact_match": t["exact_match"], "test_char_accuracy": t["char_accuracy"],
                            "seconds": round(seconds, 1), "target_met": t["exact_match"] >= 0.99})
    return out


def transformer(work, threads):
    out = {"data": "data/toxic_sample.csv (20,000 rows; last 4,000 held out)", "runs": []}
    for model in ("bilstm-attention", "transformer-classifier"):
        run = os.path.join(work, model)
        seconds = timed_train("--csv", os.path.join(ROOT, "data", "toxic_sample.csv"), "--model", model, "--epochs", "3",
                              "--batch-size", "64", "--out", run, "--threads", str(threads))
        m = last_epoch(run)
        out["runs"].append({"model": model, "val_mean_auc": m["val_mean_auc"], "val_auc": m["val_auc"],
                            "seconds": round(seconds, 1)})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="features,dates,transformer")
    ap.add_argument("--scores", action="store_true", help="also train the dates model with every score")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--out", default=result_path(__file__, "seed_models.json"))
    args = ap.parse_args()
    work = workdir("seed-models")
    result = {"threads": args.threads}
    if os.path.exists(args.out):
        result.update(json.load(open(args.out)))
    try:
        for part in args.only.split(","):
            if part == "features":
                result["features"] = features(work, args.threads)
            elif part == "dates":
                result["dates"] = dates(work, args.threads, args.scores)
            elif part == "transformer":
                result["transformer"] = transformer(work, args.threads)
            else:
                sys.exit(f"unknown part {part!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_result(args.out, result)


if __name__ == "__main__":
    main()
