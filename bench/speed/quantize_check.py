#!/usr/bin/env python3
"""Does int8 dynamic quantisation pay for scoring here? (issue 13: "where it keeps AUC within 0.001").

PyTorch's dynamic quantisation (torch.quantization.quantize_dynamic) rewrites an eager nn.Module's
nn.LSTM and nn.Linear layers; it does not apply to a TorchScript file. So this script rebuilds the
main job's model (bilstm-attention) as the eager module a PyTorch user would write, copies model.pt's
weights into it, checks that it scores as model.pt does (padding skipped through packed sequences, as
attn's masked BiLSTM skips it), quantises its LSTM and Linear layers to int8 with each engine this
build has (fbgemm, qnnpack), and compares on the same length-sorted batches of 512:
  - the validation rows' mean ROC AUC, float against int8;
  - the forward time over every row of the CSV, float against int8 (2 threads);
  - `attn evaluate`'s whole process on the same CSV, for scale.

usage: /usr/bin/python3 bench/speed/quantize_check.py [--run RUN_DIR] [--csv data/toxic_sample.csv]
Without --run, trains the main job's model (scripts/main.sh's settings) in a temporary directory.
Writes bench/speed/results/quantize.json.
"""
import argparse
import csv
import json
import os
import sys
import time

import torch
from keras_preprocessing.text import tokenizer_from_json

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ROOT, attn, median_of, result_path, workdir, write_result  # noqa: E402


class BiLSTMAttention(torch.nn.Module):
    """bilstm-attention as eager PyTorch: Embedding -> BiLSTM -> word attention -> Dense sigmoid."""

    def __init__(self, num_words, embed, units, labels):
        super().__init__()
        self.embedding = torch.nn.Embedding(num_words, embed, padding_idx=0)
        self.lstm = torch.nn.LSTM(embed, units, batch_first=True, bidirectional=True)
        self.mlp = torch.nn.Linear(2 * units, 2 * units)
        self.context = torch.nn.Linear(2 * units, 1)
        self.dense = torch.nn.Linear(2 * units, labels)

    def forward(self, ids, lengths):
        # ids [B, T] left-aligned (post-padded), lengths [B]: the LSTM sees only the real tokens
        packed = torch.nn.utils.rnn.pack_padded_sequence(self.embedding(ids), lengths, batch_first=True,
                                                         enforce_sorted=False)
        h, _ = torch.nn.utils.rnn.pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=ids.shape[1])
        mask = torch.arange(ids.shape[1])[None, :] < lengths[:, None]
        scores = self.context(torch.tanh(self.mlp(h))).squeeze(-1).masked_fill(~mask, float("-inf"))
        alpha = torch.softmax(scores, dim=1)
        return torch.sigmoid(self.dense((alpha.unsqueeze(-1) * h).sum(1)))


def roc_auc(scores, labels):
    """ROC AUC by ranks (ties share their mean rank)."""
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    positives = sum(labels)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return None
    return (sum(r for r, y in zip(ranks, labels) if y) - positives * (positives + 1) / 2) / (positives * negatives)


def batches(sequences, size=512):
    """Length-sorted batches of (row indices, ids [B, T] post-padded, lengths [B])."""
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    for start in range(0, len(order), size):
        rows = [i for i in order[start:start + size] if sequences[i]]
        if not rows:
            continue
        longest = max(len(sequences[i]) for i in rows)
        ids = torch.zeros(len(rows), longest, dtype=torch.int64)
        for r, i in enumerate(rows):
            ids[r, :len(sequences[i])] = torch.tensor(sequences[i])
        yield rows, ids, torch.tensor([len(sequences[i]) for i in rows])


def score(model, prepared, rows_total, labels):
    """(seconds, probabilities [rows, labels]) of model over the prepared batches (rows without a known word stay 0)."""
    out = torch.zeros(rows_total, labels)
    t0 = time.perf_counter()
    with torch.no_grad():
        for rows, ids, lengths in prepared:
            out[rows] = model(ids, lengths)
    return time.perf_counter() - t0, out


def mean_auc(probabilities, truth, rows, label_names):
    aucs = [roc_auc([float(probabilities[i, k]) for i in rows], [truth[i][k] for i in rows]) for k in range(len(label_names))]
    aucs = [a for a in aucs if a is not None]
    return sum(aucs) / len(aucs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", help="a bilstm-attention run directory (default: train scripts/main.sh's model)")
    ap.add_argument("--csv", default=os.path.join(ROOT, "data", "toxic_sample.csv"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(2)
    run = args.run
    if run is None:
        run = os.path.join(workdir("quantize"), "run")
        attn("train", "--csv", args.csv, "--batch-size", "64", "--threads", "2", "--out", run)

    extra = {"config.json": "", "tokenizer.json": ""}
    scripted = torch.jit.load(os.path.join(run, "model.pt"), _extra_files=extra).eval()
    config = json.loads(extra["config.json"])
    mc, data = config["model_config"], config["data"]
    label_names = data["labels"]
    model = BiLSTMAttention(mc["num_words"], mc["embed_dim"], mc["lstm_units"], mc["labels"]).eval()
    weights = dict(scripted.named_parameters())
    with torch.no_grad():
        model.embedding.weight.copy_(weights["embedding"])
        for name, p in model.lstm.named_parameters():
            p.copy_(weights["lstm." + name])
        for mine, theirs in [("mlp", "attention.mlp"), ("context", "attention.context"), ("dense", "dense")]:
            getattr(model, mine).weight.copy_(weights[theirs + ".weight"])
            getattr(model, mine).bias.copy_(weights[theirs + ".bias"])

    tokenizer = tokenizer_from_json(extra["tokenizer.json"])
    csv.field_size_limit(1 << 30)
    with open(args.csv, newline="", encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    text_column = data.get("text_column", "comment_text")
    maxlen = data["maxlen"]
    sequences = [s[-maxlen:] for s in tokenizer.texts_to_sequences([r[text_column] for r in records])]  # truncating='pre'
    truth = [[int(r[name]) for name in label_names] for r in records]
    prepared = list(batches(sequences))
    validation = list(range(len(records) - round(len(records) * config["training"]["val_split"]), len(records)))

    # The eager model is the file's model: compare on the first batch's rows, pre-padded as attn pads.
    with torch.no_grad():
        rows, ids, lengths = prepared[len(prepared) // 2]
        pre = torch.zeros(len(rows), maxlen, dtype=torch.int64)
        for r, i in enumerate(rows):
            pre[r, maxlen - len(sequences[i]):] = torch.tensor(sequences[i])
        difference = float((scripted(pre)[0] - model(ids, lengths)).abs().max())
    if difference > 1e-4:
        sys.exit(f"the eager model does not score as model.pt does (max difference {difference})")

    result = {"run": run, "csv": args.csv, "rows": len(records), "validation_rows": len(validation), "threads": 2,
              "eager_vs_model_pt_max_difference": difference,
              "quantized_engines_in_this_build": list(torch.backends.quantized.supported_engines), "variants": {}}
    variants = {"float32": model}
    for engine in torch.backends.quantized.supported_engines:
        if engine in ("fbgemm", "x86", "onednn", "qnnpack"):
            torch.backends.quantized.engine = engine
            variants["int8 dynamic (" + engine + ")"] = torch.quantization.quantize_dynamic(
                model, {torch.nn.LSTM, torch.nn.Linear}, dtype=torch.qint8)
    for name, m in variants.items():
        if name != "float32":
            torch.backends.quantized.engine = name.split("(")[1].rstrip(")")
        times = []
        try:
            for _ in range(args.repeats):
                seconds, probabilities = score(m, prepared, len(records), len(label_names))
                times.append(seconds)
        except RuntimeError as e:  # an engine without a dynamic int8 LSTM
            result["variants"][name] = {"error": str(e).splitlines()[0]}
            continue
        result["variants"][name] = {"forward_seconds": median_of(times),
                                    "validation_mean_auc": mean_auc(probabilities, truth, validation, label_names)}
    base = result["variants"]["float32"]
    for name, v in result["variants"].items():
        if "error" not in v:
            v["speedup_over_float32"] = base["forward_seconds"] / v["forward_seconds"]
            v["auc_change"] = v["validation_mean_auc"] - base["validation_mean_auc"]

    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        attn("evaluate", "--model", run, "--csv", args.csv, "--threads", "2")
        times.append(time.perf_counter() - t0)
    result["attn_evaluate_whole_process_seconds"] = median_of(times)
    write_result(result_path(__file__, "quantize.json"), result)


if __name__ == "__main__":
    main()
