#!/usr/bin/env python3
"""--subwords end to end, on generated posts whose planted words are then misspelt on purpose: a
word-only model and a model with subwords trained alike; `attn robustness` at rate 1 on the planted
words (the subword model keeps more of what the word-only model loses); `attn explain` of an unseen
misspelling (read by its n-grams); model.pt from Python (torch.jit.load): the model's own
subword_ids gives attn's probabilities; and the flags' misuse refused.

usage: subwords_test.py ATTN WORK_DIR
"""
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish, planted_post, workspace  # noqa: E402

attn, path = workspace()

NICE = ["thanks", "good", "edit", "page", "fine", "see", "talk", "source", "today", "friends", "article", "review"]
HATE, OFFENSIVE = ["vermin", "subhuman", "parasites"], ["stupid", "idiotic", "moronic"]


def post(i):
    rng = random.Random(i)  # the other words say nothing of the class
    return planted_post(i, [rng.choice(NICE) for _ in range(rng.randint(3, 8))], HATE, OFFENSIVE)


with open(path("train.jsonl"), "w") as f:
    for i in range(900):
        pid, text, label = post(i)
        f.write(json.dumps({"post_id": pid, "text": text, "label": label}) + "\n")
with open(path("test.jsonl"), "w") as f:
    for i in range(900, 1050):
        pid, text, label = post(i)
        f.write(json.dumps({"post_id": pid, "text": text, "label": label}) + "\n")
with open(path("lexicon.txt"), "w") as f:
    f.write("\n".join(HATE + OFFENSIVE) + "\n")

common = ["train", "--csv", path("train.jsonl"), "--text-column", "text", "--id-column", "post_id", "--label-column", "label",
          "--maxlen", "16", "--epochs", "6", "--lr", "0.01", "--set", "embed_dim=16", "--set", "lstm_units=8", "--seed", "3",
          "--threads", "2"]
plan = json.loads(attn(*common, "--subwords", "--out", path("sub"), "--dump-config").stdout)
check("subword_buckets" in plan["model_config_set_from_data"], "--dump-config: the n-gram rows are set from the data")
attn(*common, "--word-only", "--out", path("words"))
attn(*common, "--out", path("sub"))  # one class per row: subwords by default
for run, buckets in (("words", 0), ("sub", 32768)):
    got = json.load(open(os.path.join(path(run), "config.json")))["model_config"]["subword_buckets"]
    check(got == buckets, f"one class per row, {run}: {buckets} n-gram rows by default, --word-only none (got {got})")

# resume stays exact with subwords (and --misspell): 1 epoch, then --resume to 3, against 3 at once; validated on a
# file whose planted words are misspelt (words the tokenizer does not hold, read by their n-grams)
with open(path("val_misspelt.jsonl"), "w") as f:
    for i in range(1050, 1110):
        pid, text, label = post(i)
        f.write(json.dumps({"post_id": pid, "text": re.sub(r"(vermin|subhuman|parasites|stupid|idiotic|moronic)",
                                                           lambda m: m.group(1)[:2] + m.group(1)[2] * 2 + m.group(1)[3:], text),
                            "label": label}) + "\n")
again = ["--subwords", "--misspell", "0.2", "--val-csv", path("val_misspelt.jsonl")]  # training rows misspelt too
attn(*common[:common.index("--epochs")], "--epochs", "3", *common[common.index("--epochs") + 2:], *again, "--out", path("once"))
attn(*common[:common.index("--epochs")], "--epochs", "1", *common[common.index("--epochs") + 2:], *again, "--out", path("twice"))
attn("train", "--resume", path("twice"), "--epochs", "3")


def losses(run):
    return [(e["loss"], e["val_loss"]) for e in (json.loads(line) for line in open(os.path.join(run, "metrics.jsonl")))]


check(losses(path("once")) == losses(path("twice")), f"--resume with subwords and --val-csv: the same epochs ({losses(path('twice'))})")

# --format names the file's format for the n-gram pass too: a TSV named .txt
with open(path("train.txt"), "w") as f:
    f.write("post_id\ttext\tlabel\n")
    for i in range(300):
        pid, text, label = post(i)
        f.write(f"{pid}\t{text}, \"said\" he\t{label}\n")
p = attn("train", "--csv", path("train.txt"), "--format", "tsv", "--text-column", "text", "--label-column", "label", "--epochs", "1",
         "--set", "embed_dim=8", "--set", "lstm_units=4", "--subwords", "--out", path("tsv_run"), ok=False)
check(p.returncode == 0, f"--format tsv with --subwords ({p.stderr.strip()[-200:]})")

# --misspell: the training texts' words misspelt on purpose (half of them), so that the model learns to read them
attn(*common, "--misspell", "0.5", "--out", path("misspelt"))
report = json.load(open(os.path.join(path("misspelt"), "data", "prepare.json")))["misspelt"]
check(report["rate"] == 0.5 and len(report["edits"]) == 6 and 0.4 <= report["words_changed"] / report["words_of_4_letters"] <= 0.6,
      f"--misspell 0.5: about half the training words of 4+ letters misspelt, every edit drawn ({report})")

drops = {}
for run in ("words", "sub", "misspelt"):
    attn("robustness", "--model", path(run), "--csv", path("test.jsonl"), "--words", path("lexicon.txt"), "--rate", "1",
         "--perturbations", "repeat,leet,homoglyph,mask", "--json", path(run + ".json"))
    r = json.load(open(path(run + ".json")))
    check(r["clean"]["macro_f1"] >= 0.9, f"{run}: clean macro-F1 {r['clean']['macro_f1']:.3f} >= 0.9")
    drops[run] = {p["name"]: p["drop"]["macro_f1"] for p in r["perturbations"]}
for name in ("repeat", "leet", "homoglyph"):
    check(drops["words"][name] >= 0.3, f"{name}: the word-only model loses the misspelt words (macro-F1 drop {drops['words'][name]:.3f})")
    check(drops["sub"][name] <= drops["words"][name] - 0.2,
          f"{name}: the subword model keeps them (drop {drops['sub'][name]:.3f} against {drops['words'][name]:.3f})")
check(sum(drops["misspelt"].values()) < sum(drops["sub"].values()),
      f"--misspell: trained on misspelt words, the model loses less of them ({drops['misspelt']} against {drops['sub']})")
print("macro-F1 drops at rate 1:", json.dumps(drops), file=sys.stderr)

# --skeletons: a word is also its consonant skeleton's n-grams, so the planted words written without their vowels
# (vrmn, stpd) read as the words; attn robustness's vowels, which no model here trained on, at rate 1
attn(*common, "--skeletons", "--out", path("skel"))
for run in ("sub", "skel"):
    attn("robustness", "--model", path(run), "--csv", path("test.jsonl"), "--words", path("lexicon.txt"), "--rate", "1",
         "--perturbations", "vowels", "--json", path(run + "_vowels.json"))
    r = json.load(open(path(run + "_vowels.json")))
    check(r["clean"]["macro_f1"] >= 0.9, f"{run}: clean macro-F1 {r['clean']['macro_f1']:.3f} >= 0.9")
    drops[run + "_vowels"] = r["perturbations"][0]["drop"]["macro_f1"]
check(drops["sub_vowels"] >= 0.2 and drops["skel_vowels"] <= drops["sub_vowels"] - 0.15,
      f"--skeletons: dropped vowels cost less (macro-F1 drop {drops['skel_vowels']:.3f} against {drops['sub_vowels']:.3f})")
skel_config = json.load(open(os.path.join(path("skel"), "config.json")))
check(skel_config["model_config"]["subword_skeletons"] is True and skel_config["data"]["subword_skeletons"] is True,
      "--skeletons: kept in the model and its data")
check("subword_skeletons" not in json.load(open(os.path.join(path("sub"), "config.json")))["data"], "without it the data says nothing")

# explain: an unseen misspelling is read by its n-grams, and weighs
e = json.loads(attn("explain", "--model", path("sub"), "--json", "see verrrmin today").stdout)
word = next(w for w in e["words"] if w["word"] == "verrrmin")
check(word["status"] == "subwords" and word["weight"] > 0, f"explain: 'verrrmin' read by its n-grams ({word})")
check(max(e["probabilities"], key=e["probabilities"].get) == "hatespeech", f"and its class is found ({e['probabilities']})")
e = json.loads(attn("explain", "--model", path("sub"), "--json", "--methods", "integrated-gradients,leave-one-out", "--label", "hatespeech",
                    "see verrrmin today").stdout)
check(set(e["importance"]) == {"integrated-gradients", "leave-one-out"}, f"explain: the other methods with subwords ({sorted(e['importance'])})")
gap = abs(e["integrated_gradients"]["completeness_gap"]["hatespeech"])
check(gap < 1e-4, f"integrated gradients over the mean of a word's rows: completeness gap {gap:.2e}")
check(max(range(3), key=lambda t: e["importance"]["leave-one-out"]["hatespeech"][t]) == 1,
      "leave-one-out: removing the misspelt word moves hate speech most")
f = attn("faithfulness", "--model", path("sub"), "--csv", path("test.jsonl"), "--text-column", "text", "--rows", "20",
         "--json", path("faith.json"))
check(json.load(open(path("faith.json"))).get("rows") == 20, "faithfulness with subwords: the rows measured")
words_only = json.loads(attn("explain", "--model", path("words"), "--json", "see verrrmin today").stdout)
check(next(w for w in words_only["words"] if w["word"] == "verrrmin")["status"] == "dropped", "the word-only model drops it")

# attn embed: vectors with subwords learnt from the training texts; a model with --subwords starts from them
attn("embed", "--csv", path("train.jsonl"), "--text-column", "text", "--out", path("v.vec"), "--dim", "16", "--min-count", "2",
     "--epochs", "2", "--threads", "1")
vec = {}
with open(path("v.vec")) as f:
    check(f.readline().split()[1] == "16", "attn embed: the word2vec header (count, dim)")
    for line in f:
        parts = line.split()
        vec[parts[0]] = [float(x) for x in parts[1:]]
check({"vermin", "idiotic", "thanks"} <= set(vec) and os.path.exists(path("v.vec.subwords")), "attn embed: every word, and its .subwords")
start = ["train", "--csv", path("train.jsonl"), "--text-column", "text", "--label-column", "label", "--maxlen", "16", "--epochs", "1",
         "--lr", "1e-12", "--set", "embed_dim=16", "--set", "lstm_units=8", "--embeddings", path("v.vec"), "--threads", "2"]
attn(*start, "--subwords", "--subword-buckets", "32768", "--out", path("pre"))
attn(*start, "--word-only", "--out", path("pre_words"))
refused_here = attn(*start, "--subwords", "--subword-buckets", "1024", "--out", path("pre_bad"), ok=False)
check(refused_here.returncode == 1 and "v.vec.subwords" in refused_here.stderr and "1024" in refused_here.stderr,
      f"--embeddings: n-gram rows of another count refused ({refused_here.stderr.strip()[-200:]})")

# model.pt from Python: Keras' text_to_word_sequence, the tokenizer's word rows, the model's subword_ids -> attn's probabilities
try:
    import torch
    extra = {"config.json": "", "tokenizer.json": ""}
    model = torch.jit.load(os.path.join(path("sub"), "model.pt"), _extra_files=extra)
    model.eval()
    config = json.loads(extra["config.json"])
    check(config["model_config"]["subword_buckets"] == 32768 and config["data"]["subword_buckets"] == 32768,
          "model.pt: 32768 n-gram rows by default, in the model and its data")
    tok = json.loads(extra["tokenizer.json"])["config"]
    word_index = json.loads(tok["word_index"])
    num_words = tok["num_words"]
    text = "See verrrmin, TODAY!"
    filters = tok["filters"]
    words = [w for w in re.sub("[" + re.escape(filters) + "]", " ", text.lower()).split(" ") if w]
    rows = [word_index[w] if w in word_index and word_index[w] < num_words else 0 for w in words]
    with torch.no_grad():
        probs, _ = model(model.subword_ids(words, rows))
    e = json.loads(attn("explain", "--model", path("sub"), "--json", text).stdout)
    want = torch.tensor([[e["probabilities"][c] for c in config["data"]["labels"]]])
    check((probs - want).abs().max().item() <= 1e-6, f"Python's probabilities are attn's ({probs.tolist()} vs {want.tolist()})")
    # the same from a model with --skeletons: its subword_ids adds each word's skeleton n-grams as attn does
    extra = {"config.json": "", "tokenizer.json": ""}
    skel = torch.jit.load(os.path.join(path("skel"), "model.pt"), _extra_files=extra)
    skel.eval()
    word_index = json.loads(json.loads(extra["tokenizer.json"])["config"]["word_index"])
    text = "See vrmn and stpd, TODAY!"
    words = [w for w in re.sub("[" + re.escape(filters) + "]", " ", text.lower()).split(" ") if w]
    rows = [word_index[w] if w in word_index and word_index[w] < num_words else 0 for w in words]
    with torch.no_grad():
        probs, _ = skel(skel.subword_ids(words, rows))
    e = json.loads(attn("explain", "--model", path("skel"), "--json", text).stdout)
    want = torch.tensor([[e["probabilities"][c] for c in json.loads(extra["config.json"])["data"]["labels"]]])
    check((probs - want).abs().max().item() <= 1e-6, f"--skeletons: Python's probabilities are attn's ({probs.tolist()} vs {want.tolist()})")
    # the model with --subwords, its lookup of a word: attn embed's vector of it (its own row and n-gram rows loaded),
    # in every member of the recipe's seed ensemble
    def members(m):
        return [getattr(m, f"member{i}") for i in range(64) if hasattr(m, f"member{i}")] or [m]

    extra = {"tokenizer.json": ""}
    pre = torch.jit.load(os.path.join(path("pre"), "model.pt"), _extra_files=extra)
    index = json.loads(json.loads(extra["tokenizer.json"])["config"]["word_index"])
    check(len(members(pre)) == 3, "one class per row: a seed ensemble of 3 by default")
    worst = 0.0
    for member in members(pre):
        for w in ("vermin", "idiotic", "thanks"):
            with torch.no_grad():
                got = member.lookup(pre.subword_ids([w], [index[w]]))[0, 0]
            worst = max(worst, (got - torch.tensor(vec[w])).abs().max().item())
    check(worst <= 1e-4, f"--embeddings with --subwords: every member reads attn embed's vectors (worst {worst:.2e})")
    words_model = torch.jit.load(os.path.join(path("pre_words"), "model.pt"))
    for member in members(words_model):
        got = member.embedding[index["vermin"]]
        check((got - torch.tensor(vec["vermin"])).abs().max().item() <= 1e-4, "--embeddings without subwords: the word's vector")
except ImportError:
    print("(python3-torch missing: Python checks skipped)")


def refused(what, args, *expected, code=2):
    p = attn(*args, ok=False)
    check(p.returncode == code and all(x in p.stderr for x in expected), f"{what}: exit {p.returncode}, {p.stderr.strip()[-300:]}")


refused("--subwords on a model without a subword table",
        ["train", "--csv", path("train.jsonl"), "--text-column", "text", "--label-column", "label", "--subwords", "--model",
         "hierarchical-attention", "--out", path("h")],
        "--subwords", "hierarchical-attention")
refused("--subwords with --word-only", [*common, "--subwords", "--word-only", "--out", path("x")], "--subwords", "--word-only")
refused("--misspell out of range", [*common, "--misspell", "1.5", "--out", path("x")], "--misspell", "0..1")
refused("--misspell without subwords", [*common, "--word-only", "--misspell", "0.2", "--out", path("x")], "--misspell", "subwords")
refused("--misspell-edits alone", [*common, "--misspell-edits", "leet", "--out", path("x")], "--misspell-edits", "--misspell")
refused("--misspell-edits unknown", [*common, "--misspell", "0.2", "--misspell-edits", "leet,typo", "--out", path("x")], "'typo'", "homoglyph")
refused("--subword-buckets with --word-only", [*common, "--word-only", "--subword-buckets", "100", "--out", path("x")], "--subword-buckets", "--subwords")
refused("--skeletons with --word-only", [*common, "--word-only", "--skeletons", "--out", path("x")], "--skeletons", "--subwords")
refused("--subword-buckets 0", [*common, "--subwords", "--subword-buckets", "0", "--out", path("x")], "--subword-buckets")
refused("attn embed without its input", ["embed", "--out", path("x.vec")], "--csv", "--txt")
finish()
