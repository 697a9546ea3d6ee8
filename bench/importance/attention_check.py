#!/usr/bin/env python3
"""Does the model attend to the words that made a comment toxic? For the held-out toxic rows of a
generated corpus (the last 20%, as training held them out), take the word with the highest
attention weight (from `attn explain --json`) and check that it is one of the generator's toxic
words. Writes the figures as JSON.

usage: python3 bench/importance/attention_check.py RUN_DIR CORPUS.csv [--out bench/importance/results/attention.json]
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import attn, result_path, write_result  # noqa: E402

# The generator's vocabulary of toxicity (lib/src/data/toxic_corpus.cpp: kTriggers, kThreat, kIdentity).
TRIGGERS = {"stupid", "idiot", "moron", "loser", "pathetic", "sucks", "worthless", "crap", "damn", "garbage", "dumb",
            "fool", "disgusting", "hate", "shut", "ugly"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("corpus")
    ap.add_argument("--out", default=result_path(__file__, "attention.json"))
    args = ap.parse_args()
    rows = list(csv.DictReader(open(args.corpus, newline="", encoding="utf-8")))
    held_out = rows[len(rows) - len(rows) // 5:]
    toxic = [r for r in held_out if r["toxic"] == "1"]
    texts = [r["comment_text"].replace("\r", " ").replace("\n", " ") for r in toxic]
    out = attn("explain", "--model", args.run, "--json", input="\n".join(texts) + "\n", capture=True).stdout
    explained = [json.loads(line) for line in out.splitlines()]
    with_trigger = hits = 0
    for e in explained:
        words = [w for w in e["words"] if w["status"] in ("kept", "oov")]
        tokens = {t for w in words for t in w["tokens"]}
        if not tokens & TRIGGERS:
            continue  # a row made toxic by label noise or by a threat/identity phrase only
        with_trigger += 1
        top = max(words, key=lambda w: w["weight"])
        hits += any(t in TRIGGERS for t in top["tokens"])
    result = {"held_out_toxic_rows": len(toxic), "rows_with_a_toxic_word": with_trigger,
              "top_word_is_a_toxic_word": hits, "fraction": hits / with_trigger if with_trigger else None}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
