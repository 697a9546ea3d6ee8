#!/usr/bin/env python3
"""The attacks of run_attacks.py on a corpus nothing in attn was designed or tuned on (issue 59):
Davidson et al. 2017's tweets (bench/quality/run_davidson.py's split: index % 5 != 0 trained on,
index % 5 == 0 attacked). `--deobfuscate`'s steps were written while reading attacked HateXplain
posts; this is their hold-out. Models: no flags but the columns, `--deobfuscate`, and `--deobfuscate
--misspell 0.3`. Per model: the clean macro-F1 and macro one-vs-one AUROC, and `attn robustness`
with every perturbation at 30% on every word of 4+ letters (global) and on each tweet's words the
model's attention ranks highest (salient): the drop of the AUROC per edit, and the report's seconds.

usage: python3 bench/quality/run_attacks_davidson.py [--corpus FILE] [--threads 2] [--models default,...] [--out F]
Exits 77 (skipped) when the corpus is missing.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, arguments, attn, timed, workdir, write_result  # noqa: E402
from run_davidson import write_split  # noqa: E402  (beside this script: its split)

MODELS = {"default": [], "deobfuscate": ["--deobfuscate"], "deobfuscate_misspell_0.3": ["--deobfuscate", "--misspell", "0.3"]}
TARGETS = {"global": ["--targets", "global"], "salient": ["--targets", "salient", "--salient-method", "attention"]}


def main():
    a = arguments(__file__, "attacks_davidson.json", __doc__.split("\n")[0],
                  corpus=os.path.join(REALDATA, "davidson_hate_offensive", "labeled_data.csv"), threads="2",
                  models=",".join(MODELS)).parse_args()
    if not os.path.exists(a.corpus):
        print(f"SKIP: no Davidson corpus at {a.corpus}")
        sys.exit(77)
    work = workdir("attacks-davidson")
    _, split = write_split(a.corpus, work)
    result = {"corpus": "Davidson et al. 2017 (labeled_data.csv): rows with index % 5 != 0 -> attacks on rows with index % 5 == 0",
              "rows": {k: len(v) for k, v in split.items()}, "rate": 0.3, "models": {}}
    if os.path.exists(a.out):
        with open(a.out) as f:
            result["models"] = json.load(f).get("models", {})
    for name in a.models.split(","):
        run = os.path.join(work, name)
        attn("train", "--csv", os.path.join(work, "train.csv"), "--text-column", "tweet", "--label-column", "class", "--threads",
             a.threads, "--out", run, *MODELS[name])
        model = {"train_flags": MODELS[name], "clean": {}, "targets": {}}
        for target, flags in TARGETS.items():
            out = os.path.join(work, f"{name}-{target}.json")
            seconds, _ = timed(attn, "robustness", "--model", run, "--csv", os.path.join(work, "test.csv"), "--rates", "0.3",
                               "--threads", a.threads, *flags, "--json", out)
            with open(out) as f:
                report = json.load(f)
            model["clean"] = {k: report["clean"][k] for k in ("macro_f1", "ovo_auc")}  # (the same for every target)
            drops = {p["name"]: round(p["drop"]["ovo_auc"], 4) for p in report["perturbations"]}
            model["targets"][target] = {"seconds": round(seconds, 1), "ovo_auc_drop": drops, "worst": max(drops.values())}
        result["models"][name] = model
    write_result(a.out, result, show=["models"])


if __name__ == "__main__":
    main()
