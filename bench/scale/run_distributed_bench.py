#!/usr/bin/env python3
"""Data-parallel training: one epoch of bilstm-attention (the seed's sizes, batch 512) on a Jigsaw-profile
corpus as 1 worker x 1 thread and as 2 workers x 1 thread (`attn train --nproc 2`), the cost of one
step's communication (an allreduce of the model's 2.67 M gradients through c10d/Gloo between two local
processes, timed with torch.distributed: the same library attn links), and what a row-wise reduction of
the embedding gradient would send instead (the distinct word ids of a worker's share of a batch).

usage: /usr/bin/python3 bench/scale/run_distributed_bench.py   (Debian's python3-torch) [--rows 32000] [--out bench/scale/results/distributed.json]
Needs a built tree (bash scripts/setup.sh). Target: 2 workers >= 1.6x one on this 2-core machine.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import BIN, arguments, attn, last_epoch, workdir, write_result  # noqa: E402

ALLREDUCE = r"""
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=int(sys.argv[2]), world_size=2)
torch.set_num_threads(1)
n, times = int(sys.argv[3]), []
for i in range(25):
    t = torch.ones(n)
    t0 = time.perf_counter(); dist.all_reduce(t); times.append(time.perf_counter() - t0)
if dist.get_rank() == 0:
    times = sorted(times[5:]); print(times[len(times) // 2])
"""


def allreduce_seconds(numel):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = str(s.getsockname()[1])
    s.close()
    script = os.path.join(tempfile.mkdtemp(prefix="attn-allreduce-"), "allreduce.py")
    with open(script, "w") as f:
        f.write(ALLREDUCE)
    procs = [subprocess.Popen(["/usr/bin/python3", script, port, str(r), str(numel)], stdout=subprocess.PIPE, text=True)
             for r in range(2)]
    out = [p.communicate()[0] for p in procs]
    return float(out[0].strip())


def main():
    args = arguments(__file__, "distributed.json", rows=32000).parse_args()
    work = workdir("distributed-bench")
    corpus, data = os.path.join(work, "corpus.csv"), os.path.join(work, "data")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, str(args.rows), "2018"], check=True)
    attn("prepare", "--csv", corpus, "--out", data)
    runs = {}
    for name, extra in (("1_worker_x_1_thread", []), ("2_workers_x_1_thread", ["--nproc", "2"])):
        out = os.path.join(work, name)
        print(f"one epoch, {name} ...", file=sys.stderr)
        t0 = time.perf_counter()
        attn("train", "--data", data, "--out", out, "--epochs", "1", "--batch-size", "512", "--threads", "1", *extra)
        wall = time.perf_counter() - t0
        m = last_epoch(out)
        runs[name] = {"epoch_seconds": round(m["seconds"], 2), "wall_seconds": round(wall, 2), "rows_per_second": round(m["rows_per_second"], 1),
                      "loss": m["loss"], "val_loss": m["val_loss"], "val_mean_auc": m["val_mean_auc"]}
    import torch
    model = torch.jit.load(os.path.join(work, "1_worker_x_1_thread", "model.pt"))
    params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    with open(os.path.join(work, "1_worker_x_1_thread", "config.json")) as f:
        config = json.load(f)["model_config"]
    embedding = config["num_words"] * config["embed_dim"]
    print("allreduce timing ...", file=sys.stderr)
    full = allreduce_seconds(params)
    # What a row-wise reduction would move: the distinct ids in a worker's half of a batch of 512.
    ids = torch.load(os.path.join(data, "data.pt"))
    x = ids["x"] if isinstance(ids, dict) else ids
    batches = x[: (x.shape[0] // 512) * 512].reshape(-1, 512, x.shape[1])[:, :256]
    distinct = [int(torch.unique(b[b != 0]).numel()) for b in batches[:20]]
    mean_distinct = sum(distinct) / len(distinct)
    rows_floats = int(mean_distinct * (config["embed_dim"] + 1))
    sparse = allreduce_seconds(2 * rows_floats + (params - embedding))  # ~ an allgather of both workers' rows + the rest dense
    steps = args.rows * 0.8 / 512
    result = {
        "benchmark": "one epoch of bilstm-attention (seed sizes, batch 512): 1 worker x 1 thread vs attn train --nproc 2 (2 x 1 thread)",
        "corpus": {"rows": args.rows, "generator": "bench/gen_jigsaw_profile 2018"},
        "runs": runs,
        "speedup_2_workers": round(runs["1_worker_x_1_thread"]["epoch_seconds"] / runs["2_workers_x_1_thread"]["epoch_seconds"], 3),
        "target_speedup": 1.6,
        "communication": {
            "gradients": params, "embedding_gradients": embedding,
            "allreduce_seconds_per_step": round(full, 5),
            "steps_per_epoch": steps,
            "allreduce_share_of_2_worker_epoch": round(full * steps / runs["2_workers_x_1_thread"]["epoch_seconds"], 4),
            "distinct_ids_per_worker_share_of_a_batch": round(mean_distinct, 1),
            "row_wise_floats_per_step": 2 * rows_floats + (params - embedding),
            "row_wise_reduction_seconds_per_step_estimate": round(sparse, 5),
        },
    }
    write_result(args.out, result)


if __name__ == "__main__":
    main()
