#!/usr/bin/env python3
"""attn on Davidson et al. (ICWSM 2017): 24,783 tweets, `class` 0 hate speech / 1 offensive / 2
neither, as a new user runs it: `attn train` naming the columns only (the CSV as published: an
unnamed index column, tweets with newlines inside quotes), on a fixed split: every fifth row
(index % 5 == 0) held out for the test, the rest trained on (the recipe's early stopping holds out
the last fifth of those). Reports accuracy, macro-F1, one-vs-one AUROC and the toxic AUROC (hate or
offensive against neither), per seed and for the seeds' mean probabilities.

The corpus is not part of attn (../shared/realdata/davidson_hate_offensive on our machines); the
split files go to a temporary directory.

usage: python3 bench/quality/run_davidson.py [--corpus FILE] [--seeds 1] [--out bench/quality/results/davidson.json] [-- EXTRA TRAIN FLAGS]
Exits 77 (skipped) when the corpus is missing.
"""
import argparse
import csv
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, result_path, roc_auc, train_and_score, workdir, write_json  # noqa: E402

CLASSES = ("0", "1", "2")  # hate speech, offensive, neither


def write_split(corpus, work):
    """labeled_data.csv split into WORK/train.csv (index % 5 != 0) and WORK/test.csv (index % 5 == 0),
    the unnamed index column named "id"; returns (header, {split: rows})."""
    with open(corpus, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    header[0] = "id"
    split = {"train": [r for r in body if int(r[0]) % 5 != 0], "test": [r for r in body if int(r[0]) % 5 == 0]}
    for name, part in split.items():
        with open(os.path.join(work, name + ".csv"), "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(part)
    return header, split


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(REALDATA, "davidson_hate_offensive", "labeled_data.csv"))
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--out", default=result_path(__file__, "davidson.json"))
    ap.add_argument("extra", nargs="*", help="more `attn train` flags (after --)")
    a = ap.parse_args()
    if not os.path.exists(a.corpus):
        print(f"SKIP: no Davidson corpus at {a.corpus}")
        sys.exit(77)
    work = workdir("davidson")
    header, split = write_split(a.corpus, work)
    truth = {r[0]: r[header.index("class")] for r in split["test"]}
    runs, mean_probs = [], {}
    for seed in range(1, a.seeds + 1):
        run = os.path.join(work, f"run{seed}")
        seconds, m, predictions = train_and_score(run, os.path.join(work, "train.csv"), os.path.join(work, "test.csv"),
                                                  ["--text-column", "tweet", "--label-column", "class", "--seed", str(seed), *a.extra],
                                                  a.threads)
        scores, toxic = [], []
        for row in predictions:
            scores.append(1 - float(row["2"]))
            toxic.append(truth[row["id"]] != "2")
            p = mean_probs.setdefault(row["id"], [0.0] * 3)
            for k, c in enumerate(CLASSES):
                p[k] += float(row[c]) / a.seeds
        runs.append({"seed": seed, "train_seconds": round(seconds, 1), "accuracy": m["accuracy"], "macro_f1": m["macro_f1"],
                     "auroc_ovo": m["ovo_auc"], "auroc_toxic": roc_auc(scores, toxic), "f1": m["f1"]})
        print(json.dumps(runs[-1]), file=sys.stderr)
    mean = {k: sum(r[k] for r in runs) / len(runs) for k in ("accuracy", "macro_f1", "auroc_ovo", "auroc_toxic", "train_seconds")}
    if a.seeds > 1:
        ids = sorted(mean_probs)
        mean["ensemble_of_seeds_toxic_auroc"] = roc_auc([1 - mean_probs[i][2] for i in ids], [truth[i] != "2" for i in ids])
    result = {"corpus": "Davidson et al. 2017 (labeled_data.csv): rows with index % 5 != 0 -> rows with index % 5 == 0",
              "rows": {k: len(v) for k, v in split.items()}, "extra_flags": a.extra,
              "command": "attn train --csv train.csv --text-column tweet --label-column class " + " ".join(a.extra),
              "runs": runs, "mean": mean}
    write_json(a.out, result)
    print(json.dumps(mean, indent=2))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
