#!/usr/bin/env python3
"""Toxic spans (SemEval-2021 Task 5): the span tagger trained on people's marks against a text
classifier's attention, both by `attn spans` on the same held-out posts.

The tagger (`attn train --csv train.csv --text-column text --spans-column spans`, no other flag:
bilstm-tagger) trains on the first 80% of tsd_train.csv shuffled (seed 1; its own validation rows,
which pick its epoch and threshold, the last tenth of those) and is reported on the other 20%
("tagger_held_out") and on tsd_trial.csv. --tagger-seeds 1,2,3 trains it with each seed (the spread).

The attention baseline: `attn spans` with the
HateXplain model (bilstm-attention --subwords on HateXplain's train split, one class per row, seed 1)
on Toxic Spans posts it never saw (bench/quality/results/toxic_spans.json).

Splits: tsd_train.csv shuffled (seed 1) into a tuning part (the first 20%) and a held-out part (the
other 80%); the threshold is chosen on the tuning part alone, then reported on the held-out part and
on tsd_trial.csv. Also the ceiling of word-level answers: the words people touched turned back into
characters by attn's rule (text/char_spans.h), and the SemEval baselines for scale. The corpora are
not part of attn: skips without them. --model RUN reuses a trained HateXplain run."""
import ast
import csv
import json
import os
import random
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, arguments, attn, hatexplain_work, timed, write_result  # noqa: E402

THRESHOLDS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def read_posts(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [(r["spans"], r["text"]) for r in csv.DictReader(f)]


def write_posts(path, posts):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["spans", "text"])
        w.writerows(posts)


def f1(pred, gold):  # SemEval's per-post F1
    if not gold:
        return 1.0 if not pred else 0.0
    if not pred:
        return 0.0
    return 2 * len(pred & gold) / (len(pred) + len(gold))


def word_ceiling(posts):
    """Character F1 of the words people touched (a letter of theirs marked) turned back into characters as attn does."""
    total = 0.0
    for spans, text in posts:
        gold = set(ast.literal_eval(spans))
        out, prev = set(), None
        for m in re.finditer(r"[^ \t\n]+", text):
            a, b = m.span()
            if not any(i in gold and text[i].isalnum() for i in range(a, b)):
                prev = None
                continue
            s, e = a, b
            while s < e and not text[s].isalnum():
                s += 1
            while e > s and not text[e - 1].isalnum():
                e -= 1
            if s == e:
                s, e = a, b
            out.update(range(s if prev is None else prev, e))
            prev = e
        total += f1(out, gold)
    return total / len(posts)


def spans_f1(run, csv_path, threshold, threads):
    out = attn("spans", "--model", run, "--csv", csv_path, "--threshold", str(threshold), "--threads", threads, capture=True)
    return json.loads(out.stdout)


def tagger(work, tsd, posts, baseline, threshold, seeds, threads):
    """The span tagger trained on the first 80% of `posts` (shuffled), scored on the rest and on trial, beside
    the attention baseline (`baseline` at `threshold`) on the same held-out posts."""
    cut = len(posts) * 4 // 5
    train_csv, held_csv = os.path.join(work, "tagger_train.csv"), os.path.join(work, "tagger_held_out.csv")
    write_posts(train_csv, posts[:cut])
    write_posts(held_csv, posts[cut:])
    trial = os.path.join(tsd, "tsd_trial.csv")
    out = {"train_posts": cut, "command": "attn train --csv tagger_train.csv --text-column text --spans-column spans --out RUN",
           "runs": []}
    for seed in seeds:
        run = os.path.join(work, f"tagger_{seed}")
        if os.path.exists(run):
            shutil.rmtree(run)
        seconds, _ = timed(attn, "train", "--csv", train_csv, "--text-column", "text", "--spans-column", "spans", "--seed", str(seed),
                           "--threads", threads, "--out", run, capture=True)
        config = json.load(open(os.path.join(run, "config.json")))
        row = {"seed": seed, "train_seconds": round(seconds, 1), "epochs": sum(1 for _ in open(os.path.join(run, "metrics.jsonl"))),
               "threshold_offset": config.get("logit_adjustment", {}).get("offsets"),
               "validation_f1": config.get("logit_adjustment", {}).get("span_f1_after")}
        for name, path in (("held_out", held_csv), ("trial", trial)):
            seconds, result = timed(spans_f1, run, path, 0.5, threads)
            row[name] = {"posts": result["rows"], "f1": result["f1"], "precision": result["precision"], "recall": result["recall"],
                         "seconds": round(seconds, 1)}
        out["runs"].append(row)
    for name in ("held_out", "trial"):
        f1s = [r[name]["f1"] for r in out["runs"]]
        out[name + "_mean_f1"] = sum(f1s) / len(f1s)
    seconds, result = timed(spans_f1, baseline, held_csv, threshold, threads)
    out["attention_baseline_same_posts"] = {"posts": result["rows"], "f1": result["f1"], "precision": result["precision"],
                                            "recall": result["recall"], "threshold": threshold}
    return out


def main():
    a = arguments(__file__, "toxic_spans.json", realdata=REALDATA, threads="2", model="", tagger_seeds="1").parse_args()
    tsd = os.path.join(a.realdata, "toxic_spans", "SemEval2021")
    if not os.path.exists(os.path.join(tsd, "tsd_train.csv")):
        print("no Toxic Spans corpus: skipped")
        return
    work, _ = hatexplain_work(os.path.join(a.realdata, "hatexplain"), "toxic_spans")
    run = a.model
    if not run:
        run = os.path.join(work, "run")
        attn("train", "--csv", os.path.join(work, "train.jsonl"), "--text-column", "text", "--label-column", "label", "--subwords",
             "--seed", "1", "--threads", a.threads, "--out", run)
    posts = read_posts(os.path.join(tsd, "tsd_train.csv"))
    random.Random(1).shuffle(posts)
    cut = len(posts) // 5
    tuning, held_out = posts[:cut], posts[cut:]
    tuning_csv, held_csv = os.path.join(work, "tuning.csv"), os.path.join(work, "held_out.csv")
    write_posts(tuning_csv, tuning)
    write_posts(held_csv, held_out)
    by_threshold = {str(t): spans_f1(run, tuning_csv, t, a.threads)["f1"] for t in THRESHOLDS}
    best = max(THRESHOLDS, key=lambda t: by_threshold[str(t)])
    out = {"model": run if a.model else "bilstm-attention --subwords, HateXplain train split, seed 1",
           "tuning": {"posts": len(tuning), "f1_by_threshold": by_threshold, "threshold": best},
           "semeval_2021_for_scale": {"winner": 0.7083, "median_of_described_systems": 0.6758, "spacy_tagger": 0.6699}}
    for name, path, rows in [("held_out", held_csv, held_out), ("trial", os.path.join(tsd, "tsd_trial.csv"), read_posts(os.path.join(tsd, "tsd_trial.csv")))]:
        seconds, result = timed(spans_f1, run, path, best, a.threads)
        out[name] = {"posts": result["rows"], "f1": result["f1"], "precision": result["precision"], "recall": result["recall"],
                     "seconds": round(seconds, 1), "word_level_ceiling_f1": word_ceiling(rows),
                     "command": f"attn spans --model RUN --csv {os.path.basename(path)} --threshold {best}"}
    out["tagger"] = tagger(work, tsd, posts, run, best, [int(s) for s in a.tagger_seeds.split(",")], a.threads)
    write_result(a.out, out)


if __name__ == "__main__":
    main()
