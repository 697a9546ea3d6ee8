#!/usr/bin/env python3
"""hierarchical-attention end to end, on the tiny run's e-mail-like documents (one sentence carries
the labels; `attn datagen documents` records which): on held-out documents of another seed, the
sentence with the highest attention is the carrying one in >= 90% of the labelled documents, and
their ROC AUC is high; `attn explain --json` lists every sentence with its words; the sentence
settings are flags of `attn train` that only hierarchical models take; an interrupted run resumes
exactly, with early stopping on.

usage: hierarchical_test.py ATTN TINY_RUN_DIR
"""
import csv
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish, runner  # noqa: E402

ATTN, DIR = sys.argv[1:3]
attn = runner(ATTN)
RUN, HELD = os.path.join(DIR, "hierarchical"), os.path.join(DIR, "documents_heldout.csv")

rows = list(csv.DictReader(open(HELD, newline="", encoding="utf-8")))
explained = [json.loads(line) for line in attn("explain", "--model", RUN, "--csv", HELD, "--json").stdout.splitlines()]
check(len(explained) == len(rows), "one explanation per held-out document")
hits = carrying = 0
for row, e in zip(rows, explained):
    evidence = int(row["evidence"])
    if not evidence:
        continue
    carrying += 1
    weights = [s["weight"] for s in e["sentences"]]
    hits += max(range(len(weights)), key=weights.__getitem__) + 1 == evidence
check(carrying >= 100 and hits >= 0.9 * carrying,
      f"the carrying sentence has the highest sentence weight in {hits} of {carrying} held-out documents (>= 90%)")
first = explained[0]
check(sum(len(s["words"]) for s in first["sentences"]) == len(first["words"]), "every word sits in one sentence")
check(all(s["status"] in ("read", "empty", "dropped") for e in explained for s in e["sentences"]), "each sentence has a status")

metrics_path = os.path.join(DIR, "hierarchical_metrics.json")
attn("evaluate", "--model", RUN, "--csv", HELD, "--metrics", metrics_path)
metrics = json.load(open(metrics_path))
check(metrics["auc"]["toxic"] >= 0.95, f"held-out ROC AUC of toxic {metrics['auc']['toxic']:.3f} >= 0.95")

# The sentence settings: given to a hierarchical model they are recorded; other models refuse them.
small = os.path.join(DIR, "hierarchical_small")
shutil.rmtree(small, ignore_errors=True)
attn("train", "--model", "hierarchical-attention", "--csv", HELD, "--out", small, "--epochs", "1", "--max-sentences", "3",
     "--max-words", "5", "--set", "embed_dim=8", "--set", "gru_units=4", "--threads", "2")
data = json.load(open(os.path.join(small, "config.json")))["data"]
check(data["sentences"] == {"max_sentences": 3, "max_words": 5} and data["maxlen"] == 15, f"--max-sentences/--max-words recorded ({data['sentences']})")
cut = json.loads(attn("explain", "--model", small, "--json",
                      "Thanks for the edit and for the note on the talk page. Thanks for the edit. See you at the meeting. "
                      "Thanks for the note.").stdout)
statuses = [s["status"] for s in cut["sentences"]]
check(statuses[:3] == ["read"] * 3 and statuses[3:] == ["dropped"], f"explain reads max_sentences=3 sentences ({statuses})")
check(all(sum(w["status"] == "kept" for w in s["words"]) <= 5 for s in cut["sentences"])
      and sum(w["status"] == "kept" for w in cut["sentences"][0]["words"]) == 5 and len(cut["ids"]) <= 15,
      f"and max_words=5 words of each ({[[w['status'] for w in s['words']] for s in cut['sentences']]})")
# Resume and early stopping as for every model: 1 epoch, then --resume --epochs 2, ends where 2 epochs
# in one go end (same loss, same model file's outputs); early stopping keeps the best epoch.
whole, split = os.path.join(DIR, "hierarchical_whole"), os.path.join(DIR, "hierarchical_split")
for d in (whole, split):
    shutil.rmtree(d, ignore_errors=True)
common = ["--model", "hierarchical-attention", "--csv", HELD, "--set", "embed_dim=8", "--set", "gru_units=4", "--threads", "1",
          "--batch-size", "32", "--early-stopping-patience", "5", "--monitor", "val_loss"]
attn("train", *common, "--out", whole, "--epochs", "2")
attn("train", *common, "--out", split, "--epochs", "1")
attn("train", "--resume", split, "--epochs", "2")
last = [json.loads(open(os.path.join(d, "metrics.jsonl")).read().splitlines()[-1]) for d in (whole, split)]
check(last[0]["epoch"] == last[1]["epoch"] == 2 and last[0]["loss"] == last[1]["loss"] and last[0]["val_loss"] == last[1]["val_loss"],
      f"an interrupted run resumes to exactly the uninterrupted one (loss {last[0]['loss']} and {last[1]['loss']})")
outputs = [json.loads(attn("explain", "--model", d, "--json", "Hi Tom,\nYou are stupid. Thanks!").stdout) for d in (whole, split)]
check(outputs[0]["probabilities"] == outputs[1]["probabilities"] and outputs[0]["attention"] == outputs[1]["attention"],
      "the resumed run's model.pt explains exactly as the uninterrupted one's")
refused = attn("train", "--csv", HELD, "--out", os.path.join(DIR, "refused"), "--max-sentences", "3", ok=False)
check(refused.returncode != 0 and "hierarchical models" in refused.stderr, f"bilstm-attention refuses --max-sentences ({refused.stderr.strip()})")
finish()
