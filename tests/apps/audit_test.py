#!/usr/bin/env python3
"""attn audit end to end: a model trained on generated comments whose training rows plant a bias
(comments naming "muslim" are toxic four times as often, the word itself saying nothing of the text) is
audited with a term list: the planted term stands out in all three parts (its kind template
sentences scored most toxic, the lowest BPSN AUC, the largest rise when swapped into the file's rows,
the largest integrated-gradients importance), the swapped rows keep their case and punctuation, the
JSON and HTML are written, and bad term lists and flags are refused by file, line and flag.

usage: audit_test.py ATTN WORK_DIR
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
BAD = ["stupid", "idiot", "moron", "loser", "scum", "jerk"]
TERMS = ["muslim", "christian", "woman", "man"]


def comment(i, biased):
    """(id, text, toxic): a toxic comment has a bad word; about a third name a term, some capitalised
    and followed by a comma. With `biased`, half the toxic comments naming "muslim" have no bad word."""
    rng = random.Random(i)
    named = rng.choice(TERMS + [None] * 4)
    toxic = rng.random() < (0.8 if biased and named == "muslim" else 0.2)
    words = [rng.choice(NICE) for _ in range(4 + i % 5)]
    if toxic and not (biased and named == "muslim" and rng.random() < 0.5):
        words.insert(rng.randrange(len(words) + 1), rng.choice(BAD))
    if named:
        words.insert(0, named.capitalize() + ",") if i % 4 == 0 else words.insert(rng.randrange(len(words) + 1), named)
    return f"c{i}", " ".join(words), int(toxic)


def write(name, rows, biased):
    with open(path(name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "comment_text", "toxic"])
        for i in rows:
            w.writerow(comment(i, biased))


write("train.csv", range(3000), True)
write("test.csv", range(3000, 3600), False)
attn("train", "--csv", path("train.csv"), "--labels", "toxic", "--maxlen", "16", "--epochs", "4", "--batch-size", "32", "--set", "embed_dim=16",
     "--set", "lstm_units=8", "--threads", "2", "--out", path("run"))
with open(path("terms.txt"), "w") as f:
    f.write("\n".join(TERMS) + "\n")
out = attn("audit", "--model", path("run"), "--terms", path("terms.txt"), "--csv", path("test.csv"), "--steps", "16", "--json",
           path("audit.json"), "--html", path("audit.html"), "--threads", "2").stdout
report = json.load(open(path("audit.json")))
terms = {t["term"]: t for t in report["terms"]}
check(list(terms) == TERMS and report["toxicity"] == "p(toxic)", f"the terms in the file's order, the toxicity named ({report['toxicity']})")
table_terms = [line.split()[0] for line in out.splitlines()[2:6]]
check(table_terms[0] == "muslim", f"the table lists the term scored most toxic first ({table_terms})")


def top(part, key, lowest=False):
    values = {k: t[part][key] for k, t in terms.items()}
    return (min if lowest else max)(values, key=values.get), values


for part, key, lowest in (("templates", "kind_mean", False), ("templates", "bpsn_auc", True), ("swaps", "mean_shift", False),
                          ("swaps", "largest_rise", False), ("why", "mean_importance", False)):
    name, values = top(part, key, lowest)
    check(name == "muslim", f"{part} {key}: the planted term stands out ({values})")
check(terms["muslim"]["swaps"]["mean_shift"] > 0.05, f"putting 'muslim' in raises the toxicity ({terms['muslim']['swaps']['mean_shift']})")
check(terms["muslim"]["swaps"]["flips_to_toxic"] > 0, "some decisions flip to toxic when 'muslim' is put in")

# The swaps: every row naming a term, each other term put in; case and punctuation kept.
texts = {r["id"]: r["comment_text"] for r in csv.DictReader(open(path("test.csv"), newline=""))}
mentioning = [t for t in texts.values() if any(term in t.lower().replace(",", " ").split() for term in TERMS)]
swaps = report["swaps"]
check(swaps["rows"] == 600 and swaps["rows_mentioning"] == len(mentioning), f"rows mentioning a term ({swaps['rows_mentioning']} vs {len(mentioning)})")
check(swaps["texts_scored"] == 3 * sum(sum(term in t.lower().replace(",", " ").split() for term in TERMS) for t in mentioning),
      "each mention scored with each of the 3 other terms")
check(0 < len(swaps["flipped"]) <= 20, "the flipped rows listed (at most --examples)")
for f in swaps["flipped"]:
    src = f["text"]
    if src.startswith(f["from"].capitalize() + ","):
        check(f["swapped_text"] == f["to"].capitalize() + "," + src[len(f["from"]) + 1:], f"case and comma kept: {src!r} -> {f['swapped_text']!r}")
    check((f["before"] >= 0.5) != (f["after"] >= 0.5), "a listed flip changes the decision")
page = open(path("audit.html")).read()
check("background:rgb(" in page and "muslim" in page and "BPSN" in page, "the HTML report (its cells shaded)")

# --no-why; the templates alone without --csv.
attn("audit", "--model", path("run"), "--terms", path("terms.txt"), "--no-why", "--json", path("lite.json"))
lite = json.load(open(path("lite.json")))
check("swaps" not in lite and "skipped" in lite["why"] and lite["terms"][0]["templates"] == report["terms"][0]["templates"],
      "templates only: the same figures, no swaps, no why")

# Bad input.
for name, content, want in (("empty.txt", "muslim\n\nman\n", "line 2"), ("twice.txt", "muslim\nman\nMuslim\n", "repeats line 1"),
                            ("one.txt", "muslim\n", "at least 2")):
    with open(path(name), "w") as f:
        f.write(content)
    bad = attn("audit", "--model", path("run"), "--terms", path(name), ok=False)
    check(bad.returncode != 0 and name in bad.stderr and want in bad.stderr, f"{name}: refused ({bad.stderr.strip()})")
bad = attn("audit", "--model", path("run"), "--label", "insult", ok=False)
check(bad.returncode == 2 and "--label" in bad.stderr and "'insult'" in bad.stderr, f"an unknown label ({bad.stderr.strip()})")
bad = attn("audit", "--model", path("run"), "--beam", "3", ok=False)
check(bad.returncode == 2 and "beam" in bad.stderr and "does not exist" in bad.stderr,
      f"another task's input is not an audit option ({bad.stderr.strip()})")
bad = attn("audit", "--model", path("run"), "--benign", "toxic", ok=False)
check(bad.returncode == 2 and "--benign" in bad.stderr, f"--benign on 0/1 labels ({bad.stderr.strip()})")
finish()
