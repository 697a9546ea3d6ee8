#!/usr/bin/env python3
"""`attn aggregate` speed (bench/importance/results/aggregate.json). The per-label methods run on the rows the model
decides for some label, so the workloads use a model that learnt its labels (bilstm-attention at the
seed's sizes trained on `attn datagen toxic` comments: it decides about 1 comment in 8) and each
figure says how many rows each label had:
  - --rows (100,000) comments with attention and grad-input (target: <= 5 min on 2 cores), and as
    many Jigsaw-length comments with the main job's one-epoch model (long rows; it decides almost none),
  - --ig-rows (10,000) comments with integrated gradients, 50 steps (target: <= 10 min),
and its Python peer (bench/importance/python_aggregate.py: torch.jit.load + autograd, batched as Captum users
batch, the same two passes) does the attention + grad-input job on --peer-rows rows (5,000, 20,000
and the issue's 100,000), which attn also does alone: the ratio of their whole-process times
(target >= 10x), on both kinds of comment, their top words compared (Jaccard of the top 10).

usage: python3 bench/importance/run_aggregate_bench.py [--rows 100000] [--ig-rows 10000] [--peer-rows 5000,20000,100000] [--threads 2] [--work DIR]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import BIN, PYTHON, attn, jigsaw_model, result_path, timed, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus(work, rows, seed):
    path = os.path.join(work, f"comments-{rows}-{seed}.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), path, str(rows), str(seed)], check=True)
    return path


def label_rows(path):
    """Per label, the rows the model decided for it (what the per-label methods were run on)."""
    j = json.load(open(path))
    return {label: g["rows"] for label, g in next(iter(j["methods"].values())).items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--ig-rows", type=int, default=10000)
    ap.add_argument("--peer-rows", default="5000,20000,100000")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--out", default=result_path(__file__, "aggregate.json"))
    ap.add_argument("--work", help="a work directory of an earlier run: its trained models are reused")
    a = ap.parse_args()
    work = a.work or workdir("aggregate")
    out = {"threads": int(a.threads),
           "models": {"learnt": "bilstm-attention, the seed's sizes, trained on 20,000 `attn datagen toxic` comments (batches of 64): "
                                "it decides a label for about 1 comment in 8, as Jigsaw's labels are",
                      "jigsaw_length": "bilstm-attention, the seed's sizes, one epoch on 100,000 Jigsaw-profile comments (unlearnable "
                                       "labels: it decides almost no row)"}}
    # The model that learnt its labels: the speed workloads, and the peer's top words to compare.
    learnt_corpus = os.path.join(work, "toxic-train.csv")
    attn("datagen", "toxic", "--rows", "20000", "--seed", "3", "--out", learnt_corpus)
    learnt = os.path.join(work, "toxic-run")
    if not os.path.exists(os.path.join(learnt, "model.pt")):
        # (batches of 64: the seed's 3 epochs of 512 rows are 120 steps, too few for 20,000 rows to learn from)
        attn("train", "--csv", learnt_corpus, "--batch-size", "64", "--threads", a.threads, "--out", learnt)
    jigsaw = jigsaw_model(work, rows=100000, threads=int(a.threads))

    def toxic_rows(rows, seed):
        path = os.path.join(work, f"toxic-{rows}-{seed}.csv")
        attn("datagen", "toxic", "--rows", str(rows), "--seed", str(seed), "--out", path)
        return path

    def aggregate(name, model, csv, *flags):
        result = os.path.join(work, name + ".json")
        seconds, _ = timed(attn, "aggregate", "--model", model, "--csv", csv, *flags, "--json", result, "--threads", a.threads)
        return seconds, label_rows(result)

    rows = toxic_rows(a.rows, 5)
    seconds, decided = aggregate("big", learnt, rows, "--methods", "attention,grad-input")
    out["attention_grad_input"] = {"model": "learnt", "rows": a.rows, "seconds": round(seconds, 1), "rows_per_second": round(a.rows / seconds),
                                   "label_rows": decided, "target_seconds": 300}
    seconds, decided = aggregate("big_jigsaw", jigsaw, corpus(work, a.rows, 7), "--methods", "attention,grad-input")
    out["attention_grad_input_jigsaw_length"] = {"model": "jigsaw_length", "rows": a.rows, "seconds": round(seconds, 1),
                                                 "rows_per_second": round(a.rows / seconds), "label_rows": decided}
    seconds, decided = aggregate("ig", learnt, toxic_rows(a.ig_rows, 8), "--methods", "integrated-gradients", "--steps", "50")
    out["integrated_gradients_50"] = {"model": "learnt", "rows": a.ig_rows, "seconds": round(seconds, 1),
                                      "rows_per_second": round(a.ig_rows / seconds, 1), "label_rows": decided, "target_seconds": 600}

    # Against the Python peer, the same job as whole processes (both explain every row's prediction
    # with its attention, then grad-input of the rows decided for some label).
    out["peer"] = {"what": "the same job (attention + grad-input of the decided rows, top 20 words seen 5+ times) as whole processes"}
    for n in (int(x) for x in a.peer_rows.split(",")):
        for name, run, csv in (("jigsaw_length", jigsaw, corpus(work, n, 9)), ("datagen_toxic", learnt, toxic_rows(n, 4))):
            ours, theirs = os.path.join(work, f"{name}-{n}-ours.json"), os.path.join(work, f"{name}-{n}-peer.json")
            attn_seconds, _ = timed(attn, "aggregate", "--model", run, "--csv", csv, "--methods", "attention,grad-input", "--json", ours,
                                    "--threads", a.threads)
            peer_seconds, _ = timed(subprocess.run, [PYTHON, os.path.join(HERE, "python_aggregate.py"), os.path.join(run, "model.pt"), csv,
                                                     str(n), a.threads, theirs], check=True)
            ours_j, theirs_j = json.load(open(ours)), json.load(open(theirs))
            agree = {}
            for method in ("attention", "grad-input"):
                for label, figures in ours_j["methods"][method].items():
                    mine = [w["word"] for w in figures["words"][:10]]
                    peer = [w[0] for w in theirs_j["methods"][method][label][:10]]
                    if mine or peer:
                        agree[f"{method}/{label}"] = round(len(set(mine) & set(peer)) / len(set(mine) | set(peer)), 3)
            out["peer"][f"{name}_{n}"] = {"rows": n, "attn_seconds": round(attn_seconds, 2), "peer_seconds": round(peer_seconds, 2),
                                          "ratio": round(peer_seconds / attn_seconds, 1), "label_rows": label_rows(ours),
                                          "top10_jaccard": agree}
    write_result(a.out, out)


if __name__ == "__main__":
    main()
