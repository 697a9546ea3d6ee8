#!/usr/bin/env python3
"""Huge inputs: time and peak memory of attn's commands against input size, to show that both grow
linearly (no quadratic path in the CSV reader, the tokenizer, explain's word alignment or evaluate).

Two series, each command a whole process (peak RSS from wait4):
  - one comment of 1.25, 2.5, 5 and 10 MB (the toxic sample's comments joined into one line):
    prepare (a one-row CSV), tokenize (stdin), explain and explain --json (stdin: every one of the
    comment's 1.8 million words is listed, dropped ones included), evaluate (the one-row CSV);
  - Jigsaw-profile CSVs of 125k, 250k, 500k and 1M rows (bench/gen_jigsaw_profile):
    prepare, tokenize --csv, evaluate.
The model is a small bilstm-attention (embed 16, 8 LSTM units) trained for one epoch on data/: the
model's own cost is linear in rows by construction; what is measured is attn's handling of the input.
For each command the figures include seconds and MB per input MB at the largest size against the
smallest ("growth": 1.0 = linear).

usage: python3 bench/scale/run_huge_inputs.py [--quick] [--out bench/scale/results/huge_inputs.json]
Needs a built tree (bash scripts/setup.sh; gen_jigsaw_profile is built with the benchmarks).
"""
import argparse
import csv
import os
import platform
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, attn, result_path, run_with_rss, workdir, write_result  # noqa: E402

LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def run_stdin(cmd, stdin_path):
    """run_with_rss with stdin from a file."""
    fd = os.open(stdin_path, os.O_RDONLY)
    saved = os.dup(0)
    os.dup2(fd, 0)
    try:
        return run_with_rss(cmd)
    finally:
        os.dup2(saved, 0)
        os.close(fd)
        os.close(saved)


def comment_of(megabytes, texts):
    """One line of about `megabytes` MB made of the sample's comments."""
    target = int(megabytes * 1_000_000)
    parts, size = [], 0
    while size < target:
        for t in texts:
            t = " ".join(t.split())
            parts.append(t)
            size += len(t.encode()) + 1
            if size >= target:
                break
    return " ".join(parts)


def measure(series, size, unit, input_mb, commands):
    rows = []
    for name, cmd, stdin in commands:
        seconds, rss = run_stdin(cmd, stdin) if stdin else run_with_rss(cmd)
        print(f"{series} {size} {unit}: {name}: {seconds:.2f} s, {rss:.0f} MB", file=sys.stderr)
        rows.append({"command": name, unit: size, "input_mb": round(input_mb, 2), "seconds": round(seconds, 3),
                     "peak_rss_mb": round(rss, 1)})
    return rows


def growth(points, unit):
    """Per command: seconds and RSS per input MB at the largest size over the smallest."""
    out = {}
    for name in sorted({p["command"] for p in points}):
        ps = sorted((p for p in points if p["command"] == name), key=lambda p: p[unit])
        lo, hi = ps[0], ps[-1]
        scale = hi["input_mb"] / lo["input_mb"]
        out[name] = {"input_scale": round(scale, 2), "time_scale": round(hi["seconds"] / lo["seconds"], 2),
                     "rss_scale": round(hi["peak_rss_mb"] / lo["peak_rss_mb"], 2),
                     "time_growth": round(hi["seconds"] / lo["seconds"] / scale, 2),
                     "rss_over_input_at_largest": round(hi["peak_rss_mb"] / hi["input_mb"], 2)}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="sizes / 8 (a smoke run)")
    ap.add_argument("--out", default=result_path(__file__, "huge_inputs.json"))
    args = ap.parse_args()
    div = 8 if args.quick else 1
    work = workdir("huge")
    sample = os.path.join(os.path.dirname(BIN), "..", "data", "toxic_sample.csv")
    model = os.path.join(work, "model")
    attn("train", "--csv", sample, "--out", model, "--epochs", "1", "--batch-size", "256", "--set", "embed_dim=16",
         "--set", "lstm_units=8", "--threads", "1")
    with open(sample, newline="", encoding="utf-8") as f:
        texts = [r["comment_text"] for r in csv.DictReader(f)]

    comment_points = []
    for mb in [1.25 / div, 2.5 / div, 5 / div, 10 / div]:
        text = comment_of(mb, texts)
        line = os.path.join(work, f"comment-{mb}.txt")
        with open(line, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        one_row = os.path.join(work, f"comment-{mb}.csv")
        with open(one_row, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["id", "comment_text"] + LABELS)
            w.writerow(["huge", text] + [1, 0, 1, 0, 1, 0])
        input_mb = os.path.getsize(line) / 1e6
        comment_points += measure("comment", mb, "comment_mb", input_mb, [
            ("prepare", [ATTN, "prepare", "--csv", one_row, "--out", os.path.join(work, f"p-{mb}")], None),
            ("tokenize", [ATTN, "tokenize", "--tokenizer", os.path.join(model, "tokenizer.json")], line),
            ("explain", [ATTN, "explain", "--model", model, "--threads", "1"], line),
            ("explain --json", [ATTN, "explain", "--model", model, "--threads", "1", "--json"], line),
            ("evaluate", [ATTN, "evaluate", "--model", model, "--csv", one_row, "--threads", "1"], None),
        ])
        os.remove(line)

    row_points = []
    for n in [125_000 // div, 250_000 // div, 500_000 // div, 1_000_000 // div]:
        corpus = os.path.join(work, f"rows-{n}.csv")
        subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, str(n), "2018"], check=True)
        input_mb = os.path.getsize(corpus) / 1e6
        out = os.path.join(work, f"rows-{n}")
        row_points += measure("rows", n, "rows", input_mb, [
            ("prepare", [ATTN, "prepare", "--csv", corpus, "--out", out], None),
            ("tokenize", [ATTN, "tokenize", "--tokenizer", os.path.join(model, "tokenizer.json"), "--csv", corpus], None),
            ("evaluate", [ATTN, "evaluate", "--model", model, "--csv", corpus, "--threads", "1",
                          "--predictions", os.path.join(work, f"pred-{n}.csv")], None),
        ])
        subprocess.run(["rm", "-rf", corpus, out, os.path.join(work, f"pred-{n}.csv")], check=True)

    result = {
        "what": "time and peak RSS of whole attn processes against input size; growth 1.0 = linear",
        "model": "bilstm-attention, embed_dim 16, lstm_units 8, maxlen 200, trained 1 epoch on data/toxic_sample.csv",
        "host": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "threads": 1,
        "single_comment": {"points": comment_points, "growth": growth(comment_points, "comment_mb")},
        "many_rows": {"points": row_points, "growth": growth(row_points, "rows")},
    }
    write_result(args.out, result, show=["single_comment", "many_rows"] if args.quick else None)
    subprocess.run(["rm", "-rf", work], check=True)


if __name__ == "__main__":
    main()
