#!/usr/bin/env python3
"""Attention trained on HateXplain's own rationales (bench/quality/results/rationales_val_folds.json).

Our copy of HateXplain has rationales for its val split only, so they supervise by 2-fold
cross-fitting over val: val's posts are split in two (even and odd positions in the official order);
for each half, bilstm-attention (the recipe for one class per row) is trained on the train split
plus the *other* half's posts, with `--rationales` = the other half's toxic posts' rationales
(ERASER's format, the union of the annotators' spans) at each --lambdas value (0: the same rows, no
supervision), and judged on this half's posts, which it never saw. Every val post is judged once,
by a model that did not train on it; the figures are over all of val: classification (accuracy,
macro-F1, one-vs-one AUROC, from the two halves' predictions together), every method's plausibility
against the 1,141 toxic posts' rationales (from the rows' own figures, as ERASER averages them), the
marks' own figures (the rationale taken as scores: what agreeing with people exactly scores), the
faithfulness of the first half's model on --faithfulness-rows of its judged posts, and the training
seconds. The corpus is not part of attn: skips (exit 77) without it.

--targets runs every lambda > 0 with each --rationale-target (words: HateXplain's; spans: each marked
span the same share), keyed "lambda=L" for words and "lambda=L,target=spans". --toxic-spans adds
Toxic Spans' 7,939 train posts to every training file as "offensive" ones (first, so that the held-out
last fifth stays train posts), their marked words supervising beside the other half's rationales
(their text's white space runs taken as one space, so that ERASER's words, document.split(' '), are
its words; a word marked when any of its characters is, as attn reads a Toxic Spans CSV), keyed
",toxic_spans".

usage: python3 bench/quality/run_rationales_val_folds.py [--realdata DIR] [--lambdas 0,1,3] [--targets words] [--seeds 3] [--threads 2]
       [--toxic-spans] [--work DIR] [--out FILE]
"""
import argparse
import csv
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import REALDATA, attn, result_path, timed, workdir, write_hatexplain_splits, write_result  # noqa: E402
import run_hatexplain  # noqa: E402
from run_rationales import faithfulness_summary, mean  # noqa: E402

CLASSES = ("hatespeech", "normal", "offensive")


def write_folds(hatexplain, work):
    """Per half k: train_k.jsonl (the other half's posts, then the train split's, so that the held-out
    last fifth is train posts as in every other run), rationales_k.json (the other half's toxic posts
    with a marked span), judge_k.json (this half's annotations) and judge_k.jsonl (this half's posts)."""
    write_hatexplain_splits(hatexplain, work)
    with open(os.path.join(work, "val.jsonl"), encoding="utf-8") as f:
        val = [json.loads(line) for line in f]
    with open(os.path.join(hatexplain, "eraser", "val_split3.json"), encoding="utf-8") as f:
        annotations = {a["annotation_id"]: a for a in json.load(f)}
    with open(os.path.join(work, "train.jsonl"), encoding="utf-8") as f:
        train = f.read()
    halves = [val[0::2], val[1::2]]
    supervised = []
    for k, half in enumerate(halves):
        other = halves[1 - k]
        with open(os.path.join(work, f"train_{k}.jsonl"), "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in other) + train)
        marked = [annotations[p["post_id"]] for p in other if p["post_id"] in annotations
                  and annotations[p["post_id"]]["classification"] == "toxic" and any(annotations[p["post_id"]]["evidences"])]
        supervised.append(len(marked))
        with open(os.path.join(work, f"rationales_{k}.json"), "w", encoding="utf-8") as f:
            json.dump(marked, f)
        with open(os.path.join(work, f"judge_{k}.json"), "w", encoding="utf-8") as f:
            json.dump([annotations[p["post_id"]] for p in half if p["post_id"] in annotations], f)
        with open(os.path.join(work, f"judge_{k}.jsonl"), "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in half))
    return halves, supervised


def toxic_spans_rows(tsd_train):
    """Toxic Spans' train posts as (post, annotation, document): each post's white space runs taken as
    one space, a word marked when any of its characters is, each run of marked words one span."""
    out = []
    with open(tsd_train, encoding="utf-8", newline="") as f:
        for i, row in enumerate(csv.DictReader(f)):
            text, marked_chars = row["text"], set(json.loads(row["spans"]))
            words, marked, at = [], [], 0
            for piece in text.split():
                start = text.index(piece, at)
                at = start + len(piece)
                words.append(piece)
                marked.append(any(c in marked_chars for c in range(start, at)))
            docid = f"tsd{i + 1}"
            spans, t = [], 0
            while t < len(words):
                if marked[t]:
                    end = t
                    while end < len(words) and marked[end]:
                        end += 1
                    spans.append({"docid": docid, "start_token": t, "end_token": end})
                    t = end
                else:
                    t += 1
            document = " ".join(words)
            annotation = {"annotation_id": docid, "classification": "toxic", "evidences": [spans]} if spans else None
            out.append(({"post_id": docid, "text": document, "label": "offensive"}, annotation, {"docid": docid, "document": document}))
    return out


def add_toxic_spans(work, docs, tsd_train):
    """Toxic Spans' train posts put before each half's training file (whose last fifth, held out for early
    stopping and the logit adjustment, stays HateXplain's train posts) and their rationales added to its
    rationales; the documents of both in docs_with_toxic_spans.jsonl, which is returned."""
    rows = toxic_spans_rows(tsd_train)
    both = os.path.join(work, "docs_with_toxic_spans.jsonl")
    with open(docs, encoding="utf-8") as f, open(both, "w", encoding="utf-8") as out:
        out.write(f.read())
        out.write("".join(json.dumps(d, ensure_ascii=False) + "\n" for _, _, d in rows))
    for k in (0, 1):
        with open(os.path.join(work, f"train_{k}.jsonl"), encoding="utf-8") as f:
            train = f.read()
        with open(os.path.join(work, f"train_{k}_toxic_spans.jsonl"), "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(p, ensure_ascii=False) + "\n" for p, _, _ in rows) + train)  # first: the held-out fifth stays train posts
        with open(os.path.join(work, f"rationales_{k}.json"), encoding="utf-8") as f:
            marked = json.load(f)
        with open(os.path.join(work, f"rationales_{k}_toxic_spans.json"), "w", encoding="utf-8") as f:
            json.dump(marked + [a for _, a, _ in rows if a], f)
    return both


def over_rows(per_row, method):
    """ERASER's figures of one method from the rows' own (both halves' rows together)."""
    rows = [r[method] for r in per_row]
    p = mean([r["iou_precision"] for r in rows])
    r_ = mean([r["iou_recall"] for r in rows])
    return {"iou_f1": 2 * p * r_ / (p + r_) if p + r_ else 0.0, "token_f1": mean([r["token_f1"] for r in rows]),
            "auprc": mean([r["auprc"] for r in rows])}


def marks_over_halves(reach):
    """The marks' own figures over both halves from each half's (rows, figures): every figure but IOU-F1
    is a mean over rows, so the halves' weighted by their rows; IOU-F1 the F1 of those means."""
    n = sum(rows for rows, _ in reach)
    f = {x: sum(rows * h[x] for rows, h in reach) / n for x in ("iou_precision", "iou_recall", "token_f1", "auprc")}
    f["iou_f1"] = 2 * f["iou_precision"] * f["iou_recall"] / (f["iou_precision"] + f["iou_recall"])
    return f


def one_model(work, docs, halves, lam, target, seed, a, train_docs=None):
    """Both halves' models at one lambda and seed; the figures over all of val. With train_docs:
    trained with Toxic Spans' posts too (add_toxic_spans)."""
    extra = "_toxic_spans" if train_docs else ""
    probs, truth, per_row, reach, seconds = {}, {}, [], [], 0.0  # seconds: None when a reused run did not record its own
    faithfulness = None
    for k, half in enumerate(halves):
        run = os.path.join(work, f"run_l{lam}_{target}{extra}_s{seed}_half{k}")
        flags = ["--text-column", "text", "--id-column", "post_id", "--label-column", "label", "--seed", str(seed)]
        if float(lam) > 0:
            flags += ["--rationales", os.path.join(work, f"rationales_{k}{extra}.json"), "--rationale-docs", train_docs or docs,
                      "--rationale-weight", lam, "--rationale-target", target]
        done = os.path.join(run, "bench_done.json")  # a run finished by an earlier invocation with this --work: read, not redone
        reused = os.path.exists(done)
        if reused:
            with open(done) as f:
                s = json.load(f)["train_seconds"]
        else:
            shutil.rmtree(run, ignore_errors=True)
            s, _ = timed(attn, "train", "--csv", os.path.join(work, f"train_{k}{extra}.jsonl"), *flags, "--threads", a.threads, "--out", run)
        seconds = None if seconds is None or s is None else seconds + s
        judged = os.path.join(work, f"judge_{k}.jsonl")
        predictions = os.path.join(run, "judged.csv")
        if not reused:
            attn("evaluate", "--model", run, "--csv", judged, "--predictions", predictions, "--threads", a.threads)
        with open(predictions, newline="") as f:
            probs.update({r["id"]: [float(r[c]) for c in CLASSES] for r in csv.DictReader(f)})
        truth.update({p["post_id"]: p["label"] for p in half})
        figures = os.path.join(run, "plausibility.json")
        if not reused:
            attn("plausibility", "--model", run, "--rationales", os.path.join(work, f"judge_{k}.json"), "--docs", docs, "--json", figures,
                 "--threads", a.threads)
        with open(figures) as f:
            result = json.load(f)
        per_row += result["per_row"]
        reach.append((result["rows"], result["marks_as_scores"]))
        if k == 0:
            faith = os.path.join(run, "faithfulness.json")
            if not reused:
                attn("faithfulness", "--model", run, "--csv", judged, "--rows", str(a.faithfulness_rows), "--json", faith,
                     "--threads", a.threads)
            with open(faith) as f:
                faithfulness = faithfulness_summary(json.load(f))
        if not reused:
            with open(done, "w") as f:
                json.dump({"train_seconds": s}, f)
    m = run_hatexplain.ensemble_metrics(probs, truth)
    methods = [k for k in per_row[0] if k not in ("id", "label", "words")]
    return {"train_seconds": None if seconds is None else round(seconds / 2, 1), "accuracy": m["accuracy"], "macro_f1": m["macro_f1"], "auroc_ovo": m["auroc_ovo"],
            "plausibility_rows": len(per_row), "plausibility": {meth: over_rows(per_row, meth) for meth in methods},
            "marks_as_scores": marks_over_halves(reach),
            "faithfulness_first_half": faithfulness}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--realdata", default=REALDATA)
    ap.add_argument("--lambdas", default="0,1,3")
    ap.add_argument("--targets", default="words")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--faithfulness-rows", type=int, default=300)
    ap.add_argument("--out", default=result_path(__file__, "rationales_val_folds.json"))
    ap.add_argument("--work", help="the work directory of an earlier invocation: its finished runs are read, not redone")
    ap.add_argument("--toxic-spans", action="store_true", help="also train on Toxic Spans' train posts and their marked words")
    a = ap.parse_args()
    hatexplain = os.path.join(a.realdata, "hatexplain")
    docs = os.path.join(hatexplain, "eraser", "docs.jsonl")
    if not os.path.exists(docs):
        print(f"SKIP: no HateXplain corpus at {hatexplain}")
        sys.exit(77)
    work = a.work or workdir("rationales-val-folds")
    halves, supervised = write_folds(hatexplain, work)
    train_docs = None
    if a.toxic_spans:
        tsd_train = os.path.join(a.realdata, "toxic_spans", "SemEval2021", "tsd_train.csv")
        if not os.path.exists(tsd_train):
            print(f"SKIP: no Toxic Spans corpus at {tsd_train}")
            sys.exit(77)
        train_docs = add_toxic_spans(work, docs, tsd_train)
    out = {"data": "HateXplain: 2-fold cross-fitting over val (even / odd positions); each half judged by a model trained on the "
                   "train split plus the other half's posts, whose toxic posts' rationales supervise the attention",
           "supervised_rows_per_half": supervised,
           "model": "bilstm-attention, the recipe for one class per row (subwords)",
           "published_hatexplain_test": {"BiRNN-HateXplain": {"accuracy": 0.629, "macro_f1": 0.629, "auroc": 0.805, "auprc": 0.841},
                                         "BiRNN-HateXplain re-run": {"iou_f1": 0.228, "token_f1": 0.495, "auprc": 0.823}},
           "runs": {}}
    runs = [(lam, target) for lam in a.lambdas.split(",") for target in (a.targets.split(",") if float(lam) > 0 else ["words"])]
    for lam, target in runs:
        key = f"lambda={lam}" + ("" if target == "words" else f",target={target}") + (",toxic_spans" if train_docs else "")
        per_seed = [one_model(work, docs, halves, lam, target, seed, a, train_docs) for seed in range(1, a.seeds + 1)]
        summary = {k: round(mean([r[k] for r in per_seed if r[k] is not None] or [float("nan")]), 4)
                   for k in ("train_seconds", "accuracy", "macro_f1", "auroc_ovo")}
        summary["plausibility"] = {meth: {x: round(mean([r["plausibility"][meth][x] for r in per_seed]), 4) for x in ("iou_f1", "token_f1", "auprc")}
                                   for meth in per_seed[0]["plausibility"]}
        out["runs"][key] = {"mean": summary, "seeds": per_seed}
        print(json.dumps({key: summary}, indent=1), flush=True)
    # The marks' own figures over all of val (the same for every model)
    out["marks_as_scores"] = next(iter(out["runs"].values()))["seeds"][0]["marks_as_scores"]
    write_result(a.out, out)


if __name__ == "__main__":
    main()
