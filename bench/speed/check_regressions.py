#!/usr/bin/env python3
"""The guard against speed that slips unseen: the quick speed checks on this tree's build and on an
older commit's, built beside it, run alternately (whole processes; this host's speed drifts by a
third within an hour, so only a same-run, interleaved comparison counts), each ratio with its noise.

  prepare        attn prepare of 160,000 Jigsaw-profile comments (Keras-exact tokenizer + padding)
  explain        attn explain of one sentence, whole process: the start-up a shell script pays per
                 text; also shown over bin/libtorch_floor (a program that only loads LibTorch, run in
                 the same rounds), the floor every LibTorch program pays
  evaluate       attn evaluate of 20,000 comments with a bilstm-attention model
  epoch          attn train: one epoch of bilstm-attention on 20,000 comments, batch 512, 2 threads
  faithfulness   attn faithfulness on 150 rows (five importance methods, ERASER's measures)
  small-job      attn train of 3,000 documents, 3 epochs, 1 thread a worker: one worker against two
                 (torchrun --standalone --nproc_per_node 2 --monitor_interval 0.1 --no_python, and --nproc 2);
                 the figure is the speed-up, the baseline's against this tree's

The model for explain, evaluate and faithfulness is trained once by the baseline's build on the
160,000 comments (one epoch: the seed's sizes, a tokenizer of ~220,000 words, as bench/speed/perf_explain.py
loads), so both builds read the same file (a newer attn reads an older model.pt). Each round runs the baseline then
this tree, or this tree then the baseline, in turn. Per check: each build's median, the ratio of the
medians (this tree / baseline; for small-job the baseline's speed-up over this tree's), and the noise:
the spread of the per-round ratios. A check FAILS when this tree is slower beyond noise: the median
ratio above 1 + --tolerance (5%) and every round's ratio above 1.

usage: python3 bench/speed/check_regressions.py --baseline COMMIT [--checks prepare,explain,...] [--rounds 1.0]
                                                [--out bench/speed/results/regressions.json]
  --rounds X scales each check's rounds (prepare 9, explain 15, evaluate 3, epoch 3, faithfulness 3,
  small-job 3: the quick ones are the noisy ones)
Needs this tree built (scripts/setup.sh: bench targets included). The baseline is built once in
build/baselines/COMMIT (a git worktree; the compiler cache makes a rebuild cheap) and kept.
Before a stop that touched a hot path: python3 bench/speed/check_regressions.py --baseline origin/main
(docs/testing.md). About 8 minutes once both builds exist.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import BIN, ROOT, build_baseline, result_path, workdir, write_result  # noqa: E402

CHECKS = ["prepare", "explain", "evaluate", "epoch", "faithfulness", "small-job"]
ROUNDS = {"prepare": 9, "explain": 15, "evaluate": 3, "epoch": 3, "faithfulness": 3, "small-job": 3}
BASELINE_TARGETS = ["attn", "attn-prepare", "attn-explain", "attn-evaluate", "attn-train", "attn-faithfulness"]


def seconds(argv, env=None):
    """Wall seconds of one whole process (stdout and stderr discarded); fails loudly."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(argv)}\n{r.stderr[-2000:]}")
    return time.perf_counter() - t0


class Data:
    """The inputs every check reads, made once by this tree's generators (and the model by the baseline)."""

    def __init__(self, work, base_bin, checks):
        self.work = work
        gen = os.path.join(BIN, "gen_jigsaw_profile")
        self.corpus = os.path.join(work, "jigsaw-160000.csv")
        if checks & {"prepare", "explain", "evaluate", "faithfulness"}:
            subprocess.run([gen, self.corpus, "160000", "2018"], check=True, stdout=subprocess.DEVNULL)
        self.train = os.path.join(work, "jigsaw-20000.csv")
        self.scored = os.path.join(work, "jigsaw-20000-other.csv")
        subprocess.run([gen, self.train, "20000", "2018"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([gen, self.scored, "20000", "7"], check=True, stdout=subprocess.DEVNULL)
        self.model = os.path.join(work, "model")
        if checks & {"explain", "evaluate", "faithfulness"}:
            subprocess.run([os.path.join(base_bin, "attn"), "train", "--csv", self.corpus, "--epochs", "1", "--batch-size", "512",
                            "--threads", "2", "--out", self.model], check=True, stdout=subprocess.DEVNULL)
        self.documents = os.path.join(work, "documents-3000.csv")
        if "small-job" in checks:
            subprocess.run([os.path.join(BIN, "attn"), "datagen", "documents", "--rows", "3000", "--seed", "7", "--out", self.documents],
                           check=True, stdout=subprocess.DEVNULL)
        self.n = 0

    def out(self):
        """A fresh output path (no run pays for removing the last one's files)."""
        self.n += 1
        return os.path.join(self.work, f"out-{self.n}")


def one(check, bin_dir, data):
    """One measurement of `check` with the commands in bin_dir: seconds (small-job: the speed-up)."""
    attn = os.path.join(bin_dir, "attn")
    if check == "prepare":
        subprocess.run(["sync"], check=True)
        return seconds([attn, "prepare", "--csv", data.corpus, "--out", data.out()])
    if check == "explain":
        return seconds([attn, "explain", "--model", os.path.join(data.model, "model.pt"), "ice cream sucks"])
    if check == "evaluate":
        return seconds([attn, "evaluate", "--model", data.model, "--csv", data.scored, "--threads", "2",
                        "--predictions", data.out() + ".csv"])
    if check == "epoch":
        return seconds([attn, "train", "--csv", data.train, "--epochs", "1", "--batch-size", "512", "--threads", "2", "--out", data.out()])
    if check == "faithfulness":
        return seconds([attn, "faithfulness", "--model", data.model, "--csv", data.scored, "--rows", "150", "--threads", "2",
                        "--json", data.out() + ".json"])
    if check == "small-job":
        train = ["train", "--csv", data.documents, "--epochs", "3", "--batch-size", "64", "--threads", "1"]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        one_worker = seconds([attn, *train, "--out", data.out()], env)
        torchrun = shutil.which("torchrun")
        if not torchrun:
            return one_worker / seconds([attn, *train, "--out", data.out(), "--nproc", "2"], env)
        out = data.out()
        two = seconds([torchrun, "--standalone", "--nproc_per_node", "2", "--monitor_interval", "0.1", "--redirects", "1", "--tee", "1",
                       "--log_dir", out + "-logs", "--no_python", attn, *train, "--out", out], env)
        return one_worker / two
    raise ValueError(check)


def floor_seconds():
    return seconds([os.path.join(BIN, "libtorch_floor")])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="the commit to compare with (e.g. origin/main)")
    ap.add_argument("--checks", default=",".join(CHECKS))
    ap.add_argument("--rounds", type=float, default=1.0, help="a factor on each check's rounds")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--out", default=result_path(__file__, "regressions.json"))
    args = ap.parse_args()
    checks = [c for c in args.checks.split(",") if c]
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        sys.exit(f"--checks: unknown {', '.join(unknown)} (known: {', '.join(CHECKS)})")
    for needed in ("attn", "gen_jigsaw_profile", "libtorch_floor"):
        if not os.path.exists(os.path.join(BIN, needed)):
            sys.exit(f"{os.path.join(BIN, needed)} is missing: build this tree first (bash scripts/setup.sh)")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                text=True).stdout.strip())
    base_bin, base_sha = build_baseline(args.baseline, BASELINE_TARGETS)
    t_start = time.perf_counter()
    work = workdir("regressions")
    data = Data(work, base_bin, set(checks))
    builds = {"baseline": base_bin, "head": BIN}
    results = {}
    failed = []
    for check in checks:
        rounds = max(1, round(ROUNDS[check] * args.rounds))
        samples = {"baseline": [], "head": []}
        floors = []
        for r in range(rounds):
            order = ["baseline", "head"] if r % 2 == 0 else ["head", "baseline"]
            if check == "explain":
                floors.append(floor_seconds())
            for name in order:
                samples[name].append(one(check, builds[name], data))
            print(f"{check} round {r + 1}/{rounds}: baseline {samples['baseline'][-1]:.3f}, head {samples['head'][-1]:.3f}",
                  file=sys.stderr)
        if check == "small-job":  # a speed-up: lower is worse, so the ratio is the baseline's over this tree's
            ratios = [b / h for b, h in zip(samples["baseline"], samples["head"])]
        else:
            ratios = [h / b for b, h in zip(samples["baseline"], samples["head"])]
        median = statistics.median(ratios)
        slower = median > 1 + args.tolerance and min(ratios) > 1
        entry = {"rounds": rounds, "baseline": [round(x, 4) for x in samples["baseline"]], "head": [round(x, 4) for x in samples["head"]],
                 "baseline_median": round(statistics.median(samples["baseline"]), 4), "head_median": round(statistics.median(samples["head"]), 4),
                 "ratio_median": round(median, 3), "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)], "slower_beyond_noise": slower}
        if check == "explain":
            entry["floor_median"] = round(statistics.median(floors), 4)
            entry["baseline_over_floor_ms"] = round(1000 * (entry["baseline_median"] - entry["floor_median"]), 1)
            entry["head_over_floor_ms"] = round(1000 * (entry["head_median"] - entry["floor_median"]), 1)
        results[check] = entry
        if slower:
            failed.append(check)
        what = "speed-up" if check == "small-job" else "seconds"
        print(f"{check:13s} {what}: baseline {entry['baseline_median']:.3f}, head {entry['head_median']:.3f}; "
              f"ratio {median:.3f} (rounds {min(ratios):.3f}-{max(ratios):.3f}){'  SLOWER' if slower else ''}")
        if check == "explain":
            print(f"{'':13s} over the LibTorch floor ({entry['floor_median']:.3f} s): baseline {entry['baseline_over_floor_ms']:.0f} ms, "
                  f"head {entry['head_over_floor_ms']:.0f} ms")
    shutil.rmtree(work, ignore_errors=True)
    write_result(args.out, {"benchmark": "the quick speed checks, this tree against a baseline built beside it, alternating",
                            "baseline": base_sha[:10], "head": head[:10] + (" (uncommitted changes)" if dirty else ""),
                            "tolerance": args.tolerance, "seconds": round(time.perf_counter() - t_start), "checks": results,
                            "slower": failed}, show=("baseline", "head", "seconds", "slower"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
