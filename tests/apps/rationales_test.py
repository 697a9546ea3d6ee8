#!/usr/bin/env python3
"""Attention trained on human rationales end to end, on generated posts where a decoy word ("zz") ends
every toxic post and the toxic word people marked varies: trained without rationales the attention
settles on the decoy; with `attn train --rationales` (ERASER's annotations, or a Toxic Spans CSV) it
finds the marked words, which `attn plausibility` measures on posts it never trained on. Also: weight 0
trains exactly as no rationales; --resume, --nproc 2, --subwords and the transformer and hierarchical
models keep the supervision; the flags' misuse is refused.

usage: rationales_test.py ATTN WORK_DIR
"""
import csv
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import NICE_WORDS, check, finish, workspace  # noqa: E402

attn, path = workspace()

NICE = NICE_WORDS
BAD = ["vermin", "subhuman", "parasites", "stupid", "idiot", "moron", "scum", "filth", "trash", "pig", "rat", "creep", "loser",
       "clown", "fool", "jerk", "dork", "dunce", "brute", "snake"]


def post(i):
    """(id, text, toxic, the marked word's position or None): a toxic post has one of BAD somewhere and
    ends with the decoy; a few other posts end with it too."""
    rng = random.Random(i)
    words = [rng.choice(NICE) for _ in range(4 + i % 7)]
    if i % 2 == 0:
        at = rng.randrange(len(words) + 1)
        words.insert(at, rng.choice(BAD))
        return f"p{i}", " ".join(words + ["zz"]), 1, at
    return f"p{i}", " ".join(words + (["zz"] if rng.random() < 0.15 else [])), 0, None


def write_rationales(rows, stem):
    """ERASER's docs + annotations (stem.jsonl, stem_docs.jsonl) and a Toxic Spans CSV (stem.csv) of the toxic `rows`."""
    with open(path(stem + "_docs.jsonl"), "w") as docs, open(path(stem + ".jsonl"), "w") as ann, \
            open(path(stem + ".csv"), "w", newline="") as spans:
        sw = csv.writer(spans)
        sw.writerow(["spans", "text"])
        for i in rows:
            pid, text, toxic, at = post(i)
            if at is None:
                continue
            words = text.split(" ")
            docs.write(json.dumps({"docid": pid, "document": text}) + "\n")
            ann.write(json.dumps({"annotation_id": pid, "classification": "toxic",
                                  "evidences": [[{"docid": pid, "start_token": at, "end_token": at + 1}]]}) + "\n")
            first = len(" ".join(words[:at])) + (1 if at else 0)
            sw.writerow([json.dumps(list(range(first, first + len(words[at])))), text])


with open(path("train.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "comment_text", "toxic"])
    for i in range(2400):
        w.writerow(post(i)[:3])
write_rationales(range(1200), "train_rationales")  # people marked half of the training posts' words
write_rationales(range(2400, 2800), "test_rationales")

small = ["--labels", "toxic", "--maxlen", "20", "--epochs", "4", "--batch-size", "32", "--threads", "2"]
BILSTM = ["--set", "embed_dim=16", "--set", "lstm_units=8"]
ERASER = ["--rationales", path("train_rationales.jsonl"), "--rationale-docs", path("train_rationales_docs.jsonl")]


def train(name, *flags, model=BILSTM):
    attn("train", "--csv", path("train.csv"), *model, *small, *flags, "--out", path(name))
    return path(name)


def plausibility(run, method="attention"):
    """`attn plausibility` of `run` on the test posts' rationales: the method's figures."""
    out = path(os.path.basename(run) + "_plausibility.json")
    attn("plausibility", "--model", run, "--rationales", path("test_rationales.jsonl"), "--docs", path("test_rationales_docs.jsonl"),
         "--methods", method, "--top-k", "1", "--json", out)
    return json.load(open(out))["methods"][method]


def metrics(run):
    return [json.loads(line) for line in open(os.path.join(run, "metrics.jsonl"))]


def losses(run):
    return [(e["loss"], e["val_loss"]) for e in metrics(run)]


plain = plausibility(train("plain"))
supervised = plausibility(train("supervised", *ERASER))
check(supervised["auprc"] >= 0.9 and supervised["token_f1"] >= 0.9,
      f"with --rationales the attention's top word is the marked one on unseen posts ({supervised})")
check(supervised["auprc"] >= plain["auprc"] + 0.2, f"without them it is far less so (the decoy): {plain['auprc']:.3f} vs {supervised['auprc']:.3f}")
check(metrics(path("supervised"))[-1]["val_mean_auc"] >= 0.99, "and the classification still holds")
report = json.load(open(path("supervised/data/prepare.json")))["rationales"]
check(report["rows"] == 600 and report["rows_trained"] == 600 and report["rationales_unused"] == 0,
      f"prepare.json counts the rows trained on rationales ({report})")
config = json.load(open(path("supervised/config.json")))["data"]
check(config["rationale_weight"] == 1 and config["rationales"].endswith("train_rationales.jsonl"), "config.json records them")

# The Toxic Spans CSV of the same words trains the same attention.
spans = plausibility(train("spans", "--rationales", path("train_rationales.csv"), "--rationale-weight", "1"))
check(spans["auprc"] >= 0.9, f"--rationales from a Toxic Spans CSV ({spans})")

# Weight 0: the term is the only change, so the run is the plain one.
train("weight0", *ERASER, "--rationale-weight", "0")
check(losses(path("weight0")) == losses(path("plain")), "--rationale-weight 0 trains exactly as no rationales")

# --resume keeps the supervision: 1 epoch, then resumed to 4, against 4 at once.
attn("train", "--csv", path("train.csv"), *BILSTM, *small[:small.index("--epochs")], "--epochs", "1",
     *small[small.index("--epochs") + 2:], *ERASER, "--out", path("resumed"))
attn("train", "--resume", path("resumed"), "--epochs", "4")
check(losses(path("resumed")) == losses(path("supervised")), f"--resume with rationales: the same epochs ({losses(path('resumed'))})")

# Two data-parallel workers: each marks its rows alike.
nproc = plausibility(train("nproc", *ERASER, "--nproc", "2"))
check(nproc["auprc"] >= 0.9, f"--nproc 2 with rationales ({nproc})")

# Subwords, and the other attention text models.
check(plausibility(train("subwords", *ERASER, "--subwords"))["auprc"] >= 0.9, "--subwords with rationales")
for model, sets in (("transformer-classifier", ["--set", "d_model=16", "--set", "heads=2", "--set", "layers=1", "--set", "feedforward=32"]),
                    ("hierarchical-attention", ["--set", "embed_dim=16", "--set", "gru_units=8"])):
    flags = ["--model", model]
    base = plausibility(train(model + "-plain", model=flags + sets))
    sup = plausibility(train(model, *ERASER, "--rationale-weight", "3", model=flags + sets))
    check(sup["auprc"] >= 0.8 and sup["auprc"] > base["auprc"], f"{model}: supervised {sup['auprc']:.3f}, plain {base['auprc']:.3f}")

# Misuse.
bad = attn("train", "--csv", path("train.csv"), *small, "--rationale-weight", "2", "--out", path("bad"), ok=False)
check(bad.returncode == 2 and "--rationale-weight applies with --rationales" in bad.stderr, f"weight alone: a usage error ({bad.stderr.strip()})")
bad = attn("train", "--csv", path("train.csv"), *small, "--rationales", path("missing.jsonl"), "--out", path("bad"), ok=False)
check(bad.returncode == 1 and "missing.jsonl: cannot open" in bad.stderr, f"a missing file is named ({bad.stderr.strip()})")
bad = attn("train", "--csv", path("train.csv"), *small, *ERASER, "--rationale-weight", "x", "--out", path("bad"), ok=False)
check(bad.returncode == 2 and "--rationale-weight: 'x'" in bad.stderr, f"a weight that is no number ({bad.stderr.strip()})")
check(not os.path.exists(path("bad/model.pt")), "nothing trained by a refused run")
finish()
