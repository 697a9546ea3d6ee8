#!/usr/bin/env python3
"""Scale-out across two "machines" (tests/support/two_hosts.py: network namespaces joined by a veth
pair shaped to 1 Gbit/s, one torchrun per host with c10d rendezvous, one worker x 1 thread each):
one epoch of bilstm-attention on 32k Jigsaw-profile rows, batch 512, against one process x 1 thread,
with the embedding's gradient exchanged dense (--no-sparse-gradients) and row-sparse (the default); and
the same with a 100k-word x 300 embedding (GloVe/fastText-sized). Both "hosts" share this machine's
2 cores, so each worker gets one, as a machine of its own would.

Each case runs the three setups in alternating rounds (this machine's speed drifts from minute to
minute) and reports each one's median epoch, and every round's.

usage: /usr/bin/python3 bench/scale/run_two_hosts_bench.py [--rows 32000] [--rate 1gbit] [--rounds 3] [--out bench/scale/results/two_hosts.json]
Needs root (network namespaces) and a built tree. Goal: >= 1.7x one process with row-sparse gradients.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, ROOT, attn, last_epoch, result_path, workdir, write_result  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import two_hosts  # noqa: E402


def figures(out, wall):
    m = last_epoch(out)
    with open(os.path.join(out, "config.json")) as f:
        config = json.load(f)["model_config"]
    return {"embedding": [config["num_words"], config["embed_dim"]], "epoch_seconds": round(m["seconds"], 2), "wall_seconds": round(wall, 2), "val_loss": m["val_loss"],
            "allreduce_bytes_per_step": m.get("allreduce_bytes")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=32000)
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=result_path(__file__, "two_hosts.json"))
    args = ap.parse_args()
    why = two_hosts.unavailable()
    if why:
        sys.exit(f"run_two_hosts_bench: {why}")
    work = workdir("two-hosts-bench")
    corpus = os.path.join(work, "corpus.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, str(args.rows), "2018"], check=True)
    # The seed's tokenizer (20,000 words, a 128-wide embedding), and a GloVe/fastText-sized table:
    # every word the corpus has (up to 100,000), 300 wide.
    cases = {"seed_sizes": (20000, []), "embedding_100k_x_300": (100000, ["--set", "embed_dim=300"])}
    for case, (words, _) in cases.items():
        attn("prepare", "--csv", corpus, "--num-words", str(words), "--out", os.path.join(work, "data-" + case))
    result = {"benchmark": f"one epoch, {args.rows} Jigsaw-profile rows, batch 512, bilstm-attention; 2 hosts = 2 network namespaces "
                           f"over a veth pair shaped to {args.rate} (tc tbf), c10d rendezvous, 1 worker x 1 thread each; "
                           f"median of {args.rounds} alternating rounds",
              "rate": args.rate, "rounds": args.rounds, "cases": {}}
    with two_hosts.TwoHosts(rate=args.rate) as net:
        for case, (_, sets) in cases.items():
            data = os.path.join(work, "data-" + case)
            common = ["train", "--data", data, "--epochs", "1", "--batch-size", "512", "--threads", "1", *sets]
            rounds = {"one_process": [], "two_hosts_dense": [], "two_hosts_row_sparse": []}
            for k in range(args.rounds):
                out = os.path.join(work, f"{case}-one-{k}")
                print(f"{case} round {k + 1}: one process ...", file=sys.stderr)
                t0 = time.perf_counter()
                attn(*common, "--out", out)
                rounds["one_process"].append(figures(out, time.perf_counter() - t0))
                for name, extra in (("two_hosts_dense", ["--no-sparse-gradients"]), ("two_hosts_row_sparse", [])):
                    out = os.path.join(work, f"{case}-{name}-{k}")
                    print(f"{case} round {k + 1}: {name} ...", file=sys.stderr)
                    form = two_hosts.c10d_form(net.hosts[0]["addr"], 29400, f"bench-{case}-{name}-{k}")
                    codes, outputs, wall = net.torchrun_pair(work, f"{case}-{name}-{k}", [form, form],
                                                             [ATTN, *common, "--out", out, *extra], timeout=1800)
                    if codes != [0, 0]:
                        sys.exit(f"{case} {name}: torchrun exited {codes}:\n{outputs[0][-2000:]}\n{outputs[1][-2000:]}")
                    rounds[name].append(figures(out, wall))
            runs = {}
            for name, each in rounds.items():  # the median round's figures, and every round's epoch
                median = statistics.median(r["epoch_seconds"] for r in each)
                runs[name] = dict(min(each, key=lambda r: abs(r["epoch_seconds"] - median)), epoch_seconds=round(median, 2),
                                  epoch_seconds_each_round=[r["epoch_seconds"] for r in each])
            one = runs["one_process"]["epoch_seconds"]
            for name in ("two_hosts_dense", "two_hosts_row_sparse"):
                runs[name]["speedup_vs_one_process"] = round(one / runs[name]["epoch_seconds"], 2)
                runs[name]["speedup_each_round"] = [round(o["epoch_seconds"] / r["epoch_seconds"], 2)
                                                    for o, r in zip(rounds["one_process"], rounds[name])]
            result["cases"][case] = runs
    sparse = result["cases"]["seed_sizes"]["two_hosts_row_sparse"]["speedup_vs_one_process"]
    result["targets"] = {"row_sparse_speedup": 1.7, "met": sparse >= 1.7}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
