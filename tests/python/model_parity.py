#!/usr/bin/env python3
"""A trained attn model from Python: model.pt loaded with torch.jit.load gives the probabilities and
attention that `attn explain --json` printed (<= 1e-6), its embedded tokenizer.json loads in Keras
and tokenizes as attn did, and `attn evaluate` skips Kaggle's -1 rows. Exit 77 without python3-torch.

usage: model_parity.py ATTN RUN_FIXTURE_DIR
"""
import csv
import json
import os
import subprocess
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e}")
    sys.exit(77)

ATTN, DIR = sys.argv[1:3]
RUN = os.path.join(DIR, "run")
failures, checks = [], 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


texts = ["ice cream", "ice cream is worthless", "ice cream sucks", "You are a STUPID idiot!!!",
         "thanks for the edit, see the talk page", "zzz unknown words only"]
out = subprocess.run([ATTN, "explain", "--model", RUN, "--json"] + texts, check=True, capture_output=True, text=True).stdout
explained = [json.loads(line) for line in out.splitlines()]
check(len(explained) == len(texts), "one JSON line per text")

extra = {"config.json": "", "tokenizer.json": ""}
model = torch.jit.load(os.path.join(RUN, "model.pt"), _extra_files=extra)
model.eval()
config = json.loads(extra["config.json"])
check(config["model"] == "bilstm-attention", "config.json embedded with the registry name")
labels = config["data"]["labels"]
for e in explained:
    ids = e["ids"] or [0]
    with torch.no_grad():
        probs, attention = model(torch.tensor([ids], dtype=torch.int64))
    want = torch.tensor([[e["probabilities"][l] for l in labels]])
    check((probs - want).abs().max().item() <= 1e-6, f"probabilities of {e['text']!r}")
    if e["ids"]:
        check((attention[0] - torch.tensor(e["attention"])).abs().max().item() <= 1e-6, f"attention of {e['text']!r}")
        kept = sum(w["weight"] for w in e["words"] if w["status"] in ("kept", "oov"))
        check(abs(kept - 1.0) < 1e-5, f"kept words' weights sum to 1 for {e['text']!r}")

try:
    from keras_preprocessing.text import tokenizer_from_json
    tok = tokenizer_from_json(extra["tokenizer.json"])
    for e in explained:
        check(tok.texts_to_sequences([e["text"]])[0] == e["ids"], f"Keras tokenizes {e['text']!r} as attn did")
except ImportError:
    print("(keras_preprocessing missing: tokenizer check skipped)")

# evaluate with Kaggle-style test_labels: every third row unscored (-1)
rows = list(csv.DictReader(open(os.path.join(DIR, "toxic.csv"), newline="", encoding="utf-8")))[:300]
test_csv, labels_csv = os.path.join(DIR, "test.csv"), os.path.join(DIR, "test_labels.csv")
with open(test_csv, "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["id", "comment_text"])
    w.writerows([[r["id"], r["comment_text"]] for r in rows])
with open(labels_csv, "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["id"] + labels)
    for i, r in enumerate(rows):
        w.writerow([r["id"]] + (["-1"] * len(labels) if i % 3 == 0 else [r[l] for l in labels]))
pred, metrics = os.path.join(DIR, "pred.csv"), os.path.join(DIR, "metrics.json")
subprocess.run([ATTN, "evaluate", "--model", os.path.join(RUN, "model.pt"), "--csv", test_csv, "--labels-csv", labels_csv,
                "--predictions", pred, "--metrics", metrics], check=True, capture_output=True)
m = json.load(open(metrics))
check(m["rows_scored"] == 200 and m["rows_skipped"] == 100, "evaluate skips the -1 rows")
check(0.0 <= m["mean_roc_auc"] <= 1.0 and m["log_loss"] > 0, "evaluate reports AUC and log loss")
pred_rows = list(csv.reader(open(pred, newline="")))
check(pred_rows[0] == ["id"] + labels and len(pred_rows) == 301, "predictions in sample_submission layout")

print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
