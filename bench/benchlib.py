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


def write_result(path, result, show=None):
    """Writes `result` as JSON to `path` atomically and prints it (or only the keys in `show`)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print(json.dumps(result if show is None else {k: result[k] for k in show if k in result}, indent=2))
