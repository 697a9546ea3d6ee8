#!/usr/bin/env python3
"""`attn train` across two machines: two Linux network namespaces joined by a veth pair, the link
shaped to 1 Gbit/s (tc tbf), each namespace with its own host name (unshare --uts, /etc/netns/NAME/hosts,
which `ip netns exec` mounts over /etc/hosts), one torchrun per "host", one worker each:

- torchrun's c10d form (--rdzv_backend c10d --rdzv_endpoint FIRST:29400) and its static form
  (--nnodes 2 --node_rank 0|1 --master_addr FIRST --master_port 29500, whose agent serves the store
  the workers join) both train the run one process trains (no dropout: each worker draws its own masks);
- host names that resolve to a loopback address on both "hosts" (what an /etc/hosts line such as
  `127.0.1.1 NAME` does) fail at once on both sides, saying so, instead of waiting.

All traffic stays inside the namespaces this test makes; they are deleted at the end, also on failure.
Needs root (network namespaces); without it, or without torchrun, it says so and exits 77 (skipped).

usage: two_hosts_test.py ATTN WORK_DIR
"""
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import two_hosts  # noqa: E402

ATTN, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])


def metrics(d):
    with open(os.path.join(d, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def same_training(d, reference):
    """The figures of every epoch within float rounding of the one-process run's (the workers sum
    their shares' gradients in another order)."""
    try:
        got, want = metrics(d), metrics(reference)
    except OSError:
        return False
    keys = ("loss", "val_loss", "val_mean_auc")
    return len(got) == len(want) and all(abs(g[k] - w[k]) <= 1e-4 for g, w in zip(got, want) for k in keys)


def main():
    why = two_hosts.unavailable()
    if why:
        print(f"two_hosts_test: skipped: {why}", file=sys.stderr)
        sys.exit(77)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    csv = os.path.join(WORK, "toxic.csv")
    two_hosts.sh(ATTN, "datagen", "toxic", "--rows", "1500", "--seed", "4", "--out", csv)
    def settings(epochs, worker_timeout):  # small, and no dropout: each worker would draw its own masks
        return ["--epochs", str(epochs), "--batch-size", "64", "--seed", "2", "--set", "embed_dim=16", "--set", "lstm_units=8", "--set",
                "spatial_dropout=0", "--set", "lstm_dropout=0", "--set", "recurrent_dropout=0", "--worker-timeout", str(worker_timeout)]
    small = settings(2, 300)  # (a worker waits for a slow other up to the default: only a hang fails)
    reference = os.path.join(WORK, "one-process")
    two_hosts.sh(ATTN, "train", "--csv", csv, *small, "--out", reference)
    tag = str(os.getpid())

    try:
        net = two_hosts.TwoHosts(rate="1gbit").__enter__()
    except RuntimeError as e:
        print(f"two_hosts_test: skipped: cannot make network namespaces here: {e}", file=sys.stderr)
        sys.exit(77)
    try:
        first = net.hosts[0]["addr"]
        train = lambda out: [ATTN, "train", "--csv", csv, *small, "--out", out]  # noqa: E731

        # torchrun's c10d rendezvous on the first host's address.
        out = os.path.join(WORK, "c10d")
        form = two_hosts.c10d_form(first, 29400, "attn" + tag)
        codes, outputs, seconds = net.torchrun_pair(WORK, "c10d", [form, form], train(out))
        check(codes == [0, 0], f"c10d form: both hosts' torchrun exit 0 (got {codes}): {outputs[0][-1500:]} {outputs[1][-1500:]}")
        check(same_training(out, reference), "c10d form: two hosts train the run one process trains")
        check(all("allreduce_bytes" in m for m in metrics(out)) if os.path.exists(out) else False,
              "the workers' epochs record the bytes they exchanged")
        print(f"c10d form: {seconds:.1f} s", file=sys.stderr)

        # torchrun's static form: node 0's agent serves the store at --master_addr:--master_port.
        out = os.path.join(WORK, "static")
        codes, outputs, seconds = net.torchrun_pair(WORK, "static", two_hosts.static_forms(first, 29500), train(out))
        check(codes == [0, 0], f"static form: both hosts' torchrun exit 0 (got {codes}): {outputs[0][-1500:]} {outputs[1][-1500:]}")
        check(same_training(out, reference), "static form: two hosts train the run one process trains")
        print(f"static form: {seconds:.1f} s", file=sys.stderr)

        # The cable pulled mid-run (`ip link set down`): no packet gets through and no connection is
        # reset, so each worker's next collective waits; both end with a clear error once
        # --worker-timeout (30 s) has passed, well before the default's 300 s (the bound, 150 s, only
        # tells the flag honoured from ignored: a loaded machine is slower, not wrong). Under
        # --max_restarts, once the cable is back torchrun restarts the group, which continues from the
        # last checkpoint and ends as the uncut run. 20 epochs, a second or more each here: the cable
        # is pulled after the first, with the rest of the run still to go.
        longer = settings(20, 30)
        reference20 = os.path.join(WORK, "one-process-20")
        two_hosts.sh(ATTN, "train", "--csv", csv, *longer, "--out", reference20)
        ended = {}

        def cut_after_first_epoch(procs, heads):
            if two_hosts.read_until(procs[0], heads, 0, "epoch 1/20") is None:
                raise RuntimeError(f"no epoch finished: {heads[0][-1500:]}")
            net.link(False)
            t0 = time.time()
            for i in range(2):  # each side's worker: the failed collective's error line
                if two_hosts.read_until(procs[i], heads, i, "failed (another worker stopped or cannot be reached)") is not None:
                    ended.setdefault("seconds", []).append(round(time.time() - t0, 1))
            net.link(True)

        out = os.path.join(WORK, "cut")  # the static form: rank 0, which prints the epochs, is on host 0
        codes, outputs, seconds = net.torchrun_pair(WORK, "cut", [f + ["--max_restarts", "1"] for f in two_hosts.static_forms(first, 29502)],
                                                    [ATTN, "train", "--csv", csv, *longer, "--out", out], timeout=600,
                                                    while_running=cut_after_first_epoch)
        waits = ended.get("seconds", [])
        check(len(waits) == 2 and all(w < 150 for w in waits),
              f"a pulled cable: each side's worker fails with a clear error after --worker-timeout 30, not the default 300 "
              f"(after {waits} s): {outputs[0][-1500:]}")
        check(codes == [0, 0], f"cable back: torchrun restarts the group and finishes (exit {codes}): {outputs[0][-1500:]} {outputs[1][-1500:]}")
        check(same_training(out, reference20), "the restarted run ends as the uncut run")

        # Each machine maps its own name to a loopback address (`127.0.1.1 NAME` in /etc/hosts, as
        # Debian's installer writes) and knows the other's: torchrun's rendezvous (on the first
        # host's name) works, but the workers would advertise 127.0.1.1 to each other. Both sides
        # fail at once, and say why: with --worker-timeout 3600, workers that waited for each other
        # instead would still be waiting when the pair is killed (after 300 s, exit -9).
        net.hosts_file(own_name="127.0.1.1")
        out = os.path.join(WORK, "loopback")
        form = two_hosts.c10d_form(net.hosts[0]["name"], 29401, "attn" + tag + "l")
        codes, outputs, seconds = net.torchrun_pair(WORK, "loopback", [form, form], [ATTN, "train", "--csv", csv, *settings(2, 3600), "--out", out],
                                                    timeout=300)
        check(all(c not in (0, -9) for c in codes), f"loopback names: both hosts fail by themselves, not waiting for --worker-timeout "
                                                    f"(exit {codes}, after {seconds:.1f} s)")
        check(all("(loopback)" in o for o in outputs),
              f"loopback names: each host says a name resolves to a loopback address: {outputs[0][-1200:]} {outputs[1][-1200:]}")
    finally:
        net.__exit__(None, None, None)
    finish()


if __name__ == "__main__":
    main()
