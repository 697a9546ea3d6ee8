#!/usr/bin/env python3
"""Plausibility of each importance method against human rationales (bench/quality/results/plausibility.json):
bilstm-attention trained on HateXplain's train split (one class per row, --subwords), then `attn
plausibility` with every method (integrated gradients: 50 steps) against HateXplain's val rationales
(ERASER's format, the union of the annotators' spans, 1,141 toxic posts) and Toxic Spans' trial split;
the figures and the seconds each takes. The corpora are not part of attn: skips without them."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, arguments, attn, hatexplain_work, timed, write_result  # noqa: E402


def main():
    a = arguments(__file__, "plausibility.json", realdata=REALDATA, threads="2").parse_args()
    hatexplain = os.path.join(a.realdata, "hatexplain")
    work, _ = hatexplain_work(hatexplain, "plausibility")
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
