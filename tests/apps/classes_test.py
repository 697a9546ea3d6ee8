#!/usr/bin/env python3
"""One class per row end to end, on generated posts in the formats public corpora come in: `attn
train --label-column` on JSON Lines (HateXplain's layout), validation from a TSV (OLID's: no
quoting, CRLF, BOMs), `attn evaluate` on a CSV writing a probability column per class and the
predicted class, `attn explain --label CLASS`; model.pt from Python (torch.jit.load): the classes in
their order, softmax probabilities equal to attn's; and the bad inputs, each an exit 1 naming file,
line and field.

usage: classes_test.py ATTN WORK_DIR
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish, planted_post, workspace  # noqa: E402

attn, path = workspace()

NICE = ["thanks", "good", "edit", "page", "fine", "see", "talk", "source", "today", "friends"]
HATE, OFFENSIVE = ["vermin", "subhuman", "parasites"], ["stupid", "idiot", "moron"]


def post(i):
    return planted_post(i, [NICE[(i * 7 + w * 3) % len(NICE)] for w in range(3 + i % 6)], HATE, OFFENSIVE)


with open(path("train.jsonl"), "w") as f:
    for i in range(900):
        pid, text, label = post(i)
        f.write(json.dumps({"post_id": pid, "text": text, "label": label, "annotators": [1, 2]}) + "\n")
with open(path("val.tsv"), "w", newline="") as f:  # OLID's quirks: no quoting, CRLF, a BOM at the start of some lines
    f.write("\ufeffpost_id\ttext\tlabel\r\n")
    for i in range(900, 1050):
        pid, text, label = post(i)
        f.write(("\ufeff" if i % 50 == 0 else "") + f'{pid}\t"{text}", said he\t{label}\r\n')
with open(path("test.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["post_id", "text", "label"])
    for i in range(1050, 1200):
        w.writerow(post(i))

RUN = path("run")
plan = json.loads(attn("train", "--csv", path("train.jsonl"), "--text-column", "text", "--id-column", "post_id", "--label-column",
                       "label", "--classes", "normal,offensive,hatespeech", "--out", RUN, "--dump-config").stdout)
check(plan["training"]["batch_size"] == 64 and plan["training"]["early_stopping_patience"] == 2,
      "one class per row: the task's recipe (batch 64, early stopping)")
attn("prepare", "--csv", path("train.jsonl"), "--text-column", "text", "--label-column", "label", "--out", path("prepared"))
plan = json.loads(attn("train", "--data", path("prepared"), "--out", RUN, "--dump-config").stdout)
check(plan["training"]["batch_size"] == 64, "attn prepare --label-column, then train --data: the same recipe")
attn("train", "--csv", path("train.jsonl"), "--text-column", "text", "--id-column", "post_id", "--label-column", "label",
     "--classes", "normal,offensive,hatespeech", "--val-csv", path("val.tsv"), "--maxlen", "16", "--epochs", "8", "--lr", "0.01",
     "--set", "embed_dim=16", "--set", "lstm_units=8", "--monitor", "val_macro_f1", "--word-only", "--out", RUN, "--threads", "2")
epochs = [json.loads(line) for line in open(os.path.join(RUN, "metrics.jsonl"))]
check(max(e["val_macro_f1"] for e in epochs) >= 0.9, "validation from the TSV: macro-F1 of the planted words >= 0.9")

# evaluate: id, a probability per class (the order given), the predicted class; metrics with the confusion matrix.
attn("evaluate", "--model", RUN, "--csv", path("test.csv"), "--predictions", path("pred.csv"), "--metrics", path("m.json"))
rows = list(csv.reader(open(path("pred.csv"), newline="")))
check(rows[0] == ["id", "normal", "offensive", "hatespeech", "prediction"], f"predictions header {rows[0]}")
truth = {p[0]: p[2] for p in (post(i) for i in range(1050, 1200))}
right = sum(r[4] == truth[r[0]] for r in rows[1:])
check(right / (len(rows) - 1) >= 0.9, f"the predicted class is right for {right} of {len(rows) - 1}")
check(all(abs(sum(float(x) for x in r[1:4]) - 1) < 1e-5 for r in rows[1:]), "each row's probabilities sum to 1 (a softmax)")
m = json.load(open(path("m.json")))
check(set(m["confusion"]) == {"normal", "offensive", "hatespeech"} and m["rows"] == 150, "the confusion matrix by class")
check(sum(sum(row.values()) for row in m["confusion"].values()) == 150, "the confusion matrix counts every row")
check(0 <= m["ovo_auc"] <= 1 and m["macro_f1"] >= 0.9, "macro-F1 and one-vs-one AUC")

# explain per class: --label names a class.
e = json.loads(attn("explain", "--model", RUN, "--json", "--methods", "gradient", "--label", "hatespeech", "see vermin today").stdout)
check(set(e["probabilities"]) == {"normal", "offensive", "hatespeech"}, "explain: a probability per class")
check(max(e["words"], key=lambda w: w["weight"])["word"] == "vermin", "the attention finds the class's word")

# model.pt from Python: the classes in order, the same softmax probabilities.
try:
    import torch
    extra = {"config.json": ""}
    model = torch.jit.load(os.path.join(RUN, "model.pt"), _extra_files=extra)
    model.eval()
    config = json.loads(extra["config.json"])
    check(config["data"]["labels"] == ["normal", "offensive", "hatespeech"], "model.pt keeps the classes in their order")
    check(config["model_config"]["output"] == "softmax", "model.pt's output is a softmax")
    with torch.no_grad():
        probs, _ = model(torch.tensor([e["ids"]], dtype=torch.int64))
    want = torch.tensor([[e["probabilities"][c] for c in config["data"]["labels"]]])
    check((probs - want).abs().max().item() <= 1e-6, "Python's probabilities are attn's")
    check(abs(probs.sum().item() - 1) < 1e-6, "Python's probabilities sum to 1")
except ImportError:
    print("(python3-torch missing: Python checks skipped)")

# attn plausibility: the planted word is the people's rationale (ERASER's format and Toxic Spans'); the
# attention finds it.
with open(path("docs.jsonl"), "w") as docs, open(path("rationales.jsonl"), "w") as ann, open(path("spans.csv"), "w", newline="") as spans:
    sw = csv.writer(spans)
    sw.writerow(["spans", "text"])
    for i in range(1050, 1200):
        pid, text, label = post(i)
        words = text.split(" ")
        at = next((k for k, w in enumerate(words) if w in HATE + OFFENSIVE), None)
        docs.write(json.dumps({"docid": pid, "document": text}) + "\n")
        evidences = [] if at is None else [[{"docid": pid, "start_token": at, "end_token": at + 1}]]
        ann.write(json.dumps({"annotation_id": pid, "classification": label, "evidences": evidences}) + "\n")
        if at is not None:
            first = len(" ".join(words[:at])) + (1 if at else 0)
            sw.writerow([json.dumps(list(range(first, first + len(words[at])))), text])
for rationales in ("rationales.jsonl", "spans.csv"):
    p = attn("plausibility", "--model", RUN, "--rationales", path(rationales), "--methods", "attention,gradient", "--top-k", "1",
             "--json", path("plausibility.json"))
    figures = json.load(open(path("plausibility.json")))
    a = figures["methods"]["attention"]
    check(figures["rows"] == 100 and a["token_f1"] >= 0.9 and a["auprc"] >= 0.9 and a["iou_f1"] >= 0.9,
          f"plausibility ({rationales}): the attention's top word is the rationale ({a})")
    check("token-F1" in p.stdout and "gradient" in p.stdout, "plausibility prints its table")
    reach = figures["marks_as_scores"]  # one marked word per row, top 1: the marks score 1 on every figure
    check(all(abs(reach[k] - 1) < 1e-9 for k in ("iou_f1", "token_f1", "auprc")) and "(the marks as scores)" in p.stdout,
          f"plausibility reports the marks' own figures ({reach})")
with open(path("bad_rationales.jsonl"), "w") as f:
    f.write(json.dumps({"annotation_id": "q", "classification": "x", "evidences": [[{"docid": "nope", "start_token": 0, "end_token": 1}]]}) + "\n")
bad = attn("plausibility", "--model", RUN, "--rationales", path("bad_rationales.jsonl"), "--docs", path("docs.jsonl"), ok=False)
check(bad.returncode == 1 and "bad_rationales.jsonl:1" in bad.stderr and "'nope'" in bad.stderr, f"plausibility: an unknown docid ({bad.stderr.strip()})")

# attn robustness: the planted words misspelt on purpose (a word-only model, --word-only above, loses them), deterministic.
with open(path("lexicon.txt"), "w") as f:
    f.write("\n".join(w.upper() for w in HATE + OFFENSIVE) + "\n")
rob = attn("robustness", "--model", RUN, "--csv", path("test.csv"), "--words", path("lexicon.txt"), "--rate", "1",
           "--json", path("rob.json"))
r1 = json.load(open(path("rob.json")))
check([p["name"] for p in r1["perturbations"]] == ["repeat", "leet", "punctuation", "space", "mask", "homoglyph", "spaced", "punctuation2",
                                                  "zero-width", "mixed", "vowels", "suffix"],
      "robustness: every perturbation")
check(all(p["words_changed"] == p["target_words"] == 100 for p in r1["perturbations"]),
      "rate 1: each of the 100 planted words changed (the lexicon's words, any case)")
check(all(p["drop"]["macro_f1"] >= 0.3 and p["flipped"] >= 0.3 for p in r1["perturbations"]),
      "a word-only model loses the misspelt planted words: " + ", ".join(f"{p['name']} {p['drop']['macro_f1']:.2f}" for p in r1["perturbations"]))
attn("robustness", "--model", RUN, "--csv", path("test.csv"), "--words", path("lexicon.txt"), "--rate", "1", "--json", path("rob2.json"))
check(open(path("rob.json")).read() == open(path("rob2.json")).read(), "robustness: the same figures every run")
check("homoglyph" in rob.stdout and "flipped" in rob.stdout, "robustness prints its table")

# Bad input: exit 1 naming file, line and field (bad flags: exit 2).


def refused(what, args, *expected, code=1):
    """Exit 1 for bad input files, 2 for bad flags (the conventions of docs/commands.md)."""
    p = attn(*args, ok=False)
    check(p.returncode == code and all(x in p.stderr for x in expected), f"{what}: exit {p.returncode}, {p.stderr.strip()[-300:]}")


def write(name, text):
    with open(path(name), "w", newline="") as f:
        f.write(text)
    return path(name)


train_args = ["train", "--text-column", "text", "--label-column", "label", "--out", path("bad_run"), "--epochs", "1"]
refused("one class", train_args + ["--csv", write("one.csv", "text,label\na,x\nb,x\n")], "one.csv", "one class ('x')")
refused("an empty class", train_args + ["--csv", write("empty.csv", "text,label\na,x\nb,\n")], "empty.csv:3", "(label)", "empty class")
refused("a missing text field", train_args + ["--csv", write("miss.jsonl", '{"text": "a", "label": "x"}\n{"label": "y"}\n')],
        "miss.jsonl:2", "(text)")
refused("a non-string text", train_args + ["--csv", write("num.jsonl", '{"text": "a", "label": "x"}\n{"text": 5, "label": "y"}\n')],
        "num.jsonl:2", "(text)", "string")
refused("a TSV row with the wrong field count", train_args + ["--csv", write("bad.tsv", "text\tlabel\r\na\tx\r\nb\ty\tz\r\n")],
        "bad.tsv:3", "expected 2 fields")
refused("--labels beside --label-column", train_args + ["--csv", path("train.jsonl"), "--labels", "a,b"], "--label-column", code=2)
refused("--classes twice", train_args + ["--csv", path("train.jsonl"), "--classes", "normal,normal"], "--classes", "twice", code=2)
refused("a class not in the model", ["evaluate", "--model", RUN, "--csv", write("odd.csv", "post_id,text,label\nq1,see,normal\nq2,see,spam\n")],
        "odd.csv:3", "(label)", "'spam'")
refused("--thresholds", ["evaluate", "--model", RUN, "--csv", path("test.csv"), "--thresholds", "0.3"], "--thresholds", code=2)
refused("--pos-weight", train_args + ["--csv", path("train.jsonl"), "--pos-weight", "auto"], "--pos-weight", "--class-weight", code=2)
refused("--perturbations", ["robustness", "--model", RUN, "--csv", path("test.csv"), "--perturbations", "typo"], "typo",
        "homoglyph", code=2)
refused("--format", train_args + ["--csv", path("train.jsonl"), "--format", "xml"], "--format", code=2)
finish()
