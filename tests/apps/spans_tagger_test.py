#!/usr/bin/env python3
"""The span tagger end to end, on generated posts in Toxic Spans' layout (spans, text) whose planted
words people "marked": `attn train` with --spans-column and no --model trains bilstm-tagger; on posts
it never saw `attn spans` finds the planted words' characters (not the punctuation around them);
`attn explain` shows them (text, JSON); `attn evaluate` scores them; model.pt from Python
(torch.jit.load): the model's own subword_ids gives attn's per-token probabilities; --resume continues
the run; --nproc 2 learns as one process; and the inputs' misuse refused.

usage: spans_tagger_test.py ATTN WORK_DIR
"""
import csv
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish, workspace, write_span_posts  # noqa: E402

attn, path = workspace()
write_span_posts(path("train.csv"), 0, 600)
write_span_posts(path("test.csv"), 600, 700)
common = ["train", "--csv", path("train.csv"), "--text-column", "text", "--spans-column", "spans", "--set", "embed_dim=16",
          "--set", "lstm_units=8", "--pretrain-epochs", "0", "--lr", "0.01", "--seed", "2", "--threads", "2"]
attn(*common, "--epochs", "4", "--out", path("run"))
config = json.load(open(path("run/config.json")))
check(config["model"] == "bilstm-tagger" and config["task"] == "span-tagging", f"--spans-column trains bilstm-tagger ({config['model']})")
check("span_f1_after" in config.get("logit_adjustment", {}), "the threshold is learned on the held-out rows by default")
check(config["training"]["span_f1_loss"] == 1, f"each text's soft F1 is in the loss by default ({config['training'].get('span_f1_loss')})")

scored = json.loads(attn("spans", "--model", path("run"), "--csv", path("test.csv"), "--json", path("spans.json")).stdout)
check(scored["source"] == "tagger" and scored["f1"] >= 0.9, f"attn spans: the planted words of unseen posts ({scored})")
got = json.load(open(path("spans.json")))["per_row"]
with open(path("test.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
exact = sum(r["spans"] == json.dumps(g["spans"]) for r, g in zip(rows, got))
check(exact >= 90, f"{exact} of 100 posts marked exactly as people marked them (letters, not the punctuation)")

text = "thanks, you idiot!! see the page"
e = json.loads(attn("explain", "--model", path("run"), "--json", text).stdout.splitlines()[0])
check(e["spans"] == list(range(12, 17)) and e["marked"][0]["text"] == "idiot", f"attn explain --json: the offsets of 'idiot' ({e['spans']})")
shown = attn("explain", "--model", path("run"), text).stdout
check(shown.startswith("marked: [idiot]") and "^ idiot!!" in shown, f"attn explain: the marked run and the marked word\n{shown}")
attn("evaluate", "--model", path("run"), "--csv", path("test.csv"), "--metrics", path("metrics.json"))
metrics = json.load(open(path("metrics.json")))
check(abs(metrics["span_f1"] - scored["f1"]) < 1e-9, f"attn evaluate's character F1 is attn spans' ({metrics['span_f1']})")

# model.pt from Python: Keras' text_to_word_sequence, the tokenizer's word rows, subword_ids -> attn's probabilities
try:
    import torch
    extra = {"config.json": "", "tokenizer.json": ""}
    model = torch.jit.load(path("run/model.pt"), _extra_files=extra)
    model.eval()
    tok = json.loads(extra["tokenizer.json"])["config"]
    word_index, num_words = json.loads(tok["word_index"]), tok["num_words"]
    words = [w for w in re.sub("[" + re.escape(tok["filters"]) + "]", " ", text.lower()).split(" ") if w]
    ids = [word_index[w] if w in word_index and word_index[w] < num_words else 0 for w in words]
    with torch.no_grad():
        p = model(model.subword_ids(words, ids))[0]
    gap = max(abs(a - b) for a, b in zip(p.tolist(), e["token_probabilities"]))
    check(len(p) == len(e["token_probabilities"]) and gap <= 1e-6, f"Python's per-token probabilities are attn's (gap {gap})")
    skipped = False
except ImportError:
    skipped = True

# --resume: 2 epochs, then to 4, gives the run trained 4 at once
attn(*common, "--epochs", "2", "--out", path("part"))
attn("train", "--resume", path("part"), "--epochs", "4")
again = json.loads(attn("explain", "--model", path("part"), "--json", text).stdout.splitlines()[0])
check(again["token_probabilities"] == e["token_probabilities"], "--resume continues the run exactly")

# --nproc 2: two workers share each batch (its tokens weigh each share's loss) and find the planted words too
per_worker = list(common)
per_worker[per_worker.index("--threads") + 1] = "1"  # a thread each on 2 cores
attn(*per_worker, "--epochs", "4", "--nproc", "2", "--out", path("workers"))
shared = json.loads(attn("spans", "--model", path("workers"), "--csv", path("test.csv")).stdout)
check(shared["f1"] >= 0.9, f"--nproc 2 learns the planted words as one process does ({shared['f1']:.3f} against {scored['f1']:.3f})")

# --set crf=true: the linear-chain CRF over the tags learns the planted words too
attn(*common, "--set", "crf=true", "--epochs", "4", "--out", path("crf"))
chained = json.loads(attn("spans", "--model", path("crf"), "--csv", path("test.csv")).stdout)
check(chained["f1"] >= 0.9, f"--set crf=true learns the planted words ({chained['f1']:.3f})")

both = attn(*common, "--label-column", "label", "--out", path("both"), ok=False)
check(both.returncode == 2 and "--spans-column is for span-tagging" in both.stderr and "--label-column is for" in both.stderr,
      f"--spans-column with --label-column: exit 2, saying which task reads which ({both.returncode}: {both.stderr.strip()})")
wrong = attn(*common, "--model", "bilstm-attention", "--out", path("wrong"), ok=False)
check(wrong.returncode == 2 and "--spans-column" in wrong.stderr, f"bilstm-attention does not read --spans-column ({wrong.stderr.strip()})")
weighed = attn(*common, "--set", "crf=true", "--pos-weight", "auto", "--out", path("weighed"), ok=False)
check(weighed.returncode == 2 and "--pos-weight: weighs the tokens of a tagger without a CRF" in weighed.stderr
      and not os.path.exists(path("weighed")), f"--pos-weight with the CRF: exit 2 before anything is written ({weighed.stderr.strip()})")
with open(path("labels.csv"), "w") as f:
    f.write("text,toxic\nyou idiot,1\nnice day,0\n")
other = attn("train", "--csv", path("labels.csv"), "--text-column", "text", "--labels", "toxic", "--span-f1-loss", "1", "--out",
             path("other"), ok=False)
check(other.returncode == 2 and "--span-f1-loss is for span taggers" in other.stderr and not os.path.exists(path("other")),
      f"--span-f1-loss for a classifier: exit 2 before anything is written ({other.stderr.strip()})")
with open(path("bad.csv"), "w") as f:
    f.write('spans,text\n"[0, 1]",ab\n"[0, 9]",ab\n')
bad = attn("train", "--csv", path("bad.csv"), "--text-column", "text", "--spans-column", "spans", "--out", path("bad"), ok=False)
check(bad.returncode == 1 and "bad.csv:3: column 1 (spans)" in bad.stderr, f"an offset beyond its text: exit 1 naming line and column ({bad.stderr.strip()})")
finish(skipped)
