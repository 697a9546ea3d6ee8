#!/usr/bin/env python3
"""Jigsaw 2019's identity-bias metric on real posts (bench/results/bias_hatexplain.json): no Civil
Comments file is reachable here, so HateXplain's posts stand in. A binary model (bilstm-attention
--subwords: toxic = hate speech or offensive) trains on the train split; the val split's posts are
tagged with the nine scored identities by a term list (a post is a member when one of its words is a
term: 1.0, else 0.0) and `attn evaluate` reports the metric. Each post's identity comes from its
words, not from raters as in 2019: the figures say how the model treats posts naming a group.

usage: python3 bench/run_bias_hatexplain.py [--realdata DIR] [--seed 1] [--threads 2]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import RESULTS, ROOT, attn, timed, workdir, write_result  # noqa: E402
import run_hatexplain  # noqa: E402

TERMS = {  # lower-case words of HateXplain's tokens (docs.jsonl) that name each scored identity
    "male": ["man", "men", "boy", "boys", "guy", "guys", "male", "males"],
    "female": ["woman", "women", "girl", "girls", "female", "females", "lady", "ladies"],
    "homosexual_gay_or_lesbian": ["gay", "gays", "lesbian", "lesbians", "homosexual", "homosexuals", "queer", "queers"],
    "christian": ["christian", "christians", "christianity", "catholic", "catholics"],
    "jewish": ["jew", "jews", "jewish", "judaism"],
    "muslim": ["muslim", "muslims", "islam", "islamic", "moslem", "moslems"],
    "black": ["black", "blacks", "african", "africans"],
    "white": ["white", "whites", "caucasian", "caucasians"],
    "psychiatric_or_mental_illness": ["mental", "mentally", "insane", "psycho", "psychos", "schizo", "autistic"],
}


def tagged(jsonl, out_path):
    """The posts with a 0/1 `toxic` column and one column per identity; members per identity."""
    members = {k: 0 for k in TERMS}
    with open(jsonl) as f, open(out_path, "w") as out:
        for line in f:
            post = json.loads(line)
            words = set(post["text"].lower().split(" "))
            row = {"post_id": post["post_id"], "text": post["text"], "toxic": "0" if post["label"] == "normal" else "1"}
            for identity, terms in TERMS.items():
                hit = any(t in words for t in terms)
                row[identity] = "1.0" if hit else "0.0"
                members[identity] += hit
            out.write(json.dumps(row) + "\n")
    return members


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--realdata", default=os.path.join(ROOT, "..", "shared", "realdata"))
    ap.add_argument("--seed", default="1")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--out", default=os.path.join(RESULTS, "bias_hatexplain.json"))
    a = ap.parse_args()
    hatexplain = os.path.join(a.realdata, "hatexplain")
    if not os.path.exists(os.path.join(hatexplain, "eraser", "docs.jsonl")):
        print(f"SKIP: no HateXplain corpus at {hatexplain}")
        sys.exit(77)
    work = workdir("bias")
    run_hatexplain.write_splits(hatexplain, work)
    train, val = os.path.join(work, "train_tagged.jsonl"), os.path.join(work, "val_tagged.jsonl")
    tagged(os.path.join(work, "train.jsonl"), train)
    members = tagged(os.path.join(work, "val.jsonl"), val)
    run = os.path.join(work, "run")
    seconds, _ = timed(attn, "train", "--csv", train, "--text-column", "text", "--id-column", "post_id", "--labels", "toxic", "--subwords",
                       "--batch-size", "64", "--epochs", "20", "--early-stopping-patience", "2", "--seed", a.seed, "--threads", a.threads,
                       "--out", run)
    metrics = os.path.join(work, "metrics.json")
    attn("evaluate", "--model", run, "--csv", val, "--metrics", metrics, "--bias-html", os.path.join(work, "bias.html"), "--threads",
         a.threads)
    with open(metrics) as f:
        m = json.load(f)
    write_result(a.out, {"data": "HateXplain val posts, identities tagged by a term list (bench/run_bias_hatexplain.py)",
                         "model": "bilstm-attention --subwords, binary toxic (hate speech or offensive), HateXplain train split, "
                                  f"seed {a.seed}", "train_seconds": round(seconds, 1), "members": members, "bias": m["bias"]})


if __name__ == "__main__":
    main()
