#!/usr/bin/env python3
"""Attention trained on human rationales, on real posts (bench/quality/results/rationales.json): bilstm-attention
(--subwords) trained on HateXplain's train split (3 classes) plus Toxic Spans' train posts (every one
toxic, taken as "offensive"), with and without `--rationales tsd_train.csv` (the Toxic Spans posts'
marked words supervise the attention; HateXplain's train rationales are not in our copy of the corpus),
at each --lambdas value (0: no supervision). Per model: HateXplain val's classification (accuracy,
macro-F1, one-vs-one AUROC), every method's plausibility against HateXplain val's rationales and Toxic
Spans' trial spans (`attn plausibility`), every method's faithfulness on the first --faithfulness-rows
val posts (`attn faithfulness`), and the training seconds. The corpora are not part of attn: skips
(exit 77) without them.

usage: python3 bench/quality/run_rationales.py [--realdata DIR] [--lambdas 0,1,10] [--seeds 1] [--threads 2]
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, attn, result_path, timed, workdir, write_hatexplain_splits, write_result  # noqa: E402


def with_toxic_spans(train_jsonl, tsd_train, out_path):
    """train_jsonl's posts, then every Toxic Spans train post as an "offensive" one; their counts."""
    n = 0
    with open(out_path, "w", encoding="utf-8") as out:
        with open(train_jsonl, encoding="utf-8") as f:
            for line in f:
                out.write(line)
        with open(tsd_train, encoding="utf-8", newline="") as f:
            for i, row in enumerate(csv.DictReader(f)):
                out.write(json.dumps({"post_id": f"tsd{i + 1}", "text": row["text"], "label": "offensive"}, ensure_ascii=False) + "\n")
                n += 1
    return n


def faithfulness_summary(figures):
    """Per method and label: AOPC comprehensiveness and sufficiency, and Kendall's tau with leave-one-out."""
    return {"rows": figures["rows"], "steps": figures["steps"],
            "methods": {m: {label: {k: f.get(k) for k in ("aopc_comprehensiveness", "aopc_sufficiency", "kendall_tau_loo")}
                            for label, f in per_label.items()} for m, per_label in figures["methods"].items()}}


def mean(xs):
    return sum(xs) / len(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--realdata", default=REALDATA)
    ap.add_argument("--lambdas", default="0,1,10")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--faithfulness-rows", type=int, default=300)
    ap.add_argument("--out", default=result_path(__file__, "rationales.json"))
    a = ap.parse_args()
    hatexplain = os.path.join(a.realdata, "hatexplain")
    tsd = os.path.join(a.realdata, "toxic_spans", "SemEval2021")
    if not os.path.exists(os.path.join(hatexplain, "eraser", "docs.jsonl")) or not os.path.exists(os.path.join(tsd, "tsd_train.csv")):
        print(f"SKIP: no HateXplain or Toxic Spans corpus under {a.realdata}")
        sys.exit(77)
    work = workdir("rationales")
    write_hatexplain_splits(hatexplain, work)
    train = os.path.join(work, "train_tsd.jsonl")
    tsd_rows = with_toxic_spans(os.path.join(work, "train.jsonl"), os.path.join(tsd, "tsd_train.csv"), train)
    val = os.path.join(work, "val.jsonl")
    sets = {"hatexplain_val": os.path.join(hatexplain, "eraser", "val_split3.json"), "toxic_spans_trial": os.path.join(tsd, "tsd_trial.csv")}
    out = {"data": f"HateXplain train + {tsd_rows} Toxic Spans train posts as 'offensive'; judged on HateXplain val",
           "model": "bilstm-attention --subwords (the task's recipe for one class per row)",
           "published_hatexplain_test": {"BiRNN-Attn": {"accuracy": 0.621, "macro_f1": 0.614, "auroc": 0.795},
                                         "BiRNN-HateXplain": {"accuracy": 0.629, "macro_f1": 0.629, "auroc": 0.805, "auprc": 0.841},
                                         "BiRNN-HateXplain re-run": {"iou_f1": 0.228, "token_f1": 0.495, "auprc": 0.823}},
           "runs": {}}
    for lam in a.lambdas.split(","):
        per_seed = []
        for seed in range(1, a.seeds + 1):
            run = os.path.join(work, f"run_l{lam}_s{seed}")
            flags = ["--text-column", "text", "--label-column", "label", "--subwords", "--seed", str(seed)]
            if float(lam) > 0:
                flags += ["--rationales", os.path.join(tsd, "tsd_train.csv"), "--rationale-weight", lam]
            seconds, _ = timed(attn, "train", "--csv", train, *flags, "--threads", a.threads, "--out", run)
            metrics = os.path.join(run, "val_metrics.json")
            attn("evaluate", "--model", run, "--csv", val, "--metrics", metrics, "--threads", a.threads)
            with open(metrics) as f:
                m = json.load(f)
            r = {"train_seconds": round(seconds, 1), "accuracy": m["accuracy"], "macro_f1": m["macro_f1"], "auroc_ovo": m["ovo_auc"]}
            for name, rationales in sets.items():
                figures = os.path.join(run, name + ".json")
                attn("plausibility", "--model", run, "--rationales", rationales, "--json", figures, "--threads", a.threads)
                with open(figures) as f:
                    r[name] = {k: {x: v[x] for x in ("iou_f1", "token_f1", "auprc")} for k, v in json.load(f)["methods"].items()}
            faith = os.path.join(run, "faithfulness.json")
            attn("faithfulness", "--model", run, "--csv", val, "--rows", str(a.faithfulness_rows), "--json", faith, "--threads", a.threads)
            with open(faith) as f:
                r["faithfulness"] = faithfulness_summary(json.load(f))
            per_seed.append(r)
        summary = {k: round(mean([r[k] for r in per_seed]), 4) for k in ("train_seconds", "accuracy", "macro_f1", "auroc_ovo")}
        for name in sets:
            summary[name] = {meth: {x: round(mean([r[name][meth][x] for r in per_seed]), 4) for x in ("iou_f1", "token_f1", "auprc")}
                             for meth in per_seed[0][name]}
        out["runs"][f"lambda={lam}"] = {"mean": summary, "seeds": per_seed}
        print(json.dumps({f"lambda={lam}": summary}, indent=1), flush=True)
    write_result(a.out, out)


if __name__ == "__main__":
    main()
