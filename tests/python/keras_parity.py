#!/usr/bin/env python3
"""attn prepare / attn tokenize against the real Keras (keras_preprocessing) on a messy CSV.

For every configuration: the padded matrix in data.pt (read with torch.load) equals Keras'
pad_sequences(texts_to_sequences(...)); tokenizer.json equals Keras' to_json() byte for byte in
every field but word_docs/index_docs (whose order Keras leaves to Python's string hash; compared as
maps); Keras' tokenizer_from_json loads attn's file and attn tokenize loads Keras' file, both giving
Keras' sequences. Exit 77 (CTest skip) when keras_preprocessing or torch is not installed.

usage: keras_parity.py ATTN_BINARY CSV WORKDIR
"""
import csv
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    from keras_preprocessing.sequence import pad_sequences
    from keras_preprocessing.text import Tokenizer, tokenizer_from_json
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e} (install python3-keras-preprocessing and python3-torch)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402

ATTN, CSV_PATH, WORKDIR = sys.argv[1:4]
MAXLEN = 12  # short, so truncation happens in many rows

# (name, Tokenizer kwargs, attn flags)
TOKENIZERS = [
    ("defaults", dict(num_words=20000), []),
    ("num_words=50", dict(num_words=50), ["--num-words", "50"]),
    ("num_words=50,oov", dict(num_words=50, oov_token="<OOV>"), ["--num-words", "50", "--oov-token", "<OOV>"]),
    ("lower=False", dict(num_words=20000, lower=False), ["--no-lower"]),
    ("char_level", dict(num_words=20000, char_level=True), ["--char-level"]),
    ("split=|,filters", dict(num_words=30, split="|", filters="aeiou—…\r"),
     ["--num-words", "30", "--split", "|", "--filters", "aeiou—…\r"]),
]
PADDINGS = [("pre", "pre"), ("post", "post")]


def read_texts(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [row["comment_text"] for row in csv.DictReader(f)]


def run(args, **kw):
    return subprocess.run([ATTN] + args, check=True, capture_output=True, **kw)


def compare_json(name, ours, keras):
    o, k = json.loads(ours), json.loads(keras)
    check(list(o) == list(k) and o["class_name"] == k["class_name"], f"{name}: top-level keys")
    oc, kc = o["config"], k["config"]
    check(list(oc) == list(kc), f"{name}: config key order {list(oc)} vs {list(kc)}")
    for key in kc:
        if key in ("word_docs", "index_docs"):
            check(json.loads(oc[key]) == json.loads(kc[key]), f"{name}: {key} as a map")
        else:
            check(oc[key] == kc[key], f"{name}: config.{key} differs byte for byte")
    # Whole file byte-exact once word_docs/index_docs are put in Keras' order.
    for key in ("word_docs", "index_docs"):
        oc[key] = kc[key]
    check(json.dumps(o) == keras, f"{name}: whole to_json() output")


texts = read_texts(CSV_PATH)
os.makedirs(WORKDIR, exist_ok=True)
for name, kwargs, flags in TOKENIZERS:
    tok = Tokenizer(**kwargs)
    tok.fit_on_texts(texts)
    seqs = tok.texts_to_sequences(texts)
    keras_json = tok.to_json()
    for padding, truncating in PADDINGS:
        label = f"{name} {padding}/{truncating}"
        out = os.path.join(WORKDIR, f"{name}-{padding}".replace("|", "bar").replace(",", "_"))
        run(["prepare", "--csv", CSV_PATH, "--out", out, "--maxlen", str(MAXLEN), "--padding", padding,
             "--truncating", truncating, "--threads", "2"] + flags)
        data = torch.load(os.path.join(out, "data.pt"))
        expect = pad_sequences(seqs, maxlen=MAXLEN, padding=padding, truncating=truncating)
        check(data["x"].dtype == torch.int32 and tuple(data["x"].shape) == expect.shape, f"{label}: x shape/dtype")
        check(np.array_equal(data["x"].numpy(), expect), f"{label}: padded ids differ from Keras")
        check(data["lengths"].tolist() == [min(len(s), MAXLEN) for s in seqs], f"{label}: lengths")
        ours = open(os.path.join(out, "tokenizer.json"), encoding="utf-8").read()
        compare_json(label, ours, keras_json)
    # attn's file in Keras, Keras' file in attn.
    loaded = tokenizer_from_json(ours)
    check(loaded.texts_to_sequences(texts) == seqs, f"{name}: Keras tokenizer_from_json(attn file) sequences")
    check(loaded.sequences_to_texts(seqs) == tok.sequences_to_texts(seqs), f"{name}: sequences_to_texts")
    keras_file = os.path.join(WORKDIR, "keras_tokenizer.json")
    with open(keras_file, "w", encoding="utf-8") as f:
        f.write(keras_json)
    got = run(["tokenize", "--tokenizer", keras_file, "--csv", CSV_PATH]).stdout.decode()
    ours_seqs = [[int(t) for t in line.split()] for line in got.split("\n")[:-1]]
    check(ours_seqs == seqs, f"{name}: attn tokenize with Keras' tokenizer.json")
    got = run(["tokenize", "--tokenizer", keras_file, "--csv", CSV_PATH, "--maxlen", "7", "--padding", "post"]).stdout.decode()
    padded = [[int(t) for t in line.split()] for line in got.split("\n")[:-1]]
    check(padded == pad_sequences(seqs, maxlen=7, padding="post").tolist(), f"{name}: attn tokenize --maxlen 7")

# A tokenizer fitted by Keras applied by attn prepare to a file without label columns.
test_csv = os.path.join(WORKDIR, "unlabelled.csv")
with open(CSV_PATH, newline="", encoding="utf-8") as f, open(test_csv, "w", newline="", encoding="utf-8") as g:
    w = csv.writer(g)
    for row in csv.reader(f):
        w.writerow(row[:2])
tok = Tokenizer(num_words=50, oov_token="<OOV>")
tok.fit_on_texts(texts[: len(texts) // 2])  # unknown words in the other half
keras_file = os.path.join(WORKDIR, "keras_half.json")
with open(keras_file, "w", encoding="utf-8") as f:
    f.write(tok.to_json())
out = os.path.join(WORKDIR, "apply")
run(["prepare", "--csv", test_csv, "--tokenizer", keras_file, "--out", out, "--maxlen", str(MAXLEN)])
data = torch.load(os.path.join(out, "data.pt"))
check(np.array_equal(data["x"].numpy(), pad_sequences(tok.texts_to_sequences(texts), maxlen=MAXLEN)),
      "apply Keras tokenizer to unlabelled CSV")
check("labels" not in data and data["label_names"] == [], "unlabelled CSV has no labels")

finish()
