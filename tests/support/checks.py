"""What the Python tests share: check() records an assertion (printing a failure at once,
so one run shows them all), finish() prints the tally and exits non-zero if any failed; runner()
runs attn's commands; workspace() sets a test's run up; NICE_WORDS, everyday words of generated comments;
planted_post() makes a generated post of one class per row; span_post() a post in Toxic Spans'
layout with its marked characters."""
import os
import shutil
import subprocess
import sys

failures, count = [], 0


def check(cond, what):
    global count
    count += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def finish(skipped=False):
    """Exit status: 1 when a check failed, else 77 (CTest's skip) when part was `skipped`, else 0."""
    print(f"{count - len(failures)} of {count} checks passed" + ("; some skipped" if skipped else ""))
    sys.exit(1 if failures else 77 if skipped else 0)


def runner(binary):
    """attn(*args, ok=True): runs `binary ARGS...` capturing its output; when `ok`, a failure ends the test
    with its stderr (the checks that expect one pass ok=False and read the returned process)."""
    def attn(*args, ok=True):
        p = subprocess.run([binary, *args], capture_output=True, text=True)
        if ok and p.returncode != 0:
            sys.exit(f"attn {' '.join(args)} failed: {p.stderr}")
        return p
    return attn


def workspace():
    """(attn, path) of a test run as `TEST.py ATTN WORK_DIR`: the runner of ATTN, and path(name) in
    WORK_DIR, emptied first."""
    binary, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    return runner(binary), lambda name: os.path.join(work, name)


def planted_post(i, words, hate, offensive):
    """(post id, text, class) of generated post i: its class by i % 3 (hate speech, offensive, normal),
    its text `words` with, in a hate speech or offensive post, the class's planted word (hate[i % 3] or
    offensive[i % 3]) inserted at i % len(words)."""
    label = ("hatespeech", "offensive", "normal")[i % 3]
    if label != "normal":
        words.insert(i % len(words), (hate if label == "hatespeech" else offensive)[i % 3])
    return f"p{i}", " ".join(words), label


# Everyday words of generated comments, none of them a label's cue.
NICE_WORDS = ["thanks", "good", "edit", "page", "fine", "see", "talk", "source", "today", "friends", "please", "article", "help", "read"]


TOXIC_WORDS = ["idiot", "moron", "stupid", "loser", "pathetic"]


def span_post(i):
    """(spans, text) of generated post i in Toxic Spans' layout: everyday words and, in four posts of
    five, a planted toxic word (with punctuation after it or not) whose letters people "marked"."""
    import json
    import random
    import re
    rng = random.Random(i)
    words = [rng.choice(NICE_WORDS) for _ in range(rng.randint(4, 10))]
    marked = []
    if i % 5:
        at = rng.randrange(len(words) + 1)
        words.insert(at, rng.choice(TOXIC_WORDS) + rng.choice(["", ",", "!!", "."]))
        start = len(" ".join(words[:at])) + (1 if at else 0)
        marked = list(range(start, start + len(re.sub(r"\W", "", words[at]))))
    return json.dumps(marked), " ".join(words)


def write_span_posts(path, first, last):
    """Posts first .. last - 1 of span_post as a CSV (spans, text)."""
    import csv
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["spans", "text"])
        w.writerows(span_post(i) for i in range(first, last))
