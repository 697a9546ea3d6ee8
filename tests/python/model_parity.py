#!/usr/bin/env python3
"""A trained attn model from Python: model.pt loaded with torch.jit.load gives the probabilities and
attention that `attn explain --json` printed (<= 1e-6), its embedded tokenizer.json loads in Keras
and tokenizes as attn did, and `attn evaluate` skips Kaggle's -1 rows. The same for the other seeds'
models: feature-attention's forward, seq2seq-attention's translate (greedy decoding inside the
TorchScript file), transformer-classifier's forward and self_attention, hierarchical-attention's
forward and attention_levels. Exit 77 without python3-torch.

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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402


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
check(m["rows"] == 200 and m["rows_skipped"] == 100, "evaluate skips the -1 rows")
check(0.0 <= m["mean_auc"] <= 1.0 and m["loss"] > 0 and set(m["auc"]) == set(labels), "evaluate reports AUC per label and loss")
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

    def decoded(ids):
        """The output ids up to the end (or padding) id."""
        out = []
        for i in ids[0].tolist():
            if i in (0, end_id):
                break
            out.append(i)
        return out

    for t, e in zip(texts, attn_json(os.path.join(DIR, "dates"), *texts)):
        src = src_tok.texts_to_sequences([t])[0]
        with torch.no_grad():
            ids, att = dates.translate(torch.tensor([src], dtype=torch.int64), dates.max_output_length)
        out = decoded(ids)
        check("".join(tgt_tok.index_word[i] for i in out) == e["output"], f"Python translates {t!r} as attn did")
        n = len(out)
        check((att[0, :n].flatten() - torch.tensor(e["attention"])).abs().max().item() <= 1e-6 if n else True,
              f"attention matrix of {t!r}")
    # beam search from Python: the same outputs as `attn explain --beam 3`
    for t, e in zip(texts, attn_json(os.path.join(DIR, "dates"), "--beam", "3", *texts)):
        src = src_tok.texts_to_sequences([t])[0]
        with torch.no_grad():
            ids, att = dates.beam_search(torch.tensor([src], dtype=torch.int64), 3, dates.max_output_length)
        check("".join(tgt_tok.index_word[i] for i in decoded(ids)) == e["output"], f"Python's beam_search of {t!r} gives explain --beam's output")

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

# hierarchical-attention: forward(ids) and attention_levels(ids), ids carrying each word's sentence
han, extra = load("hierarchical", ["config.json"])
check(json.loads(extra["config.json"])["data"]["sentences"]["max_sentences"] > 0, "hierarchical: config.json records the sentence layout")
for e in attn_json(os.path.join(DIR, "hierarchical"), "Hi Tom,\nYou are a stupid idiot. Thanks for the edit!\nAnna", "Good morning."):
    ids = torch.tensor([e["ids"]], dtype=torch.int64)
    with torch.no_grad():
        probs, attention = han(ids)
        word_level, sentence_level = han.attention_levels(ids)
    labels_han = json.loads(extra["config.json"])["data"]["labels"]
    check((probs[0] - torch.tensor([e["probabilities"][l] for l in labels_han])).abs().max().item() <= 1e-6,
          f"hierarchical: probabilities of {e['text']!r}")
    check((attention[0] - torch.tensor(e["attention"])).abs().max().item() <= 1e-6, f"hierarchical: attention of {e['text']!r}")
    read = [s for s in e["sentences"] if s["status"] == "read"]
    firsts = [i for i, v in enumerate(e["ids"]) if i == 0 or (v >> 20) != (e["ids"][i - 1] >> 20)]
    check([round(sentence_level[0, i].item(), 6) for i in firsts] == [round(s["weight"], 6) for s in read],
          f"hierarchical: each sentence's weight from attention_levels for {e['text']!r}")
    check(abs(sum(s["weight"] for s in read) - 1.0) < 1e-5, f"hierarchical: sentence weights sum to 1 for {e['text']!r}")

# ---- Pretrained word vectors, frozen: model.pt's embedding rows are the file's vectors ----
tok = json.loads(json.loads(open(os.path.join(RUN, "tokenizer.json")).read())["config"]["word_index"])
words = sorted(tok, key=tok.get)[:40]
vectors = os.path.join(DIR, "vectors.txt")
with open(vectors, "w", encoding="utf-8") as f:
    f.write(f"{len(words)} 16\n")
    for n, w in enumerate(words):
        f.write(w + " " + " ".join(f"{(n * 16 + i) / 1000:.3f}" for i in range(16)) + "\n")
frozen = os.path.join(DIR, "frozen")
subprocess.run([ATTN, "train", "--csv", os.path.join(DIR, "toxic.csv"), "--out", frozen, "--epochs", "1", "--batch-size", "64",
                "--set", "embed_dim=16", "--set", "lstm_units=8", "--embeddings", vectors, "--freeze-embeddings", "--threads", "2"],
               check=True, capture_output=True)
table = dict(torch.jit.load(os.path.join(frozen, "model.pt")).named_parameters())["embedding"]
check(all(torch.allclose(table[tok[w]], torch.tensor([(n * 16 + i) / 1000 for i in range(16)])) for n, w in enumerate(words)),
      "frozen embeddings read back from model.pt in Python equal the file's vectors")
check(json.load(open(os.path.join(frozen, "config.json")))["embeddings"]["words_found"] == len(words), "config.json records the coverage")

# ---- A seed ensemble (--ensemble 2): one TorchScript file, its probabilities and attention the members' means ----
subprocess.run([ATTN, "train", "--csv", os.path.join(DIR, "toxic.csv"), "--out", os.path.join(DIR, "ensemble"), "--epochs", "1",
                "--batch-size", "64", "--set", "embed_dim=16", "--set", "lstm_units=8", "--ensemble", "2", "--threads", "2"],
               check=True, capture_output=True)
ensemble, extra = load("ensemble", ["config.json"])
check(json.loads(extra["config.json"])["training"]["ensemble"] == 2, "ensemble: config.json records the members")
for e in attn_json(os.path.join(DIR, "ensemble"), "you are a stupid idiot", "thanks for the edit"):
    ids = torch.tensor([e["ids"]], dtype=torch.int64)
    with torch.no_grad():
        probs, attention = ensemble(ids)
        p0, a0 = ensemble.member0(ids)
        p1, a1 = ensemble.member1(ids)
    check((probs - (p0 + p1) / 2).abs().max().item() <= 1e-6, f"ensemble: probabilities of {e['text']!r} are the members' mean")
    check((attention - (a0 + a1) / 2).abs().max().item() <= 1e-6, f"ensemble: attention of {e['text']!r} is the members' mean")
    check((probs[0] - torch.tensor([e["probabilities"][l] for l in labels])).abs().max().item() <= 1e-6,
          f"ensemble: Python's probabilities of {e['text']!r} are attn's")
    check((attention[0] - torch.tensor(e["attention"])).abs().max().item() <= 1e-6, f"ensemble: Python's attention of {e['text']!r} is attn's")

# ---- Word importance from Python: logits_embedded(x, ids) gives logits(ids), and integrated gradients
# computed with plain autograd on it (Gauss-Legendre nodes, zero-embedding baseline) match attn's ----
import numpy
nodes, weights = numpy.polynomial.legendre.leggauss(50)
alphas = torch.tensor((nodes + 1) / 2, dtype=torch.float32).view(-1, 1, 1)
step_weights = torch.tensor(weights / 2, dtype=torch.float32).view(-1, 1, 1)
for run in ("run", "transformer", "hierarchical", "ensemble"):
    m, extra = load(run, ["config.json"])
    run_labels = json.loads(extra["config.json"])["data"]["labels"]
    for e in attn_json(os.path.join(DIR, run), "--method", "integrated-gradients,grad-input",
                       "you are a stupid idiot and your edits are garbage", "ice cream sucks"):
        ids = torch.tensor([e["ids"]], dtype=torch.int64)
        x = m.embeddings(ids).detach()
        with torch.no_grad():
            direct, _ = m.logits(ids)
            embedded, _ = m.logits_embedded(x, ids)
        check((direct - embedded).abs().max().item() <= 1e-6, f"{run}: logits_embedded(embeddings(ids), ids) == logits(ids)")
        points = (alphas * x).requires_grad_()
        z, _ = m.logits_embedded(points, ids.expand(len(alphas), -1))
        at_x = x.clone().requires_grad_()
        z_x, _ = m.logits_embedded(at_x, ids)
        for k, label in enumerate(run_labels):
            grads, = torch.autograd.grad(z[:, k].sum(), points, retain_graph=True)
            ig = (x[0] * (step_weights * grads).sum(0)).sum(-1)
            want = torch.tensor(e["importance"]["integrated-gradients"][label])
            check((ig - want).abs().max().item() <= 1e-4 + 1e-3 * want.abs().max().item(),
                  f"{run}: Python's integrated gradients of {e['text']!r} for {label} equal attn's")
            g, = torch.autograd.grad(z_x[0, k], at_x, retain_graph=True)
            gi = (g[0] * x[0]).sum(-1)
            want = torch.tensor(e["importance"]["grad-input"][label])
            check((gi - want).abs().max().item() <= 1e-5 + 1e-3 * want.abs().max().item(),
                  f"{run}: Python's grad-input of {e['text']!r} for {label} equals attn's")

# ---- One scoring path: evaluate on exactly a run's validation rows reproduces its last val_ metrics ----

def validation_rows_csv(run, source_csv):
    """The rows a run held out (the last val_split of its CSV, as Keras' validation_split), as a CSV."""
    config = json.load(open(os.path.join(DIR, run, "config.json")))
    rows = list(csv.reader(open(source_csv, newline="", encoding="utf-8")))
    header, body = rows[0], rows[1:]
    n_val = int(len(body) * config["training"]["val_split"])
    path = os.path.join(DIR, run + "-validation.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(body[len(body) - n_val:])
    return path, n_val


for run, source, keys in [("run", "toxic.csv", ["loss", "accuracy", "mean_auc"]),
                          ("transformer", "toxic.csv", ["loss", "accuracy", "mean_auc"]),
                          ("features", "features.csv", ["loss", "accuracy", "mean_auc"]),
                          ("dates", "dates.csv", ["loss", "accuracy", "exact_match", "char_accuracy"])]:
    path, n_val = validation_rows_csv(run, os.path.join(DIR, source))
    out = os.path.join(DIR, run + "-validation.json")
    subprocess.run([ATTN, "evaluate", "--model", os.path.join(DIR, run), "--csv", path, "--metrics", out], check=True,
                   capture_output=True)
    got = json.load(open(out))
    last = [json.loads(line) for line in open(os.path.join(DIR, run, "metrics.jsonl"))][-1]
    check(got["rows"] == n_val == last["val_rows"], f"{run}: evaluate scores the {n_val} validation rows")
    for k in keys:
        check(abs(got[k] - last["val_" + k]) <= 1e-6, f"{run}: evaluate's {k} {got[k]} equals the last val_{k} {last['val_' + k]}")

finish()
