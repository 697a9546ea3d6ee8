#!/usr/bin/env python3
"""Plausibility of each importance method against human rationales (bench/results/plausibility.json):
bilstm-attention trained on HateXplain's train split (one class per row, --subwords), then `attn
plausibility` with every method (integrated gradients: 50 steps) against HateXplain's val rationales
(ERASER's format, the union of the annotators' spans, 1,141 toxic posts) and Toxic Spans' trial split;
the figures and the seconds each takes. The corpora are not part of attn: skips without them."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import RESULTS, ROOT, attn, timed, workdir, write_result  # noqa: E402
import run_hatexplain  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--realdata", default=os.path.join(ROOT, "..", "shared", "realdata"))
    ap.add_argument("--threads", default="2")
    ap.add_argument("--out", default=os.path.join(RESULTS, "plausibility.json"))
    a = ap.parse_args()
    hatexplain = os.path.join(a.realdata, "hatexplain")
    if not os.path.exists(os.path.join(hatexplain, "eraser", "docs.jsonl")):
        print(f"SKIP: no HateXplain corpus at {hatexplain}")
        sys.exit(77)
    work = workdir("plausibility")
    run_hatexplain.write_splits(hatexplain, work)
    run = os.path.join(work, "run")
    attn("train", "--csv", os.path.join(work, "train.jsonl"), "--text-column", "text", "--label-column", "label", "--subwords",
         "--seed", "1", "--threads", a.threads, "--out", run)
    out = {"model": "bilstm-attention --subwords, HateXplain train split, seed 1",
           "published_hatexplain_test": {"BiRNN-HateXplain": {"auprc": 0.841},
                                         "BiRNN-HateXplain re-run": {"iou_f1": 0.228, "token_f1": 0.495, "auprc": 0.823}}}
    sets = {"hatexplain_val": os.path.join(hatexplain, "eraser", "val_split3.json"),
            "toxic_spans_trial": os.path.join(a.realdata, "toxic_spans", "SemEval2021", "tsd_trial.csv")}
    for name, rationales in sets.items():
        if not os.path.exists(rationales):
            continue
        figures = os.path.join(work, name + ".json")
        seconds, _ = timed(attn, "plausibility", "--model", run, "--rationales", rationales, "--json", figures, "--threads", a.threads)
        with open(figures) as f:
            result = json.load(f)
        out[name] = {"rows": result["rows"], "seconds": round(seconds, 1), "words_without_token": result["words_without_token"],
                     "methods": result["methods"], "marks_as_scores": result["marks_as_scores"],
                     "command": f"attn plausibility --model RUN --rationales {os.path.basename(rationales)}"}
    write_result(a.out, out)


if __name__ == "__main__":
    main()
