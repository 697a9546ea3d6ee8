#!/usr/bin/env python3
"""The rows a run held out: the last --val-split of a CSV (as attn train and Keras' validation_split
take them), optionally only those whose --label column is 1. Used for the main job's faithfulness
figures (docs/importance.md).

usage: python3 bench/importance/heldout_csv.py IN.csv OUT.csv [--val-split 0.2] [--label toxic]
"""
import argparse
import csv

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("out")
ap.add_argument("--val-split", type=float, default=0.2)
ap.add_argument("--label", help="keep only the rows whose LABEL column is 1")
args = ap.parse_args()
csv.field_size_limit(1 << 30)
rows = list(csv.reader(open(args.csv, newline="", encoding="utf-8")))
header, body = rows[0], rows[1:]
held = body[len(body) - int(len(body) * args.val_split):]
if args.label:
    held = [r for r in held if r[header.index(args.label)] == "1"]
with open(args.out, "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(header)
    w.writerows(held)
print(f"{len(held)} rows -> {args.out}")
