#!/usr/bin/env python3
"""Writes tests/fixtures/messy_comments.csv: Jigsaw-layout rows with the text that breaks naive Keras
ports (CRLF and lone CR inside quoted fields, İ, final sigma, ẞ, emoji, apostrophes, curly quotes,
empty and whitespace-only comments) plus filler rows whose word counts tie at the num_words=50 cut.
Deterministic; rerun it only to change the fixture. Uses the csv module so quoting is RFC 4180."""
import csv
import random
import sys

LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]

MESSY = [
    "Hello\r\nWorld",
    "a.\r\n\r\nb",
    "\r\n",
    "",
    "   ",
    "\t\t",
    "İstanbul is not istanbul",
    "ΟΔΥΣΣΕΥΣ and ΣΑΣ's and ΣΑΣ.Σ and a lone Σ",
    "STRASSE ẞ ß Straße",
    "ǅ Ǆ KELVIN \u212a ANGSTROM \u212b Ｆｕｌｌｗｉｄｔｈ",
    "don't 'quoted' rock'n'roll '''bold''' '' ''''",
    "don’t “smart quotes” «guillemets» — dash … ellipsis ¿que? ¡si!",
    "3.14 1,000,000 -17 $100 192.168.0.1 42nd 1e10 007",
    "https://www.example.com/a?q=1 mail me@example.org ~user",
    "😀😀 hi🙂there 中文字符 👨‍👩‍👧 family",
    "tabs\tand\nnewlines\rand\vvertical\ffeeds",
    "NBSP\u00a0inside EM\u2003space IDEO\u3000space LS\u2028sep ZW\u200bsp BOM\ufeffin",
    "precomposed é vs e\u0301 combining",
    "non-ASCII digits ٣ １２３ stay",
    "!!! ... -- ~~~~ only punctuation",
    "ice cream sucks",
    "ice cream is worthless",
    "\"Quoted, with commas\" and \"\"doubled\"\" quotes",
    "line one\nline two\rline three\r\nline four",
    "Ünïcödé ÀÉÎÕÜ ÇA VA Ελληνικά ΚΕΦΑΛΑΙΑ Кириллица ПРОПИСНЫЕ",
    "<OOV> oov OOV literal",
    "trailing spaces and CR   \r",
]

WORDS = ("the a and you is to of that it in this for not are be on have with your as was "
         "but what if so page article edit talk please wikipedia can just like will about "
         "stupid idiot hate sucks worthless ice cream thanks good bad really time people").split()


def main(path):
    rng = random.Random(20261121)
    rows = []
    for i, text in enumerate(MESSY):
        labels = [0] * 6
        if "sucks" in text or "worthless" in text:
            labels = [1, 0, 1, 0, 1, 0]
        rows.append([f"m{i:04d}", text] + labels)
    for i in range(120):
        n = rng.choice([0, 1, 3, 5, 8, 13, 21, 34])
        words = [rng.choice(WORDS) for _ in range(n)]
        if rng.random() < 0.2:
            words = [w.upper() for w in words]
        sep = rng.choice([" ", " ", " ", "\r\n", "\n", ", "])
        text = sep.join(words)
        toxic = int(any(w.lower() in ("stupid", "idiot", "hate", "sucks") for w in words))
        rows.append([f"g{i:04d}", text, toxic, 0, toxic, 0, toxic, 0])
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\r\n")
        w.writerow(["id", "comment_text"] + LABELS)
        w.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/messy_comments.csv")
