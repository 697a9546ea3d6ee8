#!/usr/bin/env python3
"""Counterfactual logit pairing on the model HateXplain users train (issue 59): one class per row
(normal / offensive / hatespeech), no flags but the columns, trained on the official train split and
measured on the official val split (never trained or tuned on; lambda is the default 1, not tuned):
  plain                  attn train with no flags but the columns
  counterfactual         the same with --counterfactual (the audit's 24 built-in terms)
  counterfactual_half    --counterfactual over every other built-in term only (the rest never swapped)
Per model: val macro-F1 and one-vs-one AUROC; `attn audit --benign normal` (toxicity = 1 - p(normal)):
the template sentences' final metric and, per term, the share of its kind sentences decided toxic
(the worst term; the worst of the held-out half); the val posts that name a term as they are and with
each term swapped for another (all terms, and among the held-out half only): the AUC of 1 - p(normal)
against "not normal", and the mean |shift|; the mean epoch time (counterfactual training's cost).

usage: python3 bench/quality/run_counterfactual_classes.py [--corpus DIR] [--runs DIR] [--variants a,b]
--runs keeps (and reuses) the trained runs there. Exits 77 (skipped) when the corpus is missing.
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import (BUILTIN_TERMS, REALDATA, SEEN_TERMS, UNSEEN_TERMS, attn, epochs, hatexplain_work, result_path,  # noqa: E402
                      roc_auc, swapped_posts, write_result)

VARIANTS = {"plain": [], "counterfactual": ["--counterfactual"],
            "counterfactual_half": ["--counterfactual", "--counterfactual-terms", "{seen_terms}"]}


def toxicity(run, path, work, name, threads):
    """{post_id: 1 - p(normal)} of `path` by `run`."""
    predictions = os.path.join(work, name + ".csv")
    attn("evaluate", "--model", run, "--csv", path, "--predictions", predictions, "--threads", threads)
    with open(predictions, newline="") as f:
        return {r["id"]: 1.0 - float(r["normal"]) for r in csv.DictReader(f)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=os.path.join(REALDATA, "hatexplain"))
    ap.add_argument("--runs", default="", help="a directory to keep (and reuse) the trained runs in")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", default=result_path(__file__, "counterfactual_classes.json"))
    a = ap.parse_args()
    work, _ = hatexplain_work(a.corpus, "counterfactual")
    runs = a.runs or work
    os.makedirs(runs, exist_ok=True)
    val = os.path.join(work, "val.jsonl")
    truth = {}
    with open(val) as f:
        for line in f:
            post = json.loads(line)
            truth[post["post_id"]] = post["label"] != "normal"
    seen_terms = os.path.join(work, "seen_terms.txt")
    with open(seen_terms, "w") as f:
        f.write("\n".join(SEEN_TERMS) + "\n")
    copies = {}
    for key, terms in (("all_terms", BUILTIN_TERMS), ("unseen_terms", UNSEEN_TERMS)):
        path = os.path.join(work, f"val_swapped_{key}.jsonl")
        copies[key] = (path, swapped_posts(val, path, terms))
    result = {"corpus": "HateXplain: official train split -> official val split", "variants": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            result["variants"] = json.load(f).get("variants", {})
    for name in a.variants.split(","):
        flags = [f.format(seen_terms=seen_terms) for f in VARIANTS[name]]
        run = os.path.join(runs, name)
        if not os.path.exists(os.path.join(run, "model.pt")):
            attn("train", "--csv", os.path.join(work, "train.jsonl"), "--text-column", "text", "--id-column", "post_id",
                 "--label-column", "label", "--threads", a.threads, "--out", run, *flags)
        metrics = os.path.join(work, name + "_metrics.json")
        attn("evaluate", "--model", run, "--csv", val, "--metrics", metrics, "--threads", a.threads)
        with open(metrics) as f:
            m = json.load(f)
        report = os.path.join(work, name + "_audit.json")
        attn("audit", "--model", run, "--benign", "normal", "--no-why", "--json", report, "--threads", a.threads)
        with open(report) as f:
            audit = json.load(f)
        flagged = {t["term"]: t["templates"]["kind_decided_toxic"] for t in audit["terms"]}
        before = toxicity(run, val, work, name + "_val", a.threads)
        swaps = {}
        for key, (path, ids) in copies.items():
            after = toxicity(run, path, work, f"{name}_{key}", a.threads)
            positive = [truth[i] for i in ids]
            swaps[key] = {"posts": len(ids), "auc": roc_auc([before[i] for i in ids], positive),
                          "auc_swapped": roc_auc([after[i] for i in ids], positive),
                          "mean_abs_shift": sum(abs(before[i] - after[i]) for i in ids) / len(ids)}
        trained = epochs(run)
        result["variants"][name] = {
            "train_flags": [f if f != seen_terms else "SEEN_TERMS" for f in flags],
            "macro_f1": m["macro_f1"], "ovo_auc": m["ovo_auc"], "accuracy": m["accuracy"],
            "templates_final": audit["templates"]["final"], "kind_decided_toxic": flagged,
            "max_kind_decided_toxic": max(flagged.values()), "worst_term": max(flagged, key=flagged.get),
            "max_kind_decided_toxic_unseen": max(flagged[t] for t in UNSEEN_TERMS),
            "swaps": swaps, "epochs": len(trained), "epoch_seconds": sum(e["seconds"] for e in trained) / len(trained)}
    write_result(a.out, result, show=["variants"])


if __name__ == "__main__":
    main()
