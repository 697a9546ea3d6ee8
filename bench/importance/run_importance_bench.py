#!/usr/bin/env python3
"""Word importance, timed: `attn faithfulness` on 150 Jigsaw-length comments (all five methods,
integrated gradients with 50 steps, 2 threads) against its Python peer (bench/importance/python_faithfulness.py:
torch.jit.load of the same model.pt and autograd, batched as Captum batches), whole processes; the
figures of both compared; where attn's time goes (the methods added one at a time); and one
sentence's integrated gradients (50 steps, every label) through `attn serve`, p50 and p90.

The peer runs twice per round, in rounds alternating with attn's: as installed (glibc's default heap,
which hands a large tensor's pages back to the kernel when it is freed and takes them back zeroed,
a page fault per 4 KB, at the next one) and with GLIBC_TUNABLES giving it the heap attn's apps keep
(apps/common/memory.h: no block mapped on its own, no trimming, 256 MB of top padding, one arena).
The second tells whether the peer's page faults explain its time (measured: they do not; the peer is
bound by the cost of each operation, docs/importance.md#speed).

usage: python3 bench/importance/run_importance_bench.py [--model RUN_DIR] [--rows 150] [--rounds 2] [--out bench/importance/results/importance.json]
Targets: attn faithfulness >= 10x the peer's whole-process time; the server's IG-50 p50 < 25 ms.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, JIGSAW_MODEL_HELP, PYTHON, jigsaw_model, median_of, result_path, timed, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = "attention,gradient,grad-input,integrated-gradients,leave-one-out"
# attn's apps' heap (apps/common/memory.cpp's mallopt calls) as glibc's tunables
ATTN_HEAP = ("glibc.malloc.mmap_max=0:glibc.malloc.arena_max=1:glibc.malloc.trim_threshold=18446744073709551615:"
             "glibc.malloc.top_pad=268435456")


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def faithfulness(model, csv, rows, out, methods=METHODS):
    return [ATTN, "faithfulness", "--model", model, "--csv", csv, "--rows", str(rows), "--methods", methods, "--steps", "50",
            "--threads", "2", "--json", out]


def a_sentence(model, csv):
    """The first comment of `csv` cut to its first 12 words, when the model knows at least 10 of them."""
    import csv as csvlib
    csvlib.field_size_limit(1 << 30)
    for record in csvlib.DictReader(open(csv, newline="", encoding="utf-8")):
        sentence = " ".join(record["comment_text"].split()[:12])
        out = subprocess.run([ATTN, "explain", "--json", "--model", model, sentence], check=True, capture_output=True, text=True).stdout
        if len(json.loads(out)["ids"]) >= 10:
            return sentence
    raise SystemExit("no sentence of 10 known words")


def server_latency(model, sentence, requests=60):
    """p50 and p90 of one sentence's integrated gradients (50 steps, every label) through attn serve."""
    server = subprocess.Popen([ATTN, "serve", "--model", "toxic=" + model, "--port", "0", "--threads", "2"], stdout=subprocess.PIPE,
                              text=True)
    try:
        port = None
        for line in server.stdout:
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            port = int(m.group(1)) if m else port
            if line.strip().endswith("ready"):
                break
        body = json.dumps({"model": "toxic", "texts": [sentence],
                           "methods": ["integrated-gradients"], "steps": 50}).encode()
        latencies = []
        for i in range(requests + 5):
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/explain", data=body, headers={"Content-Type": "application/json"})
            seconds, response = timed(lambda: urllib.request.urlopen(request).read())
            assert b"integrated-gradients" in response
            if i >= 5:  # the first few warm the methods up
                latencies.append(seconds * 1000)
        latencies.sort()
        return {"requests": requests, "p50_ms": round(latencies[len(latencies) // 2], 2),
                "p90_ms": round(latencies[int(len(latencies) * 0.9)], 2)}
    finally:
        server.terminate()
        server.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help=JIGSAW_MODEL_HELP)
    ap.add_argument("--rows", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=2, help="rounds of attn, the peer, the peer with attn's heap (the peer takes minutes)")
    ap.add_argument("--server-only", action="store_true", help="only the server's latency (with --model)")
    ap.add_argument("--out", default=result_path(__file__, "importance.json"))
    args = ap.parse_args()
    work = workdir("importance")
    run_dir = args.model or jigsaw_model(work)
    model = os.path.join(run_dir, "model.pt")
    csv = os.path.join(work, "comments.csv")  # rows the model did not train on, with Jigsaw's lengths
    run([os.path.join(BIN, "gen_jigsaw_profile"), csv, "2000", "7"])
    if args.server_only:
        sentence = a_sentence(model, csv)
        print(json.dumps({"server_sentence": sentence, "server_integrated_gradients_50": server_latency(model, sentence)}, indent=2))
        return

    attn_out, peer_out = os.path.join(work, "attn.json"), os.path.join(work, "peer.json")
    peer = [PYTHON, os.path.join(HERE, "python_faithfulness.py"), model, csv, str(args.rows), "50", "2", peer_out]
    times = {"attn": [], "peer": [], "peer_attn_heap": []}
    for i in range(args.rounds):
        times["attn"].append(timed(run, faithfulness(model, csv, args.rows, attn_out))[0])
        times["peer"].append(timed(run, peer)[0])
        times["peer_attn_heap"].append(timed(subprocess.run, peer, check=True, stdout=subprocess.DEVNULL,
                                             env=dict(os.environ, GLIBC_TUNABLES=ATTN_HEAP))[0])
        print(f"round {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()), file=sys.stderr)
    attn_seconds, peer_seconds, peer_heap_seconds = (median_of(times[k]) for k in ("attn", "peer", "peer_attn_heap"))
    ours, theirs = json.load(open(attn_out)), json.load(open(peer_out))
    differences = [abs(ours["methods"][m][l][k] - theirs["methods"][m][l][k])
                   for m in METHODS.split(",") for l in theirs["methods"][m]
                   for k in ("aopc_comprehensiveness", "aopc_sufficiency", "kendall_tau_loo")]

    # Where attn's time goes: the methods added one at a time (leave-one-out is always computed, for tau).
    profile = {}
    for methods in ["attention", "attention,gradient,grad-input", "attention,integrated-gradients", METHODS]:
        profile[methods] = round(median_of([timed(run, faithfulness(model, csv, args.rows, os.path.join(work, "p.json"), methods))[0]
                                            for _ in range(2)]), 2)
    floor = timed(run, [ATTN, "explain", "--model", model, "ok"])[0]  # start-up: loading LibTorch and the model

    sentence = a_sentence(model, csv)
    result = {
        "what": f"attn faithfulness vs its Python peer: {args.rows} Jigsaw-length comments, methods {METHODS}, "
                "integrated gradients 50 steps, 2 threads, whole processes",
        "rows": ours["rows"],
        "attn_seconds": round(attn_seconds, 2),
        "peer_seconds": round(peer_seconds, 2),
        "ratio": round(peer_seconds / attn_seconds, 1),
        "peer_attn_heap_seconds": round(peer_heap_seconds, 2),
        "ratio_peer_attn_heap": round(peer_heap_seconds / attn_seconds, 1),
        "rounds_seconds": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "peer_attn_heap": "GLIBC_TUNABLES=" + ATTN_HEAP,
        "target_ratio": 10,
        "figures_max_abs_difference": round(max(differences), 6),
        "profile_seconds_by_methods": profile,
        "startup_seconds": round(floor, 2),
        "server_sentence": sentence,
        "server_integrated_gradients_50": server_latency(model, sentence),
        "server_target_p50_ms": 25,
        "model": run_dir,
    }
    write_result(args.out, result)


if __name__ == "__main__":
    main()
