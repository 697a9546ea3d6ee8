#!/usr/bin/env python3
"""The training features Keras users expect, measured on the project's data (bench/quality/results/keras_features.json):

  beam     seq2seq-attention trained 1 and 3 epochs on attn datagen dates (20,000 rows), exact match of greedy
           decoding and of --beam 5 on 2,000 dates written by Python's strftime (bench/quality/run_defaults.py's)
  early    bilstm-attention on data/toxic_sample.csv (batch 64, lr 0.005) for up to 20 epochs with
           --early-stopping-patience 2 --monitor val_loss: where it stopped, the best epoch, and that
           model.pt scores the best epoch's val_loss and val_mean_auc
  schedule the same 4 epochs with a constant rate and with --lr-schedule cosine --warmup-steps 100
  weights  --pos-weight auto against none: per-label recall at 0.5 and ROC AUC on the held-out rows

usage: python3 bench/quality/run_keras_features.py [--only beam,early,schedule,weights]
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ROOT, arguments, attn, epochs, run_parts  # noqa: E402
from run_defaults import write_dates

TOXIC = os.path.join(ROOT, "data", "toxic_sample.csv")


def held_out(work):
    """The last 20% of toxic_sample.csv (the rows training holds out), as a CSV."""
    rows = list(csv.reader(open(TOXIC, newline="", encoding="utf-8")))
    path = os.path.join(work, "held_out.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(rows[0])
        w.writerows(rows[1 + (len(rows) - 1) - (len(rows) - 1) // 5:])
    return path


def metrics_of(work, run, test, *extra):
    out = os.path.join(work, os.path.basename(run) + "-metrics.json")
    attn("evaluate", "--model", run, "--csv", test, "--metrics", out, *extra)
    return json.load(open(out))


def beam(work, threads):
    train, test = os.path.join(work, "dates.csv"), os.path.join(work, "dates-python.csv")
    attn("datagen", "dates", "--out", train)
    write_dates(test, 2000, 7)
    out = {"test": "2,000 dates written by Python's strftime"}
    for n in (1, 3):
        run = os.path.join(work, f"dates-{n}-epochs")
        attn("train", "--model", "seq2seq-attention", "--csv", train, "--source-column", "human", "--target-column", "machine",
             "--epochs", str(n), "--out", run, "--threads", str(threads))
        greedy = metrics_of(work, run, test)
        beam5 = metrics_of(work, run, test, "--beam", "5")
        out[f"{n}_epochs"] = {"greedy": {"exact_match": greedy["exact_match"], "char_accuracy": greedy["char_accuracy"]},
                              "beam_5": {"exact_match": beam5["exact_match"], "char_accuracy": beam5["char_accuracy"]},
                              "beam_at_least_greedy": beam5["exact_match"] >= greedy["exact_match"]}
    return out


def early(work, threads):
    # At 5x Keras' default rate the model overfits these 16,000 rows within a few epochs: val_loss
    # turns up and early stopping has something to stop.
    command = ["--csv", TOXIC, "--batch-size", "64", "--lr", "0.005", "--epochs", "20", "--early-stopping-patience", "2",
               "--monitor", "val_loss"]
    run = os.path.join(work, "early")
    attn("train", *command, "--out", run, "--threads", str(threads))
    records = epochs(run)
    best = min(records, key=lambda r: r["val_loss"])
    scored = metrics_of(work, run, held_out(work))
    return {"command": "attn train " + " ".join(command).replace(TOXIC, "data/toxic_sample.csv"),
            "epochs_run": len(records), "val_loss_per_epoch": [r["val_loss"] for r in records],
            "best_epoch": best["epoch"], "best_val_loss": best["val_loss"], "best_val_mean_auc": best["val_mean_auc"],
            "marked_best": [r["epoch"] for r in records if r["best"]],
            "model_pt_loss_on_the_held_out_rows": scored["loss"], "model_pt_mean_auc_on_the_held_out_rows": scored["mean_auc"],
            "model_pt_is_the_best_epoch": abs(scored["loss"] - best["val_loss"]) <= 1e-6
            and abs(scored["mean_auc"] - best["val_mean_auc"]) <= 1e-6}


def schedule(work, threads):
    out = {}
    for name, extra in (("constant", []), ("cosine_warmup_100", ["--lr-schedule", "cosine", "--warmup-steps", "100"])):
        run = os.path.join(work, "schedule-" + name)
        attn("train", "--csv", TOXIC, "--batch-size", "64", "--epochs", "4", "--out", run, "--threads", str(threads), *extra)
        out[name] = {"val_mean_auc_per_epoch": [r["val_mean_auc"] for r in epochs(run)], "lr_per_epoch": [r["lr"] for r in epochs(run)]}
    return out


def weights(work, threads):
    test, out = held_out(work), {}
    for name, extra in (("none", []), ("auto", ["--pos-weight", "auto"])):
        run = os.path.join(work, "weights-" + name)
        attn("train", "--csv", TOXIC, "--batch-size", "64", "--epochs", "3", "--out", run, "--threads", str(threads), *extra)
        m = metrics_of(work, run, test)
        out[name] = {"recall_at_0.5": m["recall"], "auc": m["auc"], "mean_auc": m["mean_auc"]}
    return out


def main():
    args = arguments(__file__, "keras_features.json", only="beam,early,schedule,weights", threads=os.cpu_count()).parse_args()
    run_parts(args.out, args.only, {"beam": beam, "early": early, "schedule": schedule, "weights": weights}, "keras-features",
              args.threads)


if __name__ == "__main__":
    main()
