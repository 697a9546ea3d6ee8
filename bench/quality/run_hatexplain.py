#!/usr/bin/env python3
"""attn on HateXplain (Mathew et al., AAAI 2021): 3-class hate speech / offensive / normal on the
official train split, judged on the official val split, as a new user runs it: `attn train` naming
the columns only (the task's recipe for one class per row), then `attn evaluate` on val. Reports
accuracy, macro-F1, HateXplain's AUROC (macro one-vs-one), the binary toxic AUROC (hate speech or
offensive against normal, p = 1 - p(normal)) and the training time, beside the paper's test figures.

The corpus is not part of attn (../shared/realdata/hatexplain on our machines): the script joins
eraser/docs.jsonl (each post's tokens) with 092-HateXplain.csv (each post's majority class) by post
id and writes train/val JSON Lines into a temporary directory, never into the repository.

usage: python3 bench/quality/run_hatexplain.py [--corpus DIR] [--seeds 1] [--model bilstm-attention] [--robustness]
                                               [--out bench/quality/results/hatexplain.json] [-- EXTRA TRAIN FLAGS]
--robustness adds `attn robustness` on val: each perturbation at 30% of the 300 words most indicative
of the toxic classes in train (smoothed log-odds, 4+ letters, seen 10+ times).
Exits 77 (skipped) when the corpus is missing.
"""
import argparse
import csv
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, attn, hatexplain_work, result_path, roc_auc, timed, train_and_score, write_json  # noqa: E402

PUBLISHED = {  # HateXplain paper, Table 4 (test split): accuracy, macro-F1, AUROC
    "BiRNN-Attn (GloVe 840B)": [0.621, 0.614, 0.795],
    "BiRNN-HateXplain (GloVe 840B)": [0.629, 0.629, 0.805],
    "BERT-HateXplain": [0.698, 0.687, 0.851],
}


def ensemble_metrics(probs, truth):
    """The seeds' mean probabilities as one model: accuracy, macro-F1, one-vs-one AUROC (Hand & Till), toxic AUROC."""
    classes = ("hatespeech", "normal", "offensive")
    ids = sorted(probs)
    y = [classes.index(truth[i]) for i in ids]
    decided = [max(range(3), key=lambda k: probs[i][k]) for i in ids]
    f1s = []
    for k in range(3):
        tp = sum(d == k and t == k for d, t in zip(decided, y))
        fp = sum(d == k and t != k for d, t in zip(decided, y))
        fn = sum(d != k and t == k for d, t in zip(decided, y))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    pairs = []
    for a in range(3):
        for b in range(a + 1, 3):
            rows = [n for n, t in enumerate(y) if t in (a, b)]
            ab = roc_auc([probs[ids[n]][a] for n in rows], [y[n] == a for n in rows])
            ba = roc_auc([probs[ids[n]][b] for n in rows], [y[n] == b for n in rows])
            pairs.append((ab + ba) / 2)
    return {"accuracy": sum(d == t for d, t in zip(decided, y)) / len(y), "macro_f1": sum(f1s) / 3,
            "auroc_ovo": sum(pairs) / 3, "auroc_toxic": roc_auc([1 - probs[i][1] for i in ids], [t != 1 for t in y])}


def toxic_lexicon(train_jsonl, out_path, size=300, min_count=10):
    """The `size` words most indicative of hate speech or offensive posts in the training split: the
    highest smoothed log-odds of appearing in a toxic post rather than a normal one, among words of
    4 or more letters seen `min_count` times: the "toxic words" robustness perturbs."""
    import math
    import re
    toxic, normal = {}, {}
    n_toxic = n_normal = 0
    with open(train_jsonl, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            words = set(w.lower() for w in re.findall(r"[A-Za-z]{4,}", d["text"]))
            counts = normal if d["label"] == "normal" else toxic
            if d["label"] == "normal":
                n_normal += 1
            else:
                n_toxic += 1
            for w in words:
                counts[w] = counts.get(w, 0) + 1
    scored = []
    for w in set(toxic) | set(normal):
        t, n = toxic.get(w, 0), normal.get(w, 0)
        if t + n < min_count:
            continue
        scored.append((math.log((t + 1) / (n_toxic + 2)) - math.log((n + 1) / (n_normal + 2)), w))
    words = [w for _, w in sorted(scored, reverse=True)[:size]]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(words) + "\n")
    return words


def write_unlabelled(train_jsonl, realdata, out_path):
    """Unlabelled texts for `attn embed`, one per line: the train split's posts (never val's), and the
    other corpora's texts when present (Davidson's tweets, Toxic Spans' comments); their count by source."""
    counts = {}
    with open(out_path, "w") as out:
        def put(source, text):
            out.write(" ".join(text.split()) + "\n")
            counts[source] = counts.get(source, 0) + 1
        with open(train_jsonl) as f:
            for line in f:
                put("hatexplain_train", json.loads(line)["text"])
        davidson = os.path.join(realdata, "davidson_hate_offensive", "labeled_data.csv")
        if os.path.exists(davidson):
            with open(davidson, newline="") as f:
                for row in csv.DictReader(f):
                    put("davidson", row["tweet"])
        for name in ("tsd_train.csv", "tsd_trial.csv"):
            spans = os.path.join(realdata, "toxic_spans", "SemEval2021", name)
            if os.path.exists(spans):
                with open(spans, newline="") as f:
                    for row in csv.DictReader(f):
                        put("toxic_spans", row["text"])
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(REALDATA, "hatexplain"))
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--model", default="bilstm-attention")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--out", default=result_path(__file__, "hatexplain.json"))
    ap.add_argument("--robustness", action="store_true",
                    help="also `attn robustness` of each run on val: 30%% of the 300 most toxic words of train perturbed")
    ap.add_argument("--pretrain", action="store_true",
                    help="first `attn embed` (128 dimensions, subwords) on unlabelled text: HateXplain's train split, Davidson's "
                         "tweets and Toxic Spans' comments (those of them present), then train with --embeddings")
    ap.add_argument("extra", nargs="*", help="more `attn train` flags (after --)")
    a = ap.parse_args()
    work, counts = hatexplain_work(a.corpus, "hatexplain")
    if a.pretrain:
        text = os.path.join(work, "unlabelled.txt")
        lines = write_unlabelled(os.path.join(work, "train.jsonl"), os.path.dirname(os.path.abspath(a.corpus)), text)
        seconds, _ = timed(attn, "embed", "--txt", text, "--dim", "128", "--out", os.path.join(work, "vectors.vec"), "--threads", a.threads)
        a.extra += ["--embeddings", os.path.join(work, "vectors.vec")]
        pretrained = {"texts": lines, "embed_seconds": round(seconds, 1),
                      "command": "attn embed --txt unlabelled.txt --dim 128 --out vectors.vec"}
    runs, ensemble, truth = [], {}, {}
    for seed in range(1, a.seeds + 1):
        run = os.path.join(work, f"run{seed}")
        seconds, m, predictions = train_and_score(
            run, os.path.join(work, "train.jsonl"), os.path.join(work, "val.jsonl"),
            ["--model", a.model, "--text-column", "text", "--id-column", "post_id", "--label-column", "label", "--seed", str(seed),
             *a.extra], a.threads)
        with open(os.path.join(work, "val.jsonl")) as f:
            for line in f:
                d = json.loads(line)
                truth[d["post_id"]] = d["label"]
        scores, toxic = [], []
        for row in predictions:
            scores.append(1 - float(row["normal"]))
            toxic.append(truth[row["id"]] != "normal")
            probs = ensemble.setdefault(row["id"], [0.0, 0.0, 0.0])
            for k, c in enumerate(("hatespeech", "normal", "offensive")):
                probs[k] += float(row[c]) / a.seeds
        with open(os.path.join(run, "metrics.jsonl")) as f:
            epochs = [json.loads(line) for line in f]
        best = max((e for e in epochs if e.get("best")), key=lambda e: e["epoch"], default=epochs[-1])
        runs.append({"seed": seed, "train_seconds": round(seconds, 1), "epochs_run": len(epochs), "best_epoch": best["epoch"],
                     "accuracy": m["accuracy"], "macro_f1": m["macro_f1"], "auroc_ovo": m["ovo_auc"],
                     "auroc_toxic": roc_auc(scores, toxic), "f1": m["f1"],
                     "epoch_seconds": round(sum(e["seconds"] for e in epochs) / len(epochs), 2)})
        if a.robustness:
            lexicon = os.path.join(work, "toxic_words.txt")
            if not os.path.exists(lexicon):
                toxic_lexicon(os.path.join(work, "train.jsonl"), lexicon)
            out = os.path.join(work, f"robustness{seed}.json")
            attn("robustness", "--model", run, "--csv", os.path.join(work, "val.jsonl"), "--words", lexicon, "--rate", "0.3",
                 "--json", out, "--threads", a.threads)
            with open(out) as f:
                rob = json.load(f)
            runs[-1]["robustness"] = {p["name"]: {"words_changed": p["words_changed"], "auroc_drop": p["drop"]["ovo_auc"],
                                                  "macro_f1_drop": p["drop"]["macro_f1"], "flipped": p["flipped"]}
                                      for p in rob["perturbations"]}
        print(json.dumps(runs[-1]), file=sys.stderr)
    mean = {k: sum(r[k] for r in runs) / len(runs) for k in ("accuracy", "macro_f1", "auroc_ovo", "auroc_toxic", "train_seconds", "epoch_seconds")}
    if a.robustness:
        mean["robustness"] = {name: {k: sum(r["robustness"][name][k] for r in runs) / len(runs)
                                     for k in ("auroc_drop", "macro_f1_drop", "flipped")} for name in runs[0]["robustness"]}
    if a.seeds > 1:
        mean["ensemble_of_seeds"] = ensemble_metrics(ensemble, truth)
    result = {"corpus": "HateXplain (Mathew et al. 2021): official train split -> official val split",
              "rows": counts, "model": a.model, "extra_flags": a.extra,
              "command": "attn train --csv train.jsonl --text-column text --id-column post_id --label-column label " + " ".join(a.extra),
              "runs": runs, "mean": mean, "published_test_accuracy_macro_f1_auroc": PUBLISHED}
    if a.pretrain:
        result["pretrained_vectors"] = pretrained
    write_json(a.out, result)
    print(json.dumps(result["mean"], indent=2))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
