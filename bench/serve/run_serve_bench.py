#!/usr/bin/env python3
"""Load test of `attn serve`: 16 concurrent keep-alive clients (wrk, from Debian) sending single-text
POST /v1/explain requests of Jigsaw-length comments to 127.0.0.1, for a fixed time: requests/s and
p50/p99 latency with dynamic batching (--max-batch 64: what queued while the inference threads
were busy, the default), with batches also waiting up to 5 ms for company (--max-delay-ms 5), without
batching (--max-batch 1), and for the
obvious Python way (bench/serve/python_serve.py: torch.jit.load + the embedded Keras tokenizer + pad to
maxlen behind ThreadingHTTPServer, one forward per request). The model is the main job's
(bilstm-attention at the seed's sizes, defaults), trained one epoch on 20,000 comments with Jigsaw
train.csv's profile (bench/gen_jigsaw_profile.cpp); the requests are 4,000 other comments of the same
profile, so their words are the model's and their lengths Jigsaw's (median 36 words, a long tail).

usage: python3 bench/serve/run_serve_bench.py [--seconds 20] [--rounds 3] [--baseline OLD_BIN_DIR] [--out bench/serve/results/serve.json]
Also with API keys on (--api-key-file) and over TLS (a self-signed certificate, keys on), same run,
the three in alternating rounds (medians), with the server's CPU time per request. --baseline runs
another build's `attn` (its bin/ directory, e.g. an earlier commit's) in the same alternating rounds,
and reports this build's requests/s and p99 against it per setting.
Target: >= 10x the Python way's requests/s, a lower p99, no errors; keys within 5%, TLS within 15%.
"""
import argparse
import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, attn, result_path, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

LUA = r"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if os.getenv("KEY") ~= "" then wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY") end
local bodies = {}
for line in io.lines(os.getenv("BODIES")) do bodies[#bodies + 1] = line end
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(proc, word):
    for line in proc.stdout:
        if word in line:
            return
    sys.exit(f"server exited: {proc.wait()}")


def to_ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def load(port, path, bodies, seconds, work, key="", scheme="http"):
    script = os.path.join(work, "post.lua")
    with open(script, "w") as f:
        f.write(LUA)
    out = subprocess.run(["wrk", "-t2", "-c16", f"-d{seconds}s", "--latency", "-s", script, f"{scheme}://127.0.0.1:{port}{path}"],
                         capture_output=True, text=True, check=True, env=dict(os.environ, BODIES=bodies, KEY=key)).stdout
    lat = {p: to_ms(v, u) for p, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)$", out, re.M)}
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)$", out, re.M)
    return {"requests": int(re.search(r"(\d+) requests in", out).group(1)),
            "requests_per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_ms": lat["50"], "p99_ms": lat["99"], "non_2xx": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": errors.group(1) if errors else None}


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of the plain, API-key and TLS runs")
    ap.add_argument("--baseline", help="another build's bin/ directory, run in the same alternating rounds")
    ap.add_argument("--out", default=result_path(__file__, "serve.json"))
    args = ap.parse_args()
    if not shutil.which("wrk"):
        sys.exit("needs wrk (apt-get install wrk)")
    work = workdir("serve-bench")
    run, train = os.path.join(work, "toxic"), os.path.join(work, "train.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), train, "20000", "2018"], check=True, stdout=subprocess.DEVNULL)
    attn("train", "--csv", train, "--epochs", "1", "--out", run, "--threads", str(args.threads))
    corpus = os.path.join(work, "corpus.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), corpus, "4000", "7"], check=True, stdout=subprocess.DEVNULL)
    csv.field_size_limit(1 << 30)
    texts = [r["comment_text"] for r in csv.DictReader(open(corpus, newline="", encoding="utf-8"))]
    bodies = os.path.join(work, "bodies.jsonl")
    with open(bodies, "w") as f:
        for t in texts:
            f.write(json.dumps({"texts": [t]}) + "\n")
    words = sorted(len(t.split()) for t in texts)
    result = {"benchmark": "16 concurrent clients (wrk -t2 -c16), single-text POST /v1/explain, Jigsaw-length comments",
              "seconds_per_run": args.seconds, "threads": args.threads, "model": "bilstm-attention, seed sizes (2.67 M parameters), one epoch on 20,000 Jigsaw-profile comments",
              "comments": {"count": len(texts), "median_words": words[len(words) // 2], "p99_words": words[int(len(words) * 0.99)]},
              "runs": {}}
    key = "bench-key-0123456789abcdef"
    keys = os.path.join(work, "keys.txt")
    with open(keys, "w") as f:
        f.write(f"bench:{key}\n")
    os.chmod(keys, 0o600)
    cert, private = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", private,
                    "-out", cert], check=True, capture_output=True)
    os.chmod(private, 0o600)
    # (name, flags, key, scheme): the same load with API keys on, and over TLS (with keys).
    configs = [("attn_serve_batched", ["--max-batch", "64"], "", "http"),
               ("attn_serve_api_key", ["--max-batch", "64", "--api-key-file", keys], key, "http"),
               ("attn_serve_tls", ["--max-batch", "64", "--api-key-file", keys, "--tls-cert", cert, "--tls-key", private], key, "https"),
               ("attn_serve_max_delay_5", ["--max-batch", "64", "--max-delay-ms", "5"], "", "http"),
               ("attn_serve_max_batch_1", ["--max-batch", "1"], "", "http")]
    def serve(name, extra, run_key, scheme, attn_binary=ATTN):
        """One load run against a fresh server: wrk's figures, the mean batch, and the server's own CPU
        time per request (wrk shares the cores: its TLS work lowers the requests/s of a TLS run too)."""
        port = free_port()
        proc = subprocess.Popen([attn_binary, "serve", "--model", f"toxic={run}", "--port", str(port), "--threads", str(args.threads),
                                 *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_ready(proc, "ready")
        print(f"load: {name} ...", file=sys.stderr)
        cpu0 = cpu_seconds(proc.pid)
        figures = load(port, "/v1/explain", bodies, args.seconds, work, run_key, scheme)
        figures["server_cpu_us_per_request"] = round((cpu_seconds(proc.pid) - cpu0) / max(1, figures["requests"]) * 1e6, 1)
        metrics = subprocess.run(["curl", "-sk", "-H", f"Authorization: Bearer {run_key}", f"{scheme}://127.0.0.1:{port}/metrics"],
                                 capture_output=True, text=True).stdout
        count = float(re.search(r"^attn_batch_size_count (\S+)", metrics, re.M).group(1))
        total = float(re.search(r"^attn_batch_size_sum (\S+)", metrics, re.M).group(1))
        figures["mean_batch_size"] = total / count if count else None
        proc.terminate()
        proc.wait()
        return figures

    try:
        # The three the security settings compare, in alternating rounds (this machine's speed drifts
        # by 10% over minutes): each figure is the median round's.
        compared, rounds = configs[:3], {}
        for _ in range(args.rounds):
            for name, extra, run_key, scheme in compared:
                rounds.setdefault(name, []).append(serve(name, extra, run_key, scheme))
                if args.baseline:
                    rounds.setdefault("baseline_" + name, []).append(
                        serve("baseline_" + name, extra, run_key, scheme, os.path.join(args.baseline, "attn")))
        for name, runs in rounds.items():
            ordered = sorted(runs, key=lambda r: r["requests_per_second"])
            result["runs"][name] = dict(ordered[len(ordered) // 2], rounds_requests_per_second=[r["requests_per_second"] for r in runs])
        for name, extra, run_key, scheme in configs[3:]:
            result["runs"][name] = serve(name, extra, run_key, scheme)
        for name, extra in (("python_threading_http_server", []), ("python_threading_http_server_nodelay", ["--nodelay"])):
            port = free_port()
            proc = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "python_serve.py"), os.path.join(run, "model.pt"),
                                     str(port), *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            wait_ready(proc, "ready")
            print(f"load: {name} ...", file=sys.stderr)
            result["runs"][name] = load(port, "/v1/explain", bodies, args.seconds, work)
            proc.terminate()
            proc.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    py, ours = result["runs"]["python_threading_http_server"], result["runs"]["attn_serve_batched"]
    result["speedup_requests_per_second_vs_python"] = ours["requests_per_second"] / py["requests_per_second"]
    result["speedup_requests_per_second_vs_python_nodelay"] = (
        ours["requests_per_second"] / result["runs"]["python_threading_http_server_nodelay"]["requests_per_second"])
    result["speedup_vs_max_batch_1"] = ours["requests_per_second"] / result["runs"]["attn_serve_max_batch_1"]["requests_per_second"]
    result["speedup_vs_max_delay_5"] = ours["requests_per_second"] / result["runs"]["attn_serve_max_delay_5"]["requests_per_second"]
    result["api_key_vs_none"] = result["runs"]["attn_serve_api_key"]["requests_per_second"] / ours["requests_per_second"]
    result["tls_vs_none"] = result["runs"]["attn_serve_tls"]["requests_per_second"] / ours["requests_per_second"]
    result["server_cpu_per_request_tls_vs_none"] = (result["runs"]["attn_serve_tls"]["server_cpu_us_per_request"] /
                                                    ours["server_cpu_us_per_request"])
    if args.baseline:
        result["baseline"] = args.baseline
        result["vs_baseline"] = {}
        for name, _, _, _ in configs[:3]:
            new, old = result["runs"][name], result["runs"]["baseline_" + name]
            result["vs_baseline"][name] = {"requests_per_second": round(new["requests_per_second"] / old["requests_per_second"], 3),
                                           "p99_ms": [old["p99_ms"], new["p99_ms"]],
                                           "rounds_ratio": [round(a / b, 3) for a, b in zip(new["rounds_requests_per_second"],
                                                                                           old["rounds_requests_per_second"])]}
    result["note"] = ("16 clients never queue --max-batch 64 inputs, so with --max-delay-ms 5 every batch waits its full 5 ms "
                      "while its inference thread's core idles; batching what queued while the threads were busy needs no wait. "
                      "wrk shares the two cores with the server.")
    result["targets"] = {"speedup_vs_python": 10, "p99_below_python": ours["p99_ms"] < py["p99_ms"],
                         "api_key_within_5_percent": result["api_key_vs_none"] >= 0.95, "tls_within_15_percent": result["tls_vs_none"] >= 0.85,
                         "no_errors": all(r["non_2xx"] == 0 and not r["socket_errors"] for r in result["runs"].values())}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
