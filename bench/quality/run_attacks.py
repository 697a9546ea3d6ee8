#!/usr/bin/env python3
"""Attacks a HateXplain model never trained on (issue 59): `attn robustness` on the official val split
(never trained or tuned on) with every perturbation at 10, 30 and 50% of
  global   every word of 4+ letters,
  salient  each post's words the model itself ranks highest for its decision (attention, and
           leave-one-out: an attacker who reads its explanations spends the budget there),
  marked   the words HateXplain's annotators marked as the reason (ERASER's val rationales),
for a model trained with no flags but the columns, one trained with `--misspell 0.3` (which draws the
first six edits only, so the other six are unseen), one with `--deobfuscate` (the normalising reader),
one with both, and those two with `--skeletons` (each word also its consonant skeleton's n-grams). Reports per model, targets, perturbation and
rate the drops of macro one-vs-one AUROC and macro-F1 and the share of decisions flipped, and the
seconds each report took.

usage: python3 bench/quality/run_attacks.py [--corpus DIR] [--runs DIR] [--models default,...] [--out bench/quality/results/attacks.json]
--runs keeps (and reuses) the trained runs there; --models attacks only those (the others' figures in
--out are kept). Exits 77 (skipped) when the corpus is missing.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, attn, result_path, timed, workdir, write_hatexplain_splits, write_result  # noqa: E402

MODELS = {"default": [], "misspell_0.3": ["--misspell", "0.3"], "deobfuscate": ["--deobfuscate"],
          "deobfuscate_misspell_0.3": ["--deobfuscate", "--misspell", "0.3"], "skeletons": ["--skeletons"],
          "deobfuscate_misspell_0.3_skeletons": ["--deobfuscate", "--misspell", "0.3", "--skeletons"]}
TARGETS = {
    "global": ["--targets", "global"],
    "salient_attention": ["--targets", "salient", "--salient-method", "attention"],
    "salient_leave_one_out": ["--targets", "salient", "--salient-method", "leave-one-out"],
    "marked": ["--targets", "marked"],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=os.path.join(REALDATA, "hatexplain"))
    ap.add_argument("--runs", default="", help="a directory to keep (and reuse) the trained runs in")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--models", default=",".join(MODELS), help="which models to (train and) attack; the others' figures in --out are kept")
    ap.add_argument("--out", default=result_path(__file__, "attacks.json"))
    a = ap.parse_args()
    if not os.path.isdir(a.corpus):
        print(f"skipped: no corpus at {a.corpus}", file=sys.stderr)
        sys.exit(77)
    work = workdir("attacks")
    runs = a.runs or work
    os.makedirs(runs, exist_ok=True)
    write_hatexplain_splits(a.corpus, work)
    val = os.path.join(work, "val.jsonl")
    rationales = ["--rationales", os.path.join(a.corpus, "eraser", "val_split3.json"),
                  "--rationale-docs", os.path.join(a.corpus, "eraser", "docs.jsonl")]
    result = {"corpus": "HateXplain: official train split -> attacks on the official val split", "models": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            result["models"] = json.load(f).get("models", {})
    for name in a.models.split(","):
        flags = MODELS[name]
        run = os.path.join(runs, name)
        if not os.path.exists(os.path.join(run, "model.pt")):
            attn("train", "--csv", os.path.join(work, "train.jsonl"), "--text-column", "text", "--id-column", "post_id",
                 "--label-column", "label", "--threads", a.threads, "--out", run, *flags)
        model = {"train_flags": flags, "targets": {}}
        for targets, tflags in TARGETS.items():
            out = os.path.join(work, f"{name}-{targets}.json")
            seconds, _ = timed(attn, "robustness", "--model", run, "--csv", val, "--rates", "0.1,0.3,0.5", "--threads", a.threads,
                               *tflags, *(rationales if targets == "marked" else []), "--json", out)
            with open(out) as f:
                r = json.load(f)
            model["clean"] = r["clean"]
            per = {}
            for p in r["perturbations"]:
                per.setdefault(p["name"], {})[str(p["rate"])] = {
                    "ovo_auc_drop": p["drop"].get("ovo_auc"), "macro_f1_drop": p["drop"].get("macro_f1"),
                    "flipped": p["flipped"], "words_changed": p["words_changed"]}
            model["targets"][targets] = {"seconds": round(seconds, 1), "perturbations": per,
                                         "worst_ovo_auc_drop_at_0.3": max(v["0.3"]["ovo_auc_drop"] for v in per.values())}
        result["models"][name] = model
    write_result(a.out, result, show=["models"])


if __name__ == "__main__":
    main()
