#!/usr/bin/env python3
"""Identity bias on real posts (bench/quality/results/bias_hatexplain.json): Jigsaw 2019's metric, bias-aware
training, and `attn audit`. No Civil Comments file is reachable here, so HateXplain's posts stand in.
A binary model (bilstm-attention --subwords: toxic = hate speech or offensive) trains on the train
split; the posts are tagged with the nine scored identities by a term list (a post is a member when
one of its words is a term: 1.0, else 0.0) and `attn evaluate` reports the metric on the val split.
Each post's identity comes from its words, not from raters as in 2019: the figures say how the
model treats posts naming a group.

Five trainings per seed: plain; --identity-weighting (the tagged identities); that with
--aux-labels hatespeech (hate speech as an auxiliary output); --counterfactual (logit pairing over
the audit's 24 built-in terms); and --counterfactual over half of them (every other term), so that
the other half are terms the training never swapped. Per training: the final metric, the overall
AUC, the worst identity's subgroup AUC, the epoch time, `attn audit` (template sentences, the val
posts' terms swapped, integrated gradients), and the AUC of the val posts that name a term, as they
are and with each post's term swapped for another (all terms; and among the held-out half only).
Then the audit's speed: 10,000 posts (train then val) x the 24 built-in terms, with integrated
gradients.

usage: python3 bench/quality/run_bias_hatexplain.py [--realdata DIR] [--seeds 3] [--threads 2] [--variants a,b]
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import (BUILTIN_TERMS, REALDATA, SEEN_TERMS, UNSEEN_TERMS, arguments, attn, epochs, hatexplain_work, roc_auc, swapped_posts,  # noqa: E402
                      timed, write_result)

TERMS = {  # lower-case words of HateXplain's tokens (docs.jsonl) that name each scored identity
    "male": ["man", "men", "boy", "boys", "guy", "guys", "male", "males"],
    "female": ["woman", "women", "girl", "girls", "female", "females", "lady", "ladies"],
    "homosexual_gay_or_lesbian": ["gay", "gays", "lesbian", "lesbians", "homosexual", "homosexuals", "queer", "queers"],
    "christian": ["christian", "christians", "christianity", "catholic", "catholics"],
    "jewish": ["jew", "jews", "jewish", "judaism"],
    "muslim": ["muslim", "muslims", "islam", "islamic", "moslem", "moslems"],
    "black": ["black", "blacks", "african", "africans"],
    "white": ["white", "whites", "caucasian", "caucasians"],
    "psychiatric_or_mental_illness": ["mental", "mentally", "insane", "psycho", "psychos", "schizo", "autistic"],
}


def tagged(jsonl, out_path):
    """The posts with a 0/1 `toxic` column and one column per identity; members per identity."""
    members = {k: 0 for k in TERMS}
    with open(jsonl) as f, open(out_path, "w") as out:
        for line in f:
            post = json.loads(line)
            words = set(post["text"].lower().split(" "))
            row = {"post_id": post["post_id"], "text": post["text"], "toxic": "0" if post["label"] == "normal" else "1",
                   "hatespeech": "1" if post["label"] == "hatespeech" else "0"}
            for identity, terms in TERMS.items():
                hit = any(t in words for t in terms)
                row[identity] = "1.0" if hit else "0.0"
                members[identity] += hit
            out.write(json.dumps(row) + "\n")
    return members


SEEN, UNSEEN = SEEN_TERMS, UNSEEN_TERMS
VARIANTS = {"plain": [], "identity_weighting": ["--identity-weighting"],
            "identity_weighting_aux": ["--identity-weighting", "--aux-labels", "hatespeech"],
            "counterfactual": ["--counterfactual"],
            "counterfactual_half": ["--counterfactual", "--counterfactual-terms", "{seen_terms}"]}


def scores_of(run, path, work, name, threads):
    """{post_id: p(toxic)} of `path` by `run`."""
    predictions = os.path.join(work, name + ".csv")
    attn("evaluate", "--model", run, "--csv", path, "--predictions", predictions, "--threads", threads)
    with open(predictions, newline="") as f:
        return {r["id"]: float(r["toxic"]) for r in csv.DictReader(f)}


def swap_figures(run, val, copies, work, name, threads):
    """The AUC of the posts that name a term, as they are and swapped, and the mean |shift| of p(toxic)."""
    truth = {}
    with open(val) as f:
        for line in f:
            post = json.loads(line)
            truth[post["post_id"]] = post["toxic"] == "1"
    before = scores_of(run, val, work, name + "_orig", threads)
    out = {}
    for key, (path, ids) in copies.items():
        after = scores_of(run, path, work, f"{name}_{key}", threads)
        positive = [truth[i] for i in ids]
        out[key] = {"posts": len(ids), "auc": roc_auc([before[i] for i in ids], positive),
                    "auc_swapped": roc_auc([after[i] for i in ids], positive),
                    "mean_abs_shift": sum(abs(before[i] - after[i]) for i in ids) / len(ids)}
    return out


def figures(bias):
    """The metric's headline figures: final, overall, and the worst identity per family."""
    out = {"final": bias["final"], "overall_auc": bias["overall_auc"], "power_means": bias["power_means"]}
    for family in ("subgroup_auc", "bpsn_auc", "bnsp_auc"):
        worst = min((e for e in bias["identities"] if e[family] is not None), key=lambda e: e[family])
        out["worst_" + family] = {"identity": worst["identity"], "auc": worst[family]}
    return out


def audit_summary(report):
    """The audit's headline figures: per term its kind sentences' toxicity, swap shift and importance;
    the most and least suspected terms; the spread (max - min) of each; each template filler's mean
    toxicity (what the model reads "hate" or "like" as)."""
    terms = report["terms"]
    kind = {t["term"]: t["templates"]["kind_mean"] for t in terms}
    flagged = {t["term"]: t["templates"]["kind_decided_toxic"] for t in terms}
    shift = {t["term"]: t["swaps"]["mean_shift"] for t in terms if t["swaps"]["mean_shift"] is not None}
    ig = {t["term"]: t["why"]["mean_importance"] for t in terms if t.get("why", {}).get("mean_importance") is not None}
    return {"kind_mean": kind, "kind_decided_toxic": flagged, "swap_mean_shift": shift, "importance": ig,
            "max_kind_decided_toxic": max(flagged.values()),
            "max_kind_decided_toxic_unseen": max(flagged[t] for t in UNSEEN if t in flagged),
            "kind_mean_spread": max(kind.values()) - min(kind.values()),
            "most_suspected": max(kind, key=kind.get), "least_suspected": min(kind, key=kind.get),
            "templates_final": report["templates"]["final"], "flips": report["swaps"]["flips"],
            "texts_scored": report["swaps"]["texts_scored"],
            "fillers": {f["word"]: f["mean"] for f in report["templates"].get("fillers", [])}}


def mean(values):
    return sum(values) / len(values)


def main():
    a = arguments(__file__, "bias_hatexplain.json", realdata=REALDATA, seeds=3, threads="2", variants=",".join(VARIANTS)).parse_args()
    work, _ = hatexplain_work(os.path.join(a.realdata, "hatexplain"), "bias")
    train, val = os.path.join(work, "train_tagged.jsonl"), os.path.join(work, "val_tagged.jsonl")
    tagged(os.path.join(work, "train.jsonl"), train)
    members = tagged(os.path.join(work, "val.jsonl"), val)
    seen_terms = os.path.join(work, "seen_terms.txt")
    with open(seen_terms, "w") as f:
        f.write("\n".join(SEEN) + "\n")
    copies = {key: (os.path.join(work, f"val_swapped_{key}.jsonl"), None) for key in ("all_terms", "unseen_terms")}
    copies = {"all_terms": (copies["all_terms"][0], swapped_posts(val, copies["all_terms"][0], BUILTIN_TERMS)),
              "unseen_terms": (copies["unseen_terms"][0], swapped_posts(val, copies["unseen_terms"][0], UNSEEN))}
    runs = {}
    for name in a.variants.split(","):
        flags = [f.format(seen_terms=seen_terms) for f in VARIANTS[name]]
        runs[name] = []
        for seed in range(1, a.seeds + 1):
            run = os.path.join(work, f"{name}_{seed}")
            seconds, _ = timed(attn, "train", "--csv", train, "--text-column", "text", "--id-column", "post_id", "--labels", "toxic",
                               "--subwords", "--batch-size", "64", "--epochs", "20", "--early-stopping-patience", "2", "--seed", str(seed),
                               "--threads", a.threads, "--out", run, *flags)
            metrics = os.path.join(work, f"{name}_{seed}.json")
            attn("evaluate", "--model", run, "--csv", val, "--metrics", metrics, "--bias-html", os.path.join(work, f"{name}_{seed}.html"),
                 "--threads", a.threads)
            with open(metrics) as f:
                bias = json.load(f)["bias"]
            report = os.path.join(work, f"audit_{name}_{seed}.json")
            attn("audit", "--model", run, "--csv", val, "--text-column", "text", "--json", report, "--threads", a.threads)
            with open(report) as f:
                audit = json.load(f)
            runs[name].append({"seed": seed, "train_seconds": round(seconds, 1),
                               "epoch_seconds": sum(e["seconds"] for e in epochs(run)) / len(epochs(run)), "bias": figures(bias),
                               "audit": audit_summary(audit), "swaps": swap_figures(run, val, copies, work, f"{name}_{seed}", a.threads),
                               "identities": bias["identities"]})
    summary = {}
    for name, rs in runs.items():
        summary[name] = {"final": mean([r["bias"]["final"] for r in rs]),
                         "overall_auc": mean([r["bias"]["overall_auc"] for r in rs]),
                         "worst_subgroup_auc": mean([r["bias"]["worst_subgroup_auc"]["auc"] for r in rs]),
                         "worst_bpsn_auc": mean([r["bias"]["worst_bpsn_auc"]["auc"] for r in rs]),
                         "worst_bnsp_auc": mean([r["bias"]["worst_bnsp_auc"]["auc"] for r in rs]),
                         "audit_kind_mean_spread": mean([r["audit"]["kind_mean_spread"] for r in rs]),
                         "audit_templates_final": mean([r["audit"]["templates_final"] for r in rs]),
                         "audit_flips": mean([r["audit"]["flips"] for r in rs]),
                         "audit_max_kind_decided_toxic": mean([r["audit"]["max_kind_decided_toxic"] for r in rs]),
                         "audit_max_kind_decided_toxic_unseen": mean([r["audit"]["max_kind_decided_toxic_unseen"] for r in rs]),
                         "epoch_seconds": mean([r["epoch_seconds"] for r in rs]),
                         **{f"swaps_{k}_{f}": mean([r["swaps"][k][f] for r in rs]) for k in copies
                            for f in ("auc", "auc_swapped", "mean_abs_shift")}}

    # The audit's speed: 10,000 posts x 24 terms (and the integrated gradients of the templates).
    posts = os.path.join(work, "posts_10000.jsonl")
    with open(posts, "w") as out:
        n = 0
        for path in (train, val):
            with open(path) as f:
                for line in f:
                    if n < 10000:
                        out.write(line)
                        n += 1
    model = os.path.join(work, "plain_1")
    speed = os.path.join(work, "audit_speed.json")
    seconds, _ = timed(attn, "audit", "--model", model, "--csv", posts, "--text-column", "text", "--json", speed, "--threads", a.threads)
    with open(speed) as f:
        swaps = json.load(f)["swaps"]
    write_result(a.out, {"data": "HateXplain val posts, identities tagged by a term list (bench/quality/run_bias_hatexplain.py)",
                         "model": "bilstm-attention --subwords, binary toxic (hate speech or offensive), HateXplain train split",
                         "seeds": a.seeds, "members": members, "summary": summary, "runs": runs,
                         "audit_speed": {"rows": swaps["rows"], "rows_mentioning": swaps["rows_mentioning"],
                                         "texts_scored": swaps["texts_scored"], "terms": 24, "seconds": round(seconds, 1),
                                         "target_seconds": 120}},
                 show=["summary", "audit_speed"])


if __name__ == "__main__":
    main()
