#!/usr/bin/env python3
"""The Python peer of `attn aggregate`: word importance over a file with torch.jit.load of the same
model.pt and autograd, batched as a Captum user batches: every row's probabilities and attention in
batches of padded rows without gradients, then InputXGradient of the rows decided for some label, in
batches of them (one forward pass, and one backward pass per label decided in the batch): the work
attn aggregate does. Per label, the rows the model decides for it (p >= 0.5), each token's count and
mean score there.
Writes {"seconds", "rows", "methods": {method: {label: [[word, count, mean], ...top]}}}.

usage: python_aggregate.py MODEL.pt CSV ROWS THREADS OUT.json [TOP] [MIN_COUNT] [TEXT_COLUMN]
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import jit_model, peer_usage, token_rows  # noqa: E402

peer_usage(__doc__, 5)
import torch  # noqa: E402

MODEL, CSV, ROWS, THREADS, OUT = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
TOP = int(sys.argv[6]) if len(sys.argv) > 6 else 20
MIN_COUNT = int(sys.argv[7]) if len(sys.argv) > 7 else 5
COLUMN = sys.argv[8] if len(sys.argv) > 8 else "comment_text"
BATCH = 64

t0 = time.perf_counter()
model, labels, maxlen, tokenizer = jit_model(MODEL, THREADS)
rows = token_rows(CSV, COLUMN, tokenizer, maxlen, ROWS)

vocabulary = max(tokenizer.index_word) + 1
sums = {m: torch.zeros(len(labels), vocabulary, dtype=torch.float64) for m in ("attention", "grad-input")}
counts = torch.zeros(len(labels), vocabulary, dtype=torch.float64)


def padded(batch):
    width = max(1, max(len(r) for r in batch))
    return torch.tensor([[0] * (width - len(r)) + r for r in batch], dtype=torch.int64)  # pre-padding, as attn


# First every row's probabilities and attention, without gradients; then the gradients only of the
# rows decided for some label (no other row counts), and only for the labels decided in the batch.
decided_rows = []
with torch.no_grad():
    for start in range(0, len(rows), BATCH):
        batch = rows[start:start + BATCH]
        ids = padded(batch)
        logits, attention = model.logits_embedded(model.embeddings(ids), ids)
        decided = torch.sigmoid(logits) >= 0.5
        real = ids != 0
        for k in range(len(labels)):
            mask = decided[:, k].unsqueeze(1) & real
            if mask.any():
                words = ids[mask]
                counts[k] += torch.bincount(words, minlength=vocabulary).double()
                sums["attention"][k] += torch.bincount(words, weights=attention[mask].double(), minlength=vocabulary)
        decided_rows += [r for r, d in zip(batch, decided) if d.any()]
for start in range(0, len(decided_rows), BATCH):
    batch = decided_rows[start:start + BATCH]
    ids = padded(batch)
    x = model.embeddings(ids).detach().requires_grad_()
    logits, _ = model.logits_embedded(x, ids)
    decided = torch.sigmoid(logits).detach() >= 0.5
    real = ids != 0
    wanted = [k for k in range(len(labels)) if decided[:, k].any()]
    for n, k in enumerate(wanted):
        grad, = torch.autograd.grad(logits[:, k].sum(), x, retain_graph=n + 1 < len(wanted))
        mask = decided[:, k].unsqueeze(1) & real
        sums["grad-input"][k] += torch.bincount(ids[mask], weights=(grad * x).sum(-1).detach()[mask].double(), minlength=vocabulary)

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
