#!/usr/bin/env python3
"""Outputs unchanged: every command that reads a trained model run by this tree's build and by an
older commit's (built beside it in build/baselines/, as the speed guard bench/speed/check_regressions.py
builds it) on the same generated data, and each output compared byte for byte. For a change that
restructures code and must not change what a user gets (docs/testing.md).

  model.pt      attn train of a small bilstm-attention, fixed seed, one thread (the weights, config
                and tokenizer as written)
  explain       --json of a few texts with every importance method
  evaluate      --predictions and --metrics
  faithfulness  --json and --per-row of 40 rows
  plausibility  --json against marks made from the file (a Toxic Spans CSV: the longest word of each row)
  aggregate     --json of the file's words per label
  audit         --json: templates, the file's texts with identity terms swapped, integrated gradients
  robustness    --json: every perturbation at 30%

Every command but train reads the baseline's model.pt, so a difference is the command's, not the
model's. Prints one line per output (same / DIFFERENT) and writes bench/dev/results/outputs.json.

usage: python3 bench/dev/check_outputs.py --baseline COMMIT [--out bench/dev/results/outputs.json]
Needs this tree built (scripts/setup.sh). About 3 minutes once both builds exist.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import BIN, build_baseline, result_path, workdir, write_result  # noqa: E402

TARGETS = ["attn", "attn-datagen", "attn-train", "attn-explain", "attn-evaluate", "attn-faithfulness", "attn-plausibility",
           "attn-aggregate", "attn-audit", "attn-robustness"]
TEXTS = ["thanks for the edit, see the talk page", "you are a stupid idiot and this sucks", "", "i am a gay muslim woman"]


def run(argv):
    r = subprocess.run(argv, capture_output=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(argv)}\n{r.stderr.decode(errors='replace')[-2000:]}")
    return r.stdout


def spans_csv(toxic, path, rows=60):
    """A Toxic Spans CSV (spans, text) of `toxic`'s first rows: each row's longest word marked."""
    with open(toxic, newline="") as f, open(path, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["spans", "text"])
        for i, row in enumerate(csv.DictReader(f)):
            if i == rows:
                break
            text = row["comment_text"]
            word = max(text.split(), key=len, default="")
            at = text.find(word) if word else -1
            w.writerow([json.dumps(list(range(at, at + len(word))) if at >= 0 else []), text])


def trained_model(bin_dir, work, data):
    """model.pt's bytes of a small fixed-seed run trained with the commands in bin_dir, in WORK/run
    (both builds train in the same directory: config.json records it)."""
    run_dir = os.path.join(work, "run")
    shutil.rmtree(run_dir, ignore_errors=True)
    run([os.path.join(bin_dir, "attn"), "train", "--csv", data["toxic"], "--out", run_dir, "--epochs", "1", "--batch-size", "64",
         "--set", "embed_dim=16", "--set", "lstm_units=8", "--threads", "1"])
    with open(os.path.join(run_dir, "model.pt"), "rb") as f:
        return f.read()


def outputs(bin_dir, work, model, data):
    """{name: bytes} of every command run with the commands in bin_dir on `model`, its files in `work`
    (a path both builds use in turn, as the outputs name it)."""
    attn = os.path.join(bin_dir, "attn")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    f = lambda name: os.path.join(work, name)  # noqa: E731
    got = {}
    got["explain"] = run([attn, "explain", "--model", model, "--json", "--methods",
                          "attention,gradient,grad-input,integrated-gradients,leave-one-out", *TEXTS])
    got["evaluate stdout"] = run([attn, "evaluate", "--model", model, "--csv", data["toxic"], "--predictions", f("p.csv"),
                                  "--metrics", f("m.json")])
    got["faithfulness stdout"] = run([attn, "faithfulness", "--model", model, "--csv", data["toxic"], "--rows", "40",
                                      "--json", f("faith.json"), "--per-row", f("faith.jsonl")])
    got["plausibility stdout"] = run([attn, "plausibility", "--model", model, "--rationales", data["spans"], "--json", f("plaus.json")])
    got["aggregate stdout"] = run([attn, "aggregate", "--model", model, "--csv", data["toxic"], "--json", f("agg.json")])
    got["audit stdout"] = run([attn, "audit", "--model", model, "--csv", data["toxic"], "--json", f("audit.json")])
    got["robustness stdout"] = run([attn, "robustness", "--model", model, "--csv", data["toxic"], "--json", f("rob.json")])
    for name in ["p.csv", "m.json", "faith.json", "faith.jsonl", "plaus.json", "agg.json", "audit.json", "rob.json"]:
        with open(f(name), "rb") as fh:
            got[name] = fh.read()
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="the commit to compare with (e.g. origin/main)")
    ap.add_argument("--out", default=result_path(__file__, "outputs.json"))
    a = ap.parse_args()
    base_bin, sha = build_baseline(a.baseline, TARGETS)
    work = workdir("check_outputs")
    data = {"toxic": os.path.join(work, "toxic.csv"), "spans": os.path.join(work, "spans.csv")}
    run([os.path.join(BIN, "attn"), "datagen", "toxic", "--rows", "2000", "--seed", "5", "--out", data["toxic"]])
    spans_csv(data["toxic"], data["spans"])
    base = {"model.pt": trained_model(base_bin, work, data)}
    model = os.path.join(work, "model.pt")
    with open(model, "wb") as f:
        f.write(base["model.pt"])
    tree = {"model.pt": trained_model(BIN, work, data)}
    base.update(outputs(base_bin, os.path.join(work, "out"), model, data))
    tree.update(outputs(BIN, os.path.join(work, "out"), model, data))
    rows = {}
    for name in base:
        same = base[name] == tree[name]
        rows[name] = {"same": same, "bytes": len(tree[name])}
        print(f"{name:22s} {'same' if same else 'DIFFERENT'} ({len(base[name])} / {len(tree[name])} bytes)")
    write_result(a.out, {"baseline": sha, "outputs": rows, "all_same": all(r["same"] for r in rows.values())})
    return 0 if all(r["same"] for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
