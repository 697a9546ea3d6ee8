#!/usr/bin/env python3
"""What `attn train --skeletons` buys and costs on real posts (bench/quality/results/skeletons.json).
HateXplain's official train split -> its val split (never trained or tuned on), one class per row,
no flags but the columns and those named, for seeds 1..N:
  default                 the recipe (subwords, a seed ensemble of 3)
  skeletons               the same with --skeletons (each word also its consonant skeleton's n-grams)
  deobfuscate             --deobfuscate (the normalising reader, with the vocabulary once fitted)
  deobfuscate_misspell    --deobfuscate --misspell 0.3 (the defence against the evasions it knows)
  deobfuscate_misspell_skeletons   that with --skeletons
Per run: clean macro-F1 and macro one-vs-one AUROC, the training's seconds and its median epoch, and
`attn robustness` at 30% on every word of 4+ letters (global) and on each post's words the model's
attention ranks highest (salient) for six edits: the space and mask that --misspell draws, and four
it never draws (spaced letters, dropped vowels, a suffix; leetspeak for the comparison); the drop of
the AUROC per edit. Then the mean and range over the seeds. --variants runs only those (the others'
figures in --out are kept).

usage: python3 bench/quality/run_skeletons.py [--corpus DIR] [--seeds 3] [--threads 2] [--variants a,b] [--out F]
Exits 77 (skipped) when the corpus is missing.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, arguments, attn, hatexplain_work, timed, write_result  # noqa: E402

VARIANTS = {"default": [], "skeletons": ["--skeletons"], "deobfuscate": ["--deobfuscate"],
            "deobfuscate_misspell": ["--deobfuscate", "--misspell", "0.3"],
            "deobfuscate_misspell_skeletons": ["--deobfuscate", "--misspell", "0.3", "--skeletons"]}
EDITS = "space,mask,spaced,vowels,suffix,leet"
TARGETS = {"global": ["--targets", "global"], "salient": ["--targets", "salient", "--salient-method", "attention"]}


def summary(runs):
    """Mean and range over the seeds of every figure the runs share."""
    def stats(values):
        return {"mean": round(sum(values) / len(values), 4), "min": round(min(values), 4), "max": round(max(values), 4)}
    out = {"seeds": len(runs), "clean": {k: stats([r["clean"][k] for r in runs]) for k in ("macro_f1", "ovo_auc")},
           "epoch_seconds": stats([r["epoch_seconds"] for r in runs])}
    for t in TARGETS:
        out[t] = {p: stats([r[t][p] for r in runs]) for p in runs[0][t]}
    return out


def main():
    a = arguments(__file__, "skeletons.json", __doc__.split("\n")[0], corpus=os.path.join(REALDATA, "hatexplain"), seeds=3, threads="2",
                  variants=",".join(VARIANTS)).parse_args()
    work, _ = hatexplain_work(a.corpus, "skeletons")
    result = {"corpus": "HateXplain: official train split -> its val split", "edits": EDITS.split(","), "rate": 0.3, "variants": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            result["variants"] = json.load(f).get("variants", {})
    for name in a.variants.split(","):
        runs = []
        for seed in range(1, a.seeds + 1):
            run = os.path.join(work, f"{name}-{seed}")
            seconds, _ = timed(attn, "train", "--csv", os.path.join(work, "train.jsonl"), "--text-column", "text", "--id-column",
                               "post_id", "--label-column", "label", "--threads", a.threads, "--seed", str(seed), "--out", run,
                               *VARIANTS[name])
            with open(os.path.join(run, "metrics.jsonl")) as f:
                epochs = sorted(json.loads(line)["seconds"] for line in f if line.strip())
            r = {"seed": seed, "train_seconds": round(seconds, 1), "epoch_seconds": round(epochs[len(epochs) // 2], 2)}
            for target, flags in TARGETS.items():
                out = os.path.join(work, f"{name}-{seed}-{target}.json")
                attn("robustness", "--model", run, "--csv", os.path.join(work, "val.jsonl"), "--rates", "0.3", "--perturbations", EDITS,
                     "--threads", a.threads, *flags, "--json", out)
                with open(out) as f:
                    report = json.load(f)
                r["clean"] = {k: report["clean"][k] for k in ("macro_f1", "ovo_auc")}
                r[target] = {p["name"]: round(p["drop"]["ovo_auc"], 4) for p in report["perturbations"]}
            runs.append(r)
        result["variants"][name] = {"train_flags": VARIANTS[name], "runs": runs, "summary": summary(runs)}
    write_result(a.out, result, show=["variants"])


if __name__ == "__main__":
    main()
