#!/usr/bin/env python3
"""The main job's faithfulness figures (docs/importance.md, README): `attn faithfulness` on the rows
the main job's training held out (the last 20% of data/toxic_sample.csv): 400 of them, and 300 of
those labelled toxic; every method, every label, 50 steps, 2 threads. Writes both files' figures
into one JSON.

usage: python3 bench/importance/run_faithfulness_main.py [--model runs/toxic] [--out bench/importance/results/faithfulness_main.json]
(runs/toxic: `bash scripts/main.sh`)
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, PYTHON, ROOT, result_path, timed, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser()
ap.add_argument("--model", default=os.path.join(ROOT, "runs", "toxic"))
ap.add_argument("--out", default=result_path(__file__, "faithfulness_main.json"))
args = ap.parse_args()
if not os.path.exists(os.path.join(args.model, "model.pt")):
    sys.exit(f"{args.model}/model.pt: not found (bash scripts/main.sh trains it)")

work = workdir("faithfulness-main")
sample = os.path.join(ROOT, "data", "toxic_sample.csv")
result = {"model": args.model, "csv": "data/toxic_sample.csv (its last 20%: the rows training held out)", "threads": 2, "steps": 50}
for name, rows, label in (("heldout_400", 400, None), ("heldout_toxic_300", 300, "toxic")):
    csv = os.path.join(work, name + ".csv")
    subprocess.run([PYTHON, os.path.join(HERE, "heldout_csv.py"), sample, csv] + (["--label", label] if label else []), check=True,
                   stdout=subprocess.DEVNULL)
    out = os.path.join(work, name + ".json")
    seconds, _ = timed(subprocess.run, [ATTN, "faithfulness", "--model", args.model, "--csv", csv, "--rows", str(rows), "--threads", "2",
                                        "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        figures = json.load(f)
    figures.pop("csv", None)  # a temporary file
    figures["seconds"] = round(seconds, 2)
    result[name] = figures
write_result(args.out, result)
