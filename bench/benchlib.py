"""What attn's benchmarks share: where the build is, running attn and timing it, reading a run's
metrics, and writing figures as JSON (atomically, then printed)."""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
ATTN = os.path.join(BIN, "attn")
RESULTS = os.path.join(ROOT, "bench", "results")


def attn(*args, **kwargs):
    """Runs `attn ARGS...` (echoed to stderr), stdout discarded unless capture=True; returns the process."""
    capture = kwargs.pop("capture", False)
    print("+ attn " + " ".join(args), file=sys.stderr)
    return subprocess.run([ATTN] + list(args), check=True, text=True,
                          stdout=subprocess.PIPE if capture else subprocess.DEVNULL, **kwargs)


def timed(fn, *args, **kwargs):
    """(seconds, result) of fn(*args, **kwargs)."""
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t0, result


def run_with_rss(cmd):
    """Runs cmd with stdout discarded; returns (wall seconds, the child's peak RSS in MB)."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}")
    return wall, usage.ru_maxrss / 1024


def epochs(run):
    """The metrics.jsonl records of a run directory."""
    with open(os.path.join(run, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def last_epoch(run):
    return epochs(run)[-1]


def workdir(name):
    """A fresh temporary directory for one benchmark run."""
    return tempfile.mkdtemp(prefix=f"attn-{name}-")


def host():
    """The machine a figure was measured on: its CPU's model name, cores and widest vector kernels
    (figures move with the host: docs/importance.md#speed)."""
    first = {}  # the first processor's fields
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                first.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return {"cpu": first.get("model name", ""), "family": first.get("cpu family", ""), "model": first.get("model", ""),
            "cores": os.cpu_count(), "avx512": "avx512f" in first.get("flags", "").split()}


def write_result(path, result, show=None):
    """Writes `result` as JSON to `path` atomically, with the host it was measured on, and prints it
    (or only the keys in `show`)."""
    result.setdefault("host", host())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print(json.dumps(result if show is None else {k: result[k] for k in show if k in result}, indent=2))


PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch and python3-keras-preprocessing


def median_of(samples):
    import statistics
    return statistics.median(samples)


def jigsaw_model(work, rows=160000, threads=2):
    """A bilstm-attention run trained one epoch on `rows` Jigsaw-profile comments (the seed's sizes:
    a ~220k-word tokenizer.json, 2.67 M parameters): what the start-up and scoring benchmarks load."""
    corpus = os.path.join(work, f"jigsaw-{rows}.csv")
    run = os.path.join(work, f"jigsaw-{rows}-run")
    if not os.path.exists(os.path.join(run, "model.pt")):
        subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, str(rows), "2018"], check=True)
        attn("train", "--csv", corpus, "--epochs", "1", "--batch-size", "512", "--threads", str(threads), "--out", run)
    return run


def sgemm_peak_gflops(threads):
    """The best single-precision matrix-product rate of this host (LibTorch's BLAS, 2048 x 2048, best of
    20: best of 5 measured 358-395 GFLOP/s on a host whose best of 20 was 398-401, which made a share
    of it look up to 12% better than it was)."""
    code = (f"import torch, time\ntorch.set_num_threads({threads})\nn = 2048\na, b = torch.randn(n, n), torch.randn(n, n)\n"
            "a @ b\nbest = 0\nfor _ in range(20):\n    t = time.perf_counter(); a @ b; best = max(best, 2 * n ** 3 / (time.perf_counter() - t))\n"
            "print(best / 1e9)")
    return float(subprocess.run([PYTHON, "-c", code], check=True, capture_output=True, text=True).stdout)


def roc_auc(scores, positive):
    """Mann-Whitney AUC of scores against booleans, ties counted half."""
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    rank_sum, pos, i = 0.0, 0, 0
    while i < len(order):
        j = i
        while j < len(order) and scores[order[j]] == scores[order[i]]:
            j += 1
        avg = (i + 1 + j) / 2
        for k in range(i, j):
            if positive[order[k]]:
                rank_sum += avg
                pos += 1
        i = j
    neg = len(scores) - pos
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def train_and_score(run, train_file, test_file, train_flags, threads="2"):
    """`attn train --csv TRAIN_FILE ... --out RUN`, then `attn evaluate` of TEST_FILE: (training seconds,
    the metrics, the predictions CSV's rows as dicts)."""
    import csv
    t0 = time.perf_counter()
    attn("train", "--csv", train_file, "--threads", threads, "--out", run, *train_flags)
    seconds = time.perf_counter() - t0
    preds, metrics = os.path.join(run, "test_predictions.csv"), os.path.join(run, "test_metrics.json")
    attn("evaluate", "--model", run, "--csv", test_file, "--predictions", preds, "--metrics", metrics, "--threads", threads)
    with open(metrics) as f:
        m = json.load(f)
    with open(preds, newline="") as f:
        rows = list(csv.DictReader(f))
    return seconds, m, rows
