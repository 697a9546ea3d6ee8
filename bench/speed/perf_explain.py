#!/usr/bin/env python3
"""Start-up: `attn explain` of one sentence, model load included, against a C++ program that only
loads LibTorch (bin/libtorch_floor: the floor every LibTorch program pays) and the Python way
(import torch, torch.jit.load, keras_preprocessing's tokenizer_from_json, pad to maxlen, one forward),
on the seed-sized model of a Jigsaw-profile run. Whole processes, alternated, medians.

usage: python3 bench/speed/perf_explain.py [--model RUN_DIR] [--runs 11] [--out bench/speed/results/perf_explain.json]
Target: attn explain within 150 ms of the floor.
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, JIGSAW_MODEL_HELP, PYTHON, jigsaw_model, median_of, result_path, workdir, write_result  # noqa: E402

PYTHON_WAY = r"""
import json, sys
import torch
from keras_preprocessing.sequence import pad_sequences
from keras_preprocessing.text import tokenizer_from_json
extra = {"config.json": "", "tokenizer.json": ""}
model = torch.jit.load(sys.argv[1], _extra_files=extra)
config = json.loads(extra["config.json"])
tokenizer = tokenizer_from_json(extra["tokenizer.json"])
x = pad_sequences(tokenizer.texts_to_sequences([sys.argv[2]]), maxlen=config["data"]["maxlen"])
with torch.no_grad():
    probabilities, attention = model(torch.tensor(x, dtype=torch.int64))
print(dict(zip(config["data"]["labels"], probabilities[0].tolist())))
"""


def seconds(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help=JIGSAW_MODEL_HELP)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--out", default=result_path(__file__, "perf_explain.json"))
    args = ap.parse_args()
    run = args.model or jigsaw_model(workdir("perf-explain"))
    model = os.path.join(run, "model.pt")
    sentence = "ice cream sucks"
    commands = {
        "libtorch_floor": [os.path.join(BIN, "libtorch_floor")],
        "attn_explain": [ATTN, "explain", "--model", model, sentence],
        "python": [PYTHON, "-c", PYTHON_WAY, model, sentence],
    }
    times = {name: [] for name in commands}
    for i in range(args.runs):
        for name, cmd in commands.items():
            times[name].append(seconds(cmd))
        print(f"run {i + 1}/{args.runs}: " + ", ".join(f"{n} {t[-1]:.3f} s" for n, t in times.items()), file=sys.stderr)
    median = {name: round(median_of(t), 4) for name, t in times.items()}
    result = {
        "benchmark": "attn explain of one sentence, whole process (model load included), against a program that only loads LibTorch and the Python way",
        "model": {"run": run, "model_pt_bytes": os.path.getsize(model),
                  "tokenizer_json_bytes": os.path.getsize(os.path.join(run, "tokenizer.json"))},
        "runs": {name: [round(x, 4) for x in t] for name, t in times.items()},
        "median_seconds": median,
        "attn_over_floor_seconds": round(median["attn_explain"] - median["libtorch_floor"], 4),
        "python_over_attn": round(median["python"] / median["attn_explain"], 2),
        "target": {"attn_over_floor_seconds_at_most": 0.15},
    }
    result["target_met"] = result["attn_over_floor_seconds"] <= 0.15
    write_result(args.out, result, show=("median_seconds", "attn_over_floor_seconds", "python_over_attn", "target_met"))


if __name__ == "__main__":
    main()
