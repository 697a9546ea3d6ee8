#!/usr/bin/env python3
"""`attn aggregate` end to end, on generated posts with planted words: trained on them, the model's
word importance over a whole file puts the planted words of each label (or class) on top, steadily
across the file's halves; the JSON, CSV and HTML outputs; bad input refused.

Two local workers (--nproc 2) write the bytes one process writes.

usage: aggregate_test.py ATTN WORK_DIR
"""
import csv
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import NICE_WORDS, check, finish, workspace  # noqa: E402

attn, path = workspace()

NICE = NICE_WORDS
HATE, OFFENSIVE = ["vermin", "subhuman", "parasites", "scum"], ["stupid", "idiot", "moron", "loser"]


def post(i):
    rng = random.Random(i)
    words = [rng.choice(NICE) for _ in range(4 + i % 7)]
    label = ("hatespeech", "offensive", "normal")[i % 3]
    planted = HATE if label == "hatespeech" else OFFENSIVE if label == "offensive" else None
    if planted:
        words.insert(rng.randrange(len(words) + 1), rng.choice(planted))
    return f"p{i}", " ".join(words), label


with open(path("train.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["id", "text", "label", "toxic"])
    for i in range(2400):
        pid, text, label = post(i)
        w.writerow([pid, text, label, int(label != "normal")])
with open(path("corpus.jsonl"), "w") as f:  # another file of the same kind: what a user aggregates over
    for i in range(2400, 3600):
        pid, text, label = post(i)
        f.write(json.dumps({"id": pid, "text": text}) + "\n")

small = ["--text-column", "text", "--maxlen", "20", "--epochs", "4", "--batch-size", "32", "--set", "embed_dim=16", "--set",
         "lstm_units=8", "--threads", "2"]
attn("train", "--csv", path("train.csv"), "--labels", "toxic", *small, "--out", path("binary"))
# (4 epochs: from random vectors; vectors pretrained on these few generated words take 2 more to learn the classes)
attn("train", "--csv", path("train.csv"), "--label-column", "label", *small, "--pretrain-epochs", "0", "--out", path("classes"))

out = attn("aggregate", "--model", path("binary"), "--csv", path("corpus.jsonl"), "--top", "8", "--json", path("b.json"),
           "--words-csv", path("b.csv"), "--html", path("b.html")).stdout
figures = json.load(open(path("b.json")))
check(figures["rows"] == 1200 and set(figures["methods"]) == {"attention", "grad-input"}, "every row, attention and grad-input by default")
for method in ("attention", "grad-input"):
    toxic = figures["methods"][method]["toxic"]
    top = [w["word"] for w in toxic["words"]]
    check(set(top) == set(HATE + OFFENSIVE), f"{method}: the planted words top the toxic rows ({top})")
    check(toxic["rows"] >= 700 and all(w["count"] >= 5 for w in toxic["words"]), f"{method}: counted over the rows decided toxic")
    check(toxic["stability_tau"] is not None and toxic["stability_tau"] > 0.0, f"{method}: steady across the halves ({toxic['stability_tau']})")
rows = list(csv.reader(open(path("b.csv"), newline="")))
check(rows[0] == ["method", "label", "rank", "word", "count", "mean"] and len(rows) == 1 + 2 * 8, f"the CSV: {rows[:2]}")
page = open(path("b.html")).read()
check(page.count("<table>") == 2 and "vermin" in page and "stability" in page, "the HTML page: a table per method and label")
check("attention, toxic" in out and "stability" in out, "the table printed")

# One class per row: each class its own words.
attn("aggregate", "--model", path("classes"), "--csv", path("corpus.jsonl"), "--methods", "attention", "--top", "4", "--json", path("c.json"))
classes = json.load(open(path("c.json")))["methods"]["attention"]
check(set(w["word"] for w in classes["hatespeech"]["words"]) == set(HATE), f"hatespeech: {classes['hatespeech']['words']}")
check(set(w["word"] for w in classes["offensive"]["words"]) == set(OFFENSIVE), f"offensive: {classes['offensive']['words']}")

# Two local workers share the chunks: the bytes one process writes.
attn("aggregate", "--model", path("classes"), "--csv", path("corpus.jsonl"), "--methods", "attention", "--top", "4", "--json", path("c2.json"),
     "--nproc", "2", "--threads", "1")
check(open(path("c2.json")).read() == open(path("c.json")).read(), "--nproc 2: the same JSON, byte for byte")

# Bad input.
bad = attn("aggregate", "--model", path("binary"), "--csv", path("missing.csv"), ok=False)
check(bad.returncode == 1 and "missing.csv" in bad.stderr, f"a missing file ({bad.stderr.strip()})")
bad = attn("aggregate", "--model", path("binary"), "--csv", path("corpus.jsonl"), "--top", "0", "--json", path("x.json"), ok=False)
check(bad.returncode == 2 and "--top must be >= 1" in bad.stderr and not os.path.exists(path("x.json")), f"--top 0 ({bad.stderr.strip()})")
bad = attn("aggregate", "--model", path("binary"), "--csv", path("corpus.jsonl"), "--methods", "nope", ok=False)
check(bad.returncode == 2 and "nope" in bad.stderr, f"an unknown method ({bad.stderr.strip()})")
finish()
