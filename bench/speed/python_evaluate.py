#!/usr/bin/env python3
"""The obvious Python way to score a CSV with an attn model, for bench/speed/perf_evaluate.py to compare
against: torch.jit.load of model.pt, its embedded Keras tokenizer, pad_sequences to the run's
maxlen, forward in batches of 512. Prints its timings as JSON.

usage: python_evaluate.py MODEL.pt CSV [THREADS]
"""
import csv
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import peer_usage  # noqa: E402

peer_usage(__doc__, 2)
t0 = time.perf_counter()
import torch  # noqa: E402
from keras_preprocessing.sequence import pad_sequences  # noqa: E402
from keras_preprocessing.text import tokenizer_from_json  # noqa: E402

torch.set_num_threads(int(sys.argv[3]) if len(sys.argv) > 3 else 2)
extra = {"config.json": "", "tokenizer.json": ""}
model = torch.jit.load(sys.argv[1], _extra_files=extra)
model.eval()
config = json.loads(extra["config.json"])
tokenizer = tokenizer_from_json(extra["tokenizer.json"])
t1 = time.perf_counter()
csv.field_size_limit(1 << 30)
with open(sys.argv[2], newline="", encoding="utf-8") as f:
    texts = [row[config["data"].get("text_column", "comment_text")] for row in csv.DictReader(f)]
x = pad_sequences(tokenizer.texts_to_sequences(texts), maxlen=config["data"]["maxlen"])
t2 = time.perf_counter()
probabilities = []
with torch.no_grad():
    for i in range(0, len(x), 512):
        p, _ = model(torch.tensor(x[i:i + 512], dtype=torch.int64))
        probabilities.append(p)
t3 = time.perf_counter()
print(json.dumps({"rows": len(texts), "load_seconds": t1 - t0, "tokenize_and_pad_seconds": t2 - t1,
                  "forward_seconds": t3 - t2, "total_seconds": t3 - t0}))
