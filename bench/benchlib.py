"""What attn's benchmarks share: where the build is, running attn and timing it, reading a run's
metrics, each script's options and its results folder (bench/FOLDER/results/, beside the script),
writing figures as JSON (atomically, then printed), the baseline build the guards compare with,
HateXplain's splits, and the Python peers' loading of model.pt.

Scripts in bench/FOLDER/ import it with one line before `from benchlib import ...`:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib"""
import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
ATTN = os.path.join(BIN, "attn")
REALDATA = os.path.join(ROOT, "..", "shared", "realdata")  # the public corpora attn does not ship (our machines' copy)


def result_path(script, name):
    """Where the script at `script` (its __file__) keeps its figures: NAME in the results/ folder beside it."""
    return os.path.join(os.path.dirname(os.path.abspath(script)), "results", name)


def arguments(script, result, description=None, **defaults):
    """A benchmark's ArgumentParser: --NAME for each keyword (underscores as dashes; the type of its
    default), and --out, by default RESULT in the results/ folder beside `script` (result_path)."""
    ap = argparse.ArgumentParser(description=description)
    for name, default in defaults.items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    ap.add_argument("--out", default=result_path(script, result))
    return ap


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


def measured(cmd):
    """Runs cmd with stdout discarded: (wall seconds, the child's resource usage from wait4); exits when it fails."""
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
    return wall, usage


def run_with_rss(cmd):
    """Runs cmd with stdout discarded; returns (wall seconds, the child's peak RSS in MB)."""
    wall, usage = measured(cmd)
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


def write_json(path, result):
    """Writes `result` as JSON to `path` atomically (its folder made if missing)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def write_result(path, result, show=None):
    """Writes `result` as JSON to `path` atomically, with the host it was measured on, and prints it
    (or only the keys in `show`)."""
    result.setdefault("host", host())
    write_json(path, result)
    print(json.dumps(result if show is None else {k: result[k] for k in show if k in result}, indent=2))


def run_parts(out, only, parts, name, threads):
    """Measures each part named in `only` (comma-separated keys of `parts`, each a function(work,
    threads) returning its figures) in one fresh work directory, and writes OUT with them beside the
    figures it already holds of the parts not run."""
    work = workdir(name)
    result = json.load(open(out)) if os.path.exists(out) else {}
    result["threads"] = threads
    try:
        for part in only.split(","):
            result[part] = parts[part](work, threads)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_result(out, result)


PYTHON = "/usr/bin/python3"  # Debian's, with python3-torch and python3-keras-preprocessing


def median_of(samples):
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


# The --model of the scripts that otherwise train jigsaw_model(work).
JIGSAW_MODEL_HELP = "a run directory (default: train one on 160,000 Jigsaw-profile comments)"


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


def build_baseline(commit, targets):
    """bin/ of a Release build of `commit` in build/baselines/SHA (a git worktree, kept: the guards'
    baseline), its `targets` built if missing; and the commit's full SHA."""
    sha = subprocess.run(["git", "-C", ROOT, "rev-parse", commit], check=True, capture_output=True, text=True).stdout.strip()
    src = os.path.join(ROOT, "build", "baselines", sha[:10])
    if not os.path.isdir(src):
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", src, sha], check=True)
    build = os.path.join(src, "build")
    env = dict(os.environ, CCACHE_BASEDIR=src)
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DATTN_BUILD_TESTS=OFF",
                        "-DATTN_BUILD_BENCH=OFF", "-DATTN_BUILD_SERVER=OFF"], check=True, stdout=subprocess.DEVNULL, env=env)
    print(f"building the baseline {sha[:10]} in {build}", file=sys.stderr)
    subprocess.run(["cmake", "--build", build, "--target", *targets], check=True, stdout=subprocess.DEVNULL, env=env)
    return os.path.join(build, "bin"), sha


HATEXPLAIN_CLASSES = {"0": "normal", "1": "hatespeech", "2": "offensive"}  # 092-HateXplain.csv's category


def write_hatexplain_splits(corpus, out_dir):
    """HateXplain's train.jsonl and val.jsonl ({"post_id", "text", "label"}) in OUT_DIR, in the official
    splits' order: eraser/docs.jsonl (each post's tokens) joined with 092-HateXplain.csv (each post's
    majority class) by post id. Returns each split's row count."""
    text = {}
    with open(os.path.join(corpus, "eraser", "docs.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            text[d["docid"]] = d["document"]
    label = {}
    with open(os.path.join(corpus, "092-HateXplain.csv"), encoding="utf-8", newline="") as f:
        for row in csv.reader(f):
            if row and row[0] and row[3] in HATEXPLAIN_CLASSES:
                label[row[0]] = HATEXPLAIN_CLASSES[row[3]]
    with open(os.path.join(corpus, "post_id_divisions.json")) as f:
        divisions = json.load(f)
    counts = {}
    for split in ("train", "val"):
        n = 0
        with open(os.path.join(out_dir, split + ".jsonl"), "w", encoding="utf-8") as f:
            for pid in divisions[split]:
                if pid in text and pid in label:
                    f.write(json.dumps({"post_id": pid, "text": text[pid], "label": label[pid]}, ensure_ascii=False) + "\n")
                    n += 1
        counts[split] = n
    return counts


def hatexplain_work(corpus, name):
    """(a fresh work directory holding HateXplain's splits, their row counts: write_hatexplain_splits);
    exits 77 (skipped) when the corpus is not at `corpus` (it is not part of attn)."""
    if not os.path.exists(os.path.join(corpus, "eraser", "docs.jsonl")):
        print(f"SKIP: no HateXplain corpus at {corpus}")
        sys.exit(77)
    work = workdir(name)
    return work, write_hatexplain_splits(corpus, work)


def peer_usage(doc, required):
    """A Python peer's check of its command line (positional arguments, as `doc` describes them): with
    -h/--help it prints `doc` and exits 0; with fewer than `required` arguments, prints it and exits 2."""
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    if asked or len(sys.argv) - 1 < required:
        print(doc.strip())
        sys.exit(0 if asked else 2)


def jit_model(path, threads):
    """model.pt as the Python peers load it: torch on `threads` threads, torch.jit.load in eval mode with
    its parameters frozen (only the inputs' gradients are taken); (model, labels, maxlen, its embedded
    Keras tokenizer)."""
    import torch
    from keras_preprocessing.text import tokenizer_from_json
    torch.set_num_threads(threads)
    extra = {"config.json": "", "tokenizer.json": ""}
    model = torch.jit.load(path, _extra_files=extra)
    model.eval()
    config = json.loads(extra["config.json"])
    tokenizer = tokenizer_from_json(extra["tokenizer.json"])
    for p in model.parameters():
        p.requires_grad_(False)
    return model, config["data"]["labels"], config["data"]["maxlen"], tokenizer


def token_rows(csv_path, column, tokenizer, maxlen, rows, min_tokens=0):
    """The token ids of the first `rows` texts in the CSV's `column` that keep at least `min_tokens`
    tokens, each cut to its last `maxlen` (Keras' truncating='pre', as in training)."""
    out = []
    csv.field_size_limit(1 << 30)
    for record in csv.DictReader(open(csv_path, newline="", encoding="utf-8")):
        ids = tokenizer.texts_to_sequences([record[column]])[0][-maxlen:]
        if len(ids) >= min_tokens:
            out.append(ids)
        if len(out) == rows:
            break
    return out


BUILTIN_TERMS = ["lesbian", "gay", "bisexual", "transgender", "queer", "straight", "homosexual", "heterosexual", "muslim", "christian",
                 "jewish", "hindu", "buddhist", "catholic", "atheist", "black", "white", "asian", "african", "latino", "mexican", "chinese",
                 "female", "male"]  # attn audit's built-in terms (lib/src/text/identity_terms.cpp), in its order
# Counterfactual training over every other built-in term, so that the rest are terms it never swapped.
SEEN_TERMS, UNSEEN_TERMS = BUILTIN_TERMS[0::2], BUILTIN_TERMS[1::2]


def swapped_posts(tagged_path, out_path, terms, seed=1):
    """The posts of `tagged_path` that name one of `terms` (a word of the text, or it with a plural s),
    and a copy of each with every such word swapped for another term, drawn; returns the ids."""
    rng, ids = random.Random(seed), []
    with open(tagged_path) as f, open(out_path, "w") as out:
        for line in f:
            post = json.loads(line)
            words = post["text"].split(" ")
            hits = [i for i, w in enumerate(words) if w.lower() in terms or (w.lower().endswith("s") and w.lower()[:-1] in terms)]
            if not hits:
                continue
            for i in hits:
                plural = words[i].lower() not in terms
                base = words[i].lower()[:-1] if plural else words[i].lower()
                words[i] = rng.choice([t for t in terms if t != base]) + ("s" if plural else "")
            ids.append(post["post_id"])
            out.write(json.dumps(dict(post, text=" ".join(words), post_id=post["post_id"])) + "\n")
    return ids
