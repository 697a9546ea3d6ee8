#!/usr/bin/env python3
"""The Python peer of `attn aggregate`: word importance over a file with torch.jit.load of the same
model.pt and autograd, batched as a Captum user batches (InputXGradient on batches of padded rows: one
forward pass and one backward pass per label and batch), the attention from the same forward pass;
per label, the rows the model decides for it (p >= 0.5), each token's count and mean score there.
Writes {"seconds", "rows", "methods": {method: {label: [[word, count, mean], ...top]}}}.

usage: python_aggregate.py MODEL.pt CSV ROWS THREADS OUT.json [TOP] [MIN_COUNT] [TEXT_COLUMN]
"""
import csv
import json
import sys
import time

import torch
from keras_preprocessing.text import tokenizer_from_json

MODEL, CSV, ROWS, THREADS, OUT = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
TOP = int(sys.argv[6]) if len(sys.argv) > 6 else 20
MIN_COUNT = int(sys.argv[7]) if len(sys.argv) > 7 else 5
COLUMN = sys.argv[8] if len(sys.argv) > 8 else "comment_text"
BATCH = 64

t0 = time.perf_counter()
torch.set_num_threads(THREADS)
extra = {"config.json": "", "tokenizer.json": ""}
model = torch.jit.load(MODEL, _extra_files=extra)
model.eval()
config = json.loads(extra["config.json"])
labels, maxlen = config["data"]["labels"], config["data"]["maxlen"]
tokenizer = tokenizer_from_json(extra["tokenizer.json"])
for p in model.parameters():
    p.requires_grad_(False)

rows = []
csv.field_size_limit(1 << 30)
for record in csv.DictReader(open(CSV, newline="", encoding="utf-8")):
    rows.append(tokenizer.texts_to_sequences([record[COLUMN]])[0][-maxlen:])  # truncating='pre'
    if len(rows) == ROWS:
        break

vocabulary = max(tokenizer.index_word) + 1
# Per method and label, each token id's score sum and count (vectorised: bincount over the batch's ids).
sums = {m: torch.zeros(len(labels), vocabulary, dtype=torch.float64) for m in ("attention", "grad-input")}
counts = torch.zeros(len(labels), vocabulary, dtype=torch.float64)
for start in range(0, len(rows), BATCH):
    batch = rows[start:start + BATCH]
    width = max(1, max(len(r) for r in batch))
    ids = torch.tensor([[0] * (width - len(r)) + r for r in batch], dtype=torch.int64)  # pre-padding, as attn
    x = model.embeddings(ids).detach().requires_grad_()
    logits, attention = model.logits_embedded(x, ids)
    probs = torch.sigmoid(logits).detach()
    real = ids != 0
    for k in range(len(labels)):
        grad, = torch.autograd.grad(logits[:, k].sum(), x, retain_graph=k + 1 < len(labels))
        decided = (probs[:, k] >= 0.5).unsqueeze(1) & real
        if not decided.any():
            continue
        words = ids[decided]
        counts[k] += torch.bincount(words, minlength=vocabulary).double()
        sums["attention"][k] += torch.bincount(words, weights=attention.detach()[decided].double(), minlength=vocabulary)
        sums["grad-input"][k] += torch.bincount(words, weights=(grad * x).sum(-1).detach()[decided].double(), minlength=vocabulary)

out = {"rows": len(rows), "methods": {}}
for method, per_label in sums.items():
    out["methods"][method] = {}
    for k, label in enumerate(labels):
        seen = (counts[k] >= MIN_COUNT).nonzero().flatten().tolist()
        ranked = sorted(((tokenizer.index_word[t], int(counts[k, t]), float(per_label[k, t] / counts[k, t])) for t in seen),
                        key=lambda w: (-w[2], w[0]))
        out["methods"][method][label] = ranked[:TOP]
out["seconds"] = time.perf_counter() - t0
json.dump(out, open(OUT, "w"))
