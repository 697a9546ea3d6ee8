#!/usr/bin/env python3
"""Jigsaw 2019's identity-bias metric in `attn evaluate`, end to end, on generated comments in the
2019 layout (`target` a share of raters, read with --target-threshold) whose training rows plant a bias (comments naming one identity are toxic more often, the
identity word itself saying nothing of the text): the identity columns found by default, each AUC and
the final metric equal to a Python computation from the predictions (pair counting, ties half, the
power mean p = -5), the planted identity's BPSN AUC the lowest, the heatmap page, and bad identity
values refused by file, line and column. Bias-aware training: --identity-weighting undoes the planted
bias; --aux-labels trains the 2019 subtypes as outputs reported apart.

usage: bias_test.py ATTN WORK_DIR
"""
import csv
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import NICE_WORDS, check, finish, workspace  # noqa: E402

attn, path = workspace()

NICE = NICE_WORDS
BAD = ["stupid", "idiot", "moron", "loser", "scum", "jerk"]
IDENTITIES = {"muslim": "muslim", "christian": "christian", "female": "woman", "male": "man"}


def comment(i, biased):
    """(id, text, target, annotations): a toxic comment has a bad word; about a third name an identity.
    With `biased`, comments naming "muslim" are toxic four times as often as others."""
    rng = random.Random(i)
    named = rng.choice(list(IDENTITIES) + [None] * 5)
    rate = 0.8 if biased and named == "muslim" else 0.2 if biased else 0.3
    toxic = rng.random() < rate
    words = [rng.choice(NICE) for _ in range(4 + i % 5)]
    # In the biased rows, half the toxic comments naming "muslim" have no bad word: only the identity
    # word goes with their label, which a model then learns.
    if toxic and not (biased and named == "muslim" and rng.random() < 0.5):
        words.insert(rng.randrange(len(words) + 1), rng.choice(BAD))
    if named:
        words.insert(rng.randrange(len(words) + 1), IDENTITIES[named])
    annotations = {k: ("" if i % 11 == 0 else "1.0" if k == named else "0.0") for k in IDENTITIES}
    target = rng.choice([0.5, 0.6, 0.8, 1.0] if toxic else [0.0, 0.1, 0.2, 0.4])  # the share of raters, as in 2019's file
    return f"c{i}", " ".join(words), target, annotations


def write(name, rows, biased):
    with open(path(name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "comment_text", "target", *IDENTITIES])
        for i in rows:
            cid, text, toxic, ann = comment(i, biased)
            w.writerow([cid, text, toxic, *(ann[k] for k in IDENTITIES)])


write("train.csv", range(4000), True)
write("test.csv", range(4000, 5500), False)
attn("train", "--csv", path("train.csv"), "--labels", "target", "--target-threshold", "0.5", "--maxlen", "16", "--epochs", "4", "--batch-size", "32", "--set",
     "embed_dim=16", "--set", "lstm_units=8", "--threads", "2", "--out", path("run"))
out = attn("evaluate", "--model", path("run"), "--csv", path("test.csv"), "--predictions", path("pred.csv"), "--metrics",
           path("m.json"), "--bias-html", path("bias.html")).stdout
bias = json.load(open(path("m.json")))["bias"]
names = [i["identity"] for i in bias["identities"]]
check(names == ["male", "female", "christian", "muslim"], f"the scored identities the file has, in the competition's order ({names})")
check(bias["label"] == "target" and '"final"' in out, "the metric of the model's label, printed")

# The same figures from the predictions, in Python.
truth = {r[0]: r for r in csv.reader(open(path("test.csv"), newline=""))}
preds = list(csv.DictReader(open(path("pred.csv"), newline="")))
score = [float(p["target"]) for p in preds]
y = [float(truth[p["id"]][2]) >= 0.5 for p in preds]  # --target-threshold 0.5, kept by the model for evaluate
columns = truth["id"]


def member(p, identity):
    v = truth[p["id"]][columns.index(identity)]
    return v != "" and float(v) >= 0.5


def auc(take):
    pos = [s for s, t, k in zip(score, y, take) if k and t]
    neg = [s for s, t, k in zip(score, y, take) if k and not t]
    if not pos or not neg:
        return None
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg) / (len(pos) * len(neg))


overall = auc([True] * len(preds))
means = {}
for family in ("subgroup_auc", "bpsn_auc", "bnsp_auc"):
    values = []
    for entry in bias["identities"]:
        m = [member(p, entry["identity"]) for p in preds]
        take = m if family == "subgroup_auc" else [(a and not t) or (not a and t) for a, t in zip(m, y)] if family == "bpsn_auc" \
            else [(a and t) or (not a and not t) for a, t in zip(m, y)]
        want = auc(take)
        check(entry[family] is not None and abs(entry[family] - want) < 1e-9, f"{entry['identity']} {family}: {entry[family]} vs {want}")
        values.append(want)
    means[family] = (sum(v ** -5 for v in values) / len(values)) ** (-1 / 5)
final = 0.25 * overall + 0.25 * sum(means.values())
check(abs(bias["overall_auc"] - overall) < 1e-9 and abs(bias["final"] - final) < 1e-9, f"the final metric: {bias['final']} vs {final}")
bpsn = {e["identity"]: e["bpsn_auc"] for e in bias["identities"]}
check(min(bpsn, key=bpsn.get) == "muslim", f"the planted identity has the lowest BPSN AUC ({bpsn})")
page = open(path("bias.html")).read()
check("background:rgb(" in page and "muslim" in page and "BPSN" in page, "the heatmap page (its cells shaded)")

# --identities picks columns; bad values and names are refused.
attn("evaluate", "--model", path("run"), "--csv", path("test.csv"), "--metrics", path("m2.json"), "--identities", "muslim")
check([i["identity"] for i in json.load(open(path("m2.json")))["bias"]["identities"]] == ["muslim"], "--identities muslim")
rows = list(csv.reader(open(path("test.csv"), newline="")))
rows[3][columns.index("muslim")] = "high"
with open(path("bad.csv"), "w", newline="") as f:
    csv.writer(f).writerows(rows)
bad = attn("evaluate", "--model", path("run"), "--csv", path("bad.csv"), ok=False)
check(bad.returncode == 1 and "bad.csv:4" in bad.stderr and "(muslim)" in bad.stderr and "'high'" in bad.stderr,
      f"a value that is no number in [0, 1] ({bad.stderr.strip()})")
bad = attn("evaluate", "--model", path("run"), "--csv", path("test.csv"), "--identities", "jewish", ok=False)
check(bad.returncode != 0 and "jewish" in bad.stderr, f"an identity column the file lacks ({bad.stderr.strip()})")
bad = attn("evaluate", "--model", path("run"), "--csv", path("test.csv"), "--identities", "muslim,muslim", ok=False)
check(bad.returncode == 2 and "twice" in bad.stderr, f"an identity named twice ({bad.stderr.strip()})")
with open(path("plain.csv"), "w", newline="") as f:
    csv.writer(f).writerows([r[:3] for r in rows[:1]] + [r[:3] for r in rows[1:50]])
bad = attn("evaluate", "--model", path("run"), "--csv", path("plain.csv"), "--bias-html", path("x.html"), ok=False)
check(bad.returncode == 2 and "no identity column" in bad.stderr, f"--bias-html without identities ({bad.stderr.strip()})")
plain = attn("evaluate", "--model", path("run"), "--csv", path("plain.csv")).stdout
check('"bias"' not in plain, "a file without identity columns: no bias metric")
check(math.isfinite(bias["final"]), "never NaN")

# Bias-aware training: the same rows weighed by identity (--identity-weighting) undo the planted bias.
attn("train", "--csv", path("train.csv"), "--labels", "target", "--target-threshold", "0.5", "--maxlen", "16", "--epochs", "4", "--batch-size", "32", "--set",
     "embed_dim=16", "--set", "lstm_units=8", "--threads", "2", "--identity-weighting", "--out", path("weighted"))
weights = json.load(open(path("weighted/data/prepare.json")))["row_weights"]["identity_weighting"]
check(weights["identities"] == ["male", "female", "christian", "muslim"] and weights["subgroup_negatives"] > 0,
      f"the identity columns the file has weigh the rows ({weights})")
attn("evaluate", "--model", path("weighted"), "--csv", path("test.csv"), "--metrics", path("mw.json"))
after = json.load(open(path("mw.json")))["bias"]
sub = {e["identity"]: e["subgroup_auc"] for e in bias["identities"]}
sub_after = {e["identity"]: e["subgroup_auc"] for e in after["identities"]}
check(after["final"] > bias["final"] + 0.05 and sub_after["muslim"] > sub["muslim"] + 0.2,
      f"--identity-weighting: the final metric {bias['final']:.3f} -> {after['final']:.3f}, muslim's subgroup AUC {sub['muslim']:.3f} -> "
      f"{sub_after['muslim']:.3f}")

# Counterfactual logit pairing: each training row naming an identity of the list is also read with
# the term swapped, and the gap between the two rows' logits trained away: the planted identity's
# words stop moving the score (held-out rows with "muslim" swapped for "christian" and back).
with open(path("pair_terms.txt"), "w") as f:
    f.write("muslim\nchristian\nwoman\nman\n")
attn("train", "--csv", path("train.csv"), "--labels", "target", "--target-threshold", "0.5", "--maxlen", "16", "--epochs", "4", "--batch-size", "32", "--set",
     "embed_dim=16", "--set", "lstm_units=8", "--threads", "2", "--counterfactual", "--counterfactual-terms", path("pair_terms.txt"),
     "--counterfactual-weight", "2", "--out", path("paired"))
copies = json.load(open(path("paired/data/prepare.json")))["counterfactual"]
named = sum(1 for i in range(4000) if any(w in comment(i, True)[1].split() for w in ("muslim", "christian", "woman", "man")))
check(copies["terms"] == 4 and copies["rows_with_a_copy"] == named, f"a copy of every training row naming a term ({copies}, {named} name one)")
check(json.load(open(path("paired/config.json")))["data"]["counterfactual_weight"] == 2, "lambda kept in the run's config")
check("counterfactual_weight" not in json.load(open(path("run/config.json")))["data"], "a run without it: config.json as before")
rows = list(csv.reader(open(path("test.csv"), newline="")))
swapped = [rows[0]] + [[r[0], " ".join({"muslim": "christian", "christian": "muslim"}.get(w, w) for w in r[1].split()), *r[2:]] for r in rows[1:]]
with open(path("swapped.csv"), "w", newline="") as f:
    csv.writer(f).writerows(swapped)
mentions = {r[0] for r in rows[1:] if {"muslim", "christian"} & set(r[1].split())}


def swap_gap(run):
    """The mean |p(x) - p(x swapped)| over the held-out rows naming muslim or christian."""
    attn("evaluate", "--model", path(run), "--csv", path("test.csv"), "--predictions", path(run + "_p.csv"))
    attn("evaluate", "--model", path(run), "--csv", path("swapped.csv"), "--predictions", path(run + "_s.csv"))
    p = {r["id"]: float(r["target"]) for r in csv.DictReader(open(path(run + "_p.csv")))}
    q = {r["id"]: float(r["target"]) for r in csv.DictReader(open(path(run + "_s.csv")))}
    return sum(abs(p[i] - q[i]) for i in mentions) / len(mentions)


plain_gap, paired_gap = swap_gap("run"), swap_gap("paired")
check(paired_gap < 0.5 * plain_gap, f"--counterfactual: the swap gap {plain_gap:.3f} -> {paired_gap:.3f} (at most half)")
# One class per row (subwords, the copies' words read by the same vocabulary), an ensemble of two.
with open(path("classes.csv"), "w", newline="") as f:
    csv.writer(f).writerows([["id", "comment_text", "label"]] + [[cid, text, "toxic" if t >= 0.5 else "normal"]
                                                                  for cid, text, t, _ in (comment(i, True) for i in range(600))])
attn("train", "--csv", path("classes.csv"), "--label-column", "label", "--maxlen", "16", "--epochs", "1", "--set", "embed_dim=8", "--set",
     "lstm_units=4", "--ensemble", "2", "--threads", "2", "--counterfactual", "--out", path("paired_classes"))
check(json.load(open(path("paired_classes/data/prepare.json")))["counterfactual"]["rows_with_a_copy"] > 0, "one class per row, an ensemble")
# (every kind of bad list is tests/text/identity_terms_test.cpp's; here: the exit code and the names)
for name, content, want in (("twice.txt", "muslim\nman\nMuslim\n", "line 3"), ("accent.txt", "muslim\ncaf\u00e9\n", "line 2")):
    with open(path(name), "w") as f:
        f.write(content)
    bad = attn("train", "--csv", path("train.csv"), "--labels", "target", "--target-threshold", "0.5", "--counterfactual",
               "--counterfactual-terms", path(name), "--out", path("bad_" + name), ok=False)
    check(bad.returncode == 1 and name in bad.stderr and want in bad.stderr and not os.path.exists(path("bad_" + name + "/config.json")),
          f"--counterfactual-terms {name}: refused, exit 1 ({bad.stderr.strip()})")

# attn datagen civil round-trips: its 2019 layout trains with --target-threshold and evaluates with all nine identities.
for name, seed in (("civil_train.csv", "1"), ("civil_test.csv", "2")):
    attn("datagen", "civil", "--rows", "3000", "--seed", seed, "--out", path(name))
attn("train", "--csv", path("civil_train.csv"), "--labels", "target", "--target-threshold", "0.5", "--maxlen", "40", "--epochs", "2",
     "--set", "embed_dim=16", "--set", "lstm_units=8", "--threads", "2", "--out", path("civil"))
attn("evaluate", "--model", path("civil"), "--csv", path("civil_test.csv"), "--metrics", path("civil.json"))
civil = json.load(open(path("civil.json")))["bias"]
# ... and its subtypes train as auxiliary outputs, reported apart from the scored label.
attn("train", "--csv", path("civil_train.csv"), "--labels", "target", "--aux-labels", "insult,identity_attack", "--target-threshold", "0.5",
     "--maxlen", "40", "--epochs", "2", "--set", "embed_dim=16", "--set", "lstm_units=8", "--threads", "2", "--out", path("civil_aux"))
attn("evaluate", "--model", path("civil_aux"), "--csv", path("civil_test.csv"), "--metrics", path("civil_aux.json"), "--predictions",
     path("civil_aux.csv"))
aux = json.load(open(path("civil_aux.json")))
check(list(aux["auc"]) == ["target"] and sorted(aux["aux_auc"]) == ["identity_attack", "insult"] and aux["bias"]["label"] == "target",
      f"--aux-labels: reported apart ({aux.get('aux_auc')}), the bias metric of the scored label")
check(next(csv.reader(open(path("civil_aux.csv"))))[1:] == ["target", "insult", "identity_attack"], "the predictions hold every output")
check(len(civil["identities"]) == 9 and all(i["members"] > 0 for i in civil["identities"]) and civil["final"] is not None,
      f"datagen civil -> train -> evaluate: nine identities, a final metric ({civil.get('final')})")
bad = attn("train", "--csv", path("train.csv"), "--labels", "target", "--out", path("nothreshold"), ok=False)
check(bad.returncode == 1 and "train.csv:2" in bad.stderr and "--target-threshold" in bad.stderr,
      f"fractions without --target-threshold: the line and the flag named ({bad.stderr.strip()})")
bad = attn("train", "--csv", path("train.csv"), "--labels", "target", "--target-threshold", "1.5", "--out", path("badt"), ok=False)
check(bad.returncode == 2 and "--target-threshold must be in (0, 1]" in bad.stderr, f"a threshold outside (0, 1] ({bad.stderr.strip()})")
finish()
