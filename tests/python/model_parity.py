#!/usr/bin/env python3
"""A trained attn model from Python: model.pt loaded with torch.jit.load gives the probabilities and
attention that `attn explain --json` printed (<= 1e-6), its embedded tokenizer.json loads in Keras
and tokenizes as attn did, and `attn evaluate` skips Kaggle's -1 rows. The same for the other seeds'
models: feature-attention's forward, seq2seq-attention's translate (greedy decoding inside the
TorchScript file), transformer-classifier's forward and self_attention. Exit 77 without python3-torch.

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

# ---- The other seeds' models, from Python ----

def attn_json(model_dir, *args):
    out = subprocess.run([ATTN, "explain", "--json", "--model", model_dir] + list(args), check=True, capture_output=True,
                         text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def load(name, files):
    extra = {f: "" for f in files}
    m = torch.jit.load(os.path.join(DIR, name, "model.pt"), _extra_files=extra)
    m.eval()
    return m, extra


# feature-attention: forward(x) -> (probability, attention)
features, extra = load("features", ["config.json"])
check(json.loads(extra["config.json"])["task"] == "feature-classification", "feature model's config names its task")
rows = [[0.5, 1.5, -1.0, 0.0, 2.0, -0.25], [-1.0, -2.0, -1.5, 0.3, 0.0, 1.0]]
for row, e in zip(rows, attn_json(os.path.join(DIR, "features"), "--", *[",".join(map(str, r)) for r in rows])):
    with torch.no_grad():
        p, a = features(torch.tensor([row], dtype=torch.float32))
    check(abs(p.item() - e["probability"]) <= 1e-6, f"feature probability of {row}")
    check((a[0] - torch.tensor([f["weight"] for f in e["features"]])).abs().max().item() <= 1e-6, f"feature weights of {row}")

# seq2seq-attention: translate(src, max_length) -> (ids, attention), tokenised with the embedded char tokenizers
dates, extra = load("dates", ["config.json", "tokenizer.json", "target_tokenizer.json"])
texts = ["may 9, 1998", "SATURDAY, JANUARY 1, 2000", "9.5.98"]
try:
    from keras_preprocessing.text import tokenizer_from_json
    src_tok, tgt_tok = tokenizer_from_json(extra["tokenizer.json"]), tokenizer_from_json(extra["target_tokenizer.json"])
    end_id = len(tgt_tok.word_index) + 1
    for t, e in zip(texts, attn_json(os.path.join(DIR, "dates"), *texts)):
        src = src_tok.texts_to_sequences([t])[0]
        with torch.no_grad():
            ids, att = dates.translate(torch.tensor([src], dtype=torch.int64), dates.max_output_length)
        out = []
        for i in ids[0].tolist():
            if i in (0, end_id):
                break
            out.append(i)
        check("".join(tgt_tok.index_word[i] for i in out) == e["output"], f"Python translates {t!r} as attn did")
        n = len(out)
        check((att[0, :n].flatten() - torch.tensor(e["attention"])).abs().max().item() <= 1e-6 if n else True,
              f"attention matrix of {t!r}")
except ImportError:
    print("(keras_preprocessing missing: seq2seq check skipped)")

# transformer-classifier: forward(ids) and self_attention(ids)
transformer, extra = load("transformer", ["config.json"])
for e in attn_json(os.path.join(DIR, "transformer"), "ice cream sucks", "you are a stupid idiot"):
    ids = torch.tensor([e["ids"]], dtype=torch.int64)
    with torch.no_grad():
        probs, attention = transformer(ids)
        layers = transformer.self_attention(ids)
    check((attention[0] - torch.tensor(e["attention"])).abs().max().item() <= 1e-6, f"transformer pooling of {e['text']!r}")
    check(all((layers[l][0, h].flatten() - torch.tensor(e["self_attention"][l][h])).abs().max().item() <= 1e-6
              for l in range(len(layers)) for h in range(layers[l].shape[1])), f"self-attention of {e['text']!r}")

print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
