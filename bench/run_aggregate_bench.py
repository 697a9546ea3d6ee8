#!/usr/bin/env python3
"""`attn aggregate` speed (bench/results/aggregate.json): the main job's model (bilstm-attention, the
seed's sizes, one epoch on Jigsaw-profile comments) ranks the words of
  - --rows (100,000) Jigsaw-length comments with attention and grad-input (target: <= 5 min on 2 cores),
  - --ig-rows (10,000) with integrated gradients, 50 steps (target: <= 10 min),
and its Python peer (bench/python_aggregate.py: torch.jit.load + autograd, batched as Captum users
batch) does the attention + grad-input job on --peer-rows rows, which attn also does alone: the ratio
of their whole-process times (target >= 10x), on Jigsaw-length comments and on `attn datagen toxic`
comments with a model that learnt them, where their top words are compared (Jaccard of the top 10).

usage: python3 bench/run_aggregate_bench.py [--rows 100000] [--ig-rows 10000] [--peer-rows 5000] [--threads 2] [--work DIR]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BIN, PYTHON, RESULTS, attn, jigsaw_model, timed, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus(work, rows, seed):
    path = os.path.join(work, f"comments-{rows}-{seed}.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), path, str(rows), str(seed)], check=True)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--ig-rows", type=int, default=10000)
    ap.add_argument("--peer-rows", type=int, default=5000)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--out", default=os.path.join(RESULTS, "aggregate.json"))
    ap.add_argument("--work", help="a work directory of an earlier run: its trained models are reused")
    a = ap.parse_args()
    work = a.work or workdir("aggregate")
    model = jigsaw_model(work, rows=100000, threads=int(a.threads))
    out = {"model": "bilstm-attention, the seed's sizes, one epoch on 100,000 Jigsaw-profile comments", "threads": int(a.threads)}

    big = corpus(work, a.rows, 7)
    seconds, _ = timed(attn, "aggregate", "--model", model, "--csv", big, "--methods", "attention,grad-input", "--json",
                       os.path.join(work, "big.json"), "--threads", a.threads)
    out["attention_grad_input"] = {"rows": a.rows, "seconds": round(seconds, 1), "rows_per_second": round(a.rows / seconds),
                                   "target_seconds": 300}
    ig = corpus(work, a.ig_rows, 8)
    seconds, _ = timed(attn, "aggregate", "--model", model, "--csv", ig, "--methods", "integrated-gradients", "--steps", "50", "--json",
                       os.path.join(work, "ig.json"), "--threads", a.threads)
    out["integrated_gradients_50"] = {"rows": a.ig_rows, "seconds": round(seconds, 1), "rows_per_second": round(a.ig_rows / seconds, 1),
                                      "target_seconds": 600}

    # Against the Python peer, the same job as whole processes: on Jigsaw-length comments (the speed
    # workload; that model, one epoch on unlearnable labels, decides few rows for any label), and on
    # `attn datagen toxic` comments with a model that learnt them (its top words to compare).
    out["peer"] = {"what": "the same job (attention + grad-input, every label, top 20 words seen 5+ times) as whole processes"}
    learnt_corpus, learnt_rows = os.path.join(work, "toxic-train.csv"), os.path.join(work, "toxic-rows.csv")
    attn("datagen", "toxic", "--rows", "20000", "--seed", "3", "--out", learnt_corpus)
    attn("datagen", "toxic", "--rows", str(a.peer_rows), "--seed", "4", "--out", learnt_rows)
    learnt = os.path.join(work, "toxic-run")
    if not os.path.exists(os.path.join(learnt, "model.pt")):
        # (batches of 64: the seed's 3 epochs of 512 rows are 120 steps, too few for 20,000 rows to learn from)
        attn("train", "--csv", learnt_corpus, "--batch-size", "64", "--threads", a.threads, "--out", learnt)
    for name, run, rows in (("jigsaw_length", model, corpus(work, a.peer_rows, 9)), ("datagen_toxic", learnt, learnt_rows)):
        ours, theirs = os.path.join(work, name + "-ours.json"), os.path.join(work, name + "-peer.json")
        attn_seconds, _ = timed(attn, "aggregate", "--model", run, "--csv", rows, "--methods", "attention,grad-input", "--json", ours,
                                "--threads", a.threads)
        peer_seconds, _ = timed(subprocess.run, [PYTHON, os.path.join(HERE, "python_aggregate.py"), os.path.join(run, "model.pt"), rows,
                                                 str(a.peer_rows), a.threads, theirs], check=True)
        ours_j, theirs_j = json.load(open(ours)), json.load(open(theirs))
        agree = {}
        for method in ("attention", "grad-input"):
            for label, figures in ours_j["methods"][method].items():
                mine = [w["word"] for w in figures["words"][:10]]
                peer = [w[0] for w in theirs_j["methods"][method][label][:10]]
                if mine or peer:
                    agree[f"{method}/{label}"] = round(len(set(mine) & set(peer)) / len(set(mine) | set(peer)), 3)
        out["peer"][name] = {"rows": a.peer_rows, "attn_seconds": round(attn_seconds, 2), "peer_seconds": round(peer_seconds, 2),
                             "ratio": round(peer_seconds / attn_seconds, 1), "top10_jaccard": agree}
    write_result(a.out, out)


if __name__ == "__main__":
    main()
