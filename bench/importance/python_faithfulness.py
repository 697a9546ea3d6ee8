#!/usr/bin/env python3
"""The Python peer of `attn faithfulness`: the same computations on the same rows, with
torch.jit.load of the same model.pt and autograd, batched as Captum batches (and the metrics computed
as ferret computes them):
  - gradient and grad-input (Captum's Saliency / InputXGradient): one forward and backward pass per label;
  - integrated gradients (Captum's IntegratedGradients, n_steps=50, method='gausslegendre', all steps in
    one batch): one batch of `steps` points per label; zero embeddings as the baseline, the mask unchanged;
  - leave-one-out (Captum's FeatureAblation, perturbations_per_eval=1): one forward pass per token, the
    token masked as padding;
  - comprehensiveness and sufficiency for k = 1, 5, 10, 20, 50 % (ferret's evaluators): one forward
    pass per method, label and k; Kendall's tau-b with leave-one-out; a seeded random ranking.
Rows: the first N data rows of the CSV whose text keeps >= 2 tokens (Keras' tokenizer from the model
file, cut to maxlen as in training). Writes the same JSON layout as attn (methods -> label -> figures).

usage: python_faithfulness.py MODEL.pt CSV ROWS STEPS THREADS OUT.json [TEXT_COLUMN]
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import jit_model, peer_usage, token_rows  # noqa: E402

peer_usage(__doc__, 6)
import numpy  # noqa: E402
import torch  # noqa: E402

MODEL, CSV, ROWS, STEPS, THREADS, OUT = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
COLUMN = sys.argv[7] if len(sys.argv) > 7 else "comment_text"
BINS = [1, 5, 10, 20, 50]
METHODS = ["attention", "gradient", "grad-input", "integrated-gradients", "leave-one-out"]

model, labels, maxlen, tokenizer = jit_model(MODEL, THREADS)
rows = token_rows(CSV, COLUMN, tokenizer, maxlen, ROWS, min_tokens=2)

nodes, weights = numpy.polynomial.legendre.leggauss(STEPS)
alphas = torch.tensor((nodes + 1) / 2, dtype=torch.float32).view(-1, 1, 1)
step_weights = torch.tensor(weights / 2, dtype=torch.float32).view(-1, 1, 1)


def probabilities(ids):
    with torch.no_grad():
        return model(torch.tensor([ids]))[0][0]


def explain(ids):
    t = torch.tensor([ids])
    with torch.no_grad():
        p, attention = model(t)
    x = model.embeddings(t)
    scores = {"attention": [attention[0].tolist()] * len(labels), "gradient": [], "grad-input": [], "integrated-gradients": []}
    for k in range(len(labels)):  # Saliency / InputXGradient: one call per target
        point = x.clone().requires_grad_()
        z, _ = model.logits_embedded(point, t)
        g, = torch.autograd.grad(z[0, k], point)
        scores["gradient"].append(g[0].norm(dim=-1).tolist())
        scores["grad-input"].append((g[0] * x[0]).sum(-1).tolist())
    for k in range(len(labels)):  # IntegratedGradients: the steps in one batch, one call per target
        points = (alphas * x).requires_grad_()
        z, _ = model.logits_embedded(points, t.expand(STEPS, -1))
        g, = torch.autograd.grad(z[:, k].sum(), points)
        scores["integrated-gradients"].append((x[0] * (step_weights * g).sum(0)).sum(-1).tolist())
    loo = [[0.0] * len(ids) for _ in labels]
    for i in range(len(ids)):  # FeatureAblation, perturbations_per_eval=1: the token masked as padding
        q = probabilities(ids[:i] + [0] + ids[i + 1:])
        for k in range(len(labels)):
            loo[k][i] = (p[0, k] - q[k]).item()
    scores["leave-one-out"] = loo
    return p[0].tolist(), scores


def kendall_tau_b(a, b):
    a, b = numpy.asarray(a), numpy.asarray(b)
    da, db = numpy.sign(a[:, None] - a[None, :]), numpy.sign(b[:, None] - b[None, :])
    upper = numpy.triu_indices(len(a), 1)
    da, db = da[upper], db[upper]
    denominator = math.sqrt(float((da != 0).sum()) * float((db != 0).sum()))
    return float((da * db).sum()) / denominator if denominator > 0 else float("nan")


def top(scores, k):
    n = len(scores)
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    return set(order[:math.ceil(k * n / 100)])


sums = {m: {l: {"comprehensiveness": [0.0] * 5, "sufficiency": [0.0] * 5, "tau": 0.0, "tau_rows": 0} for l in labels}
        for m in METHODS + ["random"]}
generator = numpy.random.default_rng(1)
for ids in rows:
    p, scores = explain(ids)
    scores["random"] = [generator.random(len(ids)).tolist()] * len(labels)
    for m in METHODS + ["random"]:
        for k, label in enumerate(labels):
            s = sums[m][label]
            for b, percent in enumerate(BINS):  # ferret: one forward pass per explanation and k
                ranked = top(scores[m][k], percent)
                without = probabilities([0 if i in ranked else t for i, t in enumerate(ids)])
                only = probabilities([t if i in ranked else 0 for i, t in enumerate(ids)])
                s["comprehensiveness"][b] += p[k] - without[k].item()
                s["sufficiency"][b] += p[k] - only[k].item()
            tau = kendall_tau_b(scores[m][k], scores["leave-one-out"][k])
            if not math.isnan(tau):
                s["tau"] += tau
                s["tau_rows"] += 1

n = len(rows)
result = {"rows": n, "steps": STEPS, "bins": BINS, "methods": {}}
for m, per_label in sums.items():
    result["methods"][m] = {}
    for label, s in per_label.items():
        comp = [v / n for v in s["comprehensiveness"]]
        suff = [v / n for v in s["sufficiency"]]
        result["methods"][m][label] = {"comprehensiveness": comp, "sufficiency": suff, "aopc_comprehensiveness": sum(comp) / 5,
                                       "aopc_sufficiency": sum(suff) / 5,
                                       "kendall_tau_loo": s["tau"] / s["tau_rows"] if s["tau_rows"] else None}
json.dump(result, open(OUT, "w"), indent=1)
