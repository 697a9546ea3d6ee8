#!/usr/bin/env python3
"""Toxic spans by 5-fold cross-validation: the span tagger's held-out character F1 on every post of
tsd_train.csv once, not on one fifth of it (run_toxic_spans.py reports one split; on 1,588 posts a
split's F1 moves by about 0.01 from sampling alone).

tsd_train.csv is shuffled (--shuffle-seed, default 1) and cut into 5 folds; for each fold the tagger
trains with no flag but the columns (`attn train --csv REST.csv --text-column text --spans-column
spans --seed S`: its own validation rows, the last tenth of REST, pick its epoch and threshold) and
`attn spans` scores the fold and tsd_trial.csv. Nothing is chosen on a fold or on trial. Writes each
fold's F1, precision and recall, their mean and spread (bench/quality/results/toxic_spans_folds.json).
The corpus is not part of attn: skips without it."""
import json
import os
import random
import shutil
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, arguments, attn, timed, workdir, write_result  # noqa: E402
from run_toxic_spans import read_posts, spans_f1, write_posts  # noqa: E402


def main():
    a = arguments(__file__, "toxic_spans_folds.json", realdata=REALDATA, threads="2", folds=5, seed=1, shuffle_seed=1,
                  train_flags="").parse_args()
    tsd = os.path.join(a.realdata, "toxic_spans", "SemEval2021")
    if not os.path.exists(os.path.join(tsd, "tsd_train.csv")):
        print("no Toxic Spans corpus: skipped")
        return
    posts = read_posts(os.path.join(tsd, "tsd_train.csv"))
    random.Random(a.shuffle_seed).shuffle(posts)
    trial = os.path.join(tsd, "tsd_trial.csv")
    work = workdir("toxic_spans_folds")
    flags = a.train_flags.split()
    out = {"command": "attn train --csv REST.csv --text-column text --spans-column spans --seed S " + a.train_flags,
           "posts": len(posts), "folds": []}
    for k in range(a.folds):
        lo, hi = len(posts) * k // a.folds, len(posts) * (k + 1) // a.folds
        rest_csv, fold_csv = os.path.join(work, "rest.csv"), os.path.join(work, "fold.csv")
        write_posts(rest_csv, posts[:lo] + posts[hi:])
        write_posts(fold_csv, posts[lo:hi])
        run = os.path.join(work, "run")
        shutil.rmtree(run, ignore_errors=True)
        seconds, _ = timed(attn, "train", "--csv", rest_csv, "--text-column", "text", "--spans-column", "spans", "--seed", str(a.seed),
                           "--threads", a.threads, "--out", run, *flags, capture=True)
        config = json.load(open(os.path.join(run, "config.json")))
        row = {"fold": k, "train_posts": len(posts) - (hi - lo), "train_seconds": round(seconds, 1),
               "validation_f1": config.get("logit_adjustment", {}).get("span_f1_after")}
        for name, path in (("held_out", fold_csv), ("trial", trial)):
            result = spans_f1(run, path, 0.5, a.threads)
            row[name] = {"posts": result["rows"], "f1": result["f1"], "precision": result["precision"], "recall": result["recall"]}
        out["folds"].append(row)
        print(json.dumps(row), file=sys.stderr)
    for name in ("held_out", "trial"):
        f1s = [r[name]["f1"] for r in out["folds"]]
        out[name] = {"mean_f1": statistics.mean(f1s), "stdev_f1": statistics.stdev(f1s) if len(f1s) > 1 else 0.0,
                     "min_f1": min(f1s), "max_f1": max(f1s)}
    shutil.rmtree(work, ignore_errors=True)
    write_result(a.out, out, show=["command", "held_out", "trial"])


if __name__ == "__main__":
    main()
