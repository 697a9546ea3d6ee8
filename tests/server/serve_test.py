#!/usr/bin/env python3
"""`attn serve` end to end, over real HTTP on 127.0.0.1: the API gives exactly what `attn explain --json`
prints (with importance methods too), predict agrees with explain, concurrent requests are batched
and each result is what the text gets alone, every error case answers with its status and a JSON
error, the metrics are exposed, and SIGTERM finishes the requests in flight before the process
exits 0. Nothing here waits a fixed time: a test that needs a request queued waits until /metrics
says it is.

usage: serve_test.py ATTN TINY_RUN_DIR
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading

ATTN, DIR = sys.argv[1:3]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import serving  # noqa: E402


class Server(serving.Server):
    """attn serve on a free port; post() reads a JSON answer."""

    def __init__(self, *args, threads=2):
        super().__init__(ATTN, "--threads", str(threads), *args)

    def post(self, path, body=None, raw=None):
        status, headers, text = self.request("POST", path, body, raw)
        return status, headers, json.loads(text) if text.startswith("{") else text


def attn_explain(run, *args):
    out = subprocess.run([ATTN, "explain", "--json", "--model", os.path.join(DIR, run), *args], check=True, capture_output=True,
                         text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def close(a, b, tol=1e-6, path="$"):
    """a and b equal as JSON, numbers within tol."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= tol
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    return a == b


texts = ["ice cream", "ice cream sucks", "You are a STUPID idiot!!!", "thanks for the edit, see the talk page",
         "zzz unknown words only", "the the the " * 80]
srv = Server("--model", f"toxic={DIR}/run", "--model", f"features={DIR}/features", "--model", f"dates={DIR}/dates/model.pt",
             "--model", f"{DIR}/transformer", "--model", f"documents={DIR}/hierarchical")
try:
    # ---- health, readiness, the models ----
    check(srv.request("GET", "/healthz")[0] == 200, "/healthz answers 200")
    status, _, body = srv.request("GET", "/readyz")
    check(status == 200 and json.loads(body)["models"] == 5, "/readyz is 200 with 5 models once they are warm")
    models = {m["name"]: m for m in json.loads(srv.request("GET", "/v1/models")[2])["models"]}
    check(set(models) == {"toxic", "features", "dates", "transformer", "documents"},
          "/v1/models lists every model (a PATH is named by its run)")
    check(models["toxic"]["task"] == "text-classification" and models["toxic"]["labels"][0] == "toxic"
          and models["toxic"]["input"] == "texts", "/v1/models: task, labels, input of a text model")
    check(models["features"]["input"] == "rows" and models["features"]["features"][0] == "x0", "/v1/models: a feature model's features")
    check(models["transformer"]["self_attention"] is True and models["toxic"]["config"]["embed_dim"] == 16,
          "/v1/models: self-attention and the config")

    # ---- the API gives what attn explain --json prints ----
    status, _, got = srv.post("/v1/explain", {"model": "toxic", "texts": texts})
    check(status == 200 and got["model"] == "toxic", "explain answers 200 naming the model")
    check(close(got["results"], attn_explain("run", *texts)), "/v1/explain results == attn explain --json (text classifier)")
    status, _, got = srv.post("/v1/explain", {"model": "transformer", "texts": texts[:3], "self_attention": True})
    check(close(got["results"], attn_explain("transformer", *texts[:3])), "/v1/explain with self_attention == attn explain --json")
    status, _, got = srv.post("/v1/explain", {"model": "transformer", "texts": texts[:1]})
    check("self_attention" not in got["results"][0], "self-attention only on request")
    dates = ["may 9, 1998", "SATURDAY, JANUARY 1, 2000", "9.5.98"]
    check(close(srv.post("/v1/explain", {"model": "dates", "texts": dates})[2]["results"], attn_explain("dates", *dates)),
          "/v1/explain == attn explain --json (seq2seq)")
    # A hierarchical model: sentences with their weights, words within them, the model's sentence layout applied.
    documents = ["Thanks for the update. You are a stupid idiot and your edits are garbage.\n\nSee you at the meeting.",
                 "One sentence only", ""]
    status, _, got = srv.post("/v1/explain", {"model": "documents", "texts": documents})
    check(status == 200 and close(got["results"], attn_explain("hierarchical", *documents)),
          "/v1/explain == attn explain --json (hierarchical: sentences and words)")
    check(status == 200 and len(got["results"][0]["sentences"]) == 3 and len(got["results"][1]["sentences"]) == 1
          and got["results"][2]["status"] == "no known word" and "sentences" not in got["results"][2],
          f"the documents' sentences, and a clear status for an empty one: {str(got)[:300]}")
    rows = [[0.5, 1.5, -1.0, 0.0, 2.0, -0.25], [-1.0, -2.0, -1.5, 0.3, 0.0, 1.0]]
    check(close(srv.post("/v1/explain", {"model": "features", "rows": rows})[2]["results"],
                attn_explain("features", "--", *[",".join(map(str, r)) for r in rows])), "/v1/explain == attn explain --json (features)")

    # ---- importance methods: what attn explain --json --methods prints; bad methods and steps are 400 ----
    check(models["toxic"]["methods"] == ["attention", "gradient", "grad-input", "integrated-gradients", "leave-one-out"]
          and models["transformer"]["methods"][-1] == "attention-rollout" and models["toxic"]["max_steps"] == 64,
          "/v1/models lists each model's importance methods and --max-steps")
    status, _, got = srv.post("/v1/explain", {"model": "toxic", "texts": texts[:4], "methods": ["integrated-gradients", "leave-one-out"],
                                              "steps": 8})
    check(status == 200 and close(got["results"], attn_explain("run", "--methods", "integrated-gradients,leave-one-out", "--steps", "8",
                                                               *texts[:4]), 1e-5),
          "/v1/explain with methods == attn explain --json --methods (text classifier)")
    dates_in = ["may 9, 1998"]
    status, _, got = srv.post("/v1/explain", {"model": "dates", "texts": dates_in, "methods": "grad-input"})
    check(status == 200 and close(got["results"], attn_explain("dates", "--methods", "grad-input", *dates_in), 1e-5),
          "/v1/explain with methods == attn explain --json --methods (seq2seq)")
    status, _, got = srv.post("/v1/explain", {"model": "transformer", "texts": texts[:2], "methods": ["attention-rollout"]})
    check(status == 200 and len(got["results"][0]["importance"]["attention-rollout"]["toxic"]) == len(got["results"][0]["ids"]),
          "attention rollout for the transformer")

    # ---- a human rationale: each method's plausibility against the words people marked ----
    marked_text = "You are a stupid idiot and your edits are garbage"
    status, _, got = srv.post("/v1/explain", {"model": "toxic", "texts": [marked_text, texts[0]], "rationales": [[3, 4], []],
                                               "methods": ["gradient"]})
    p = got["results"][0].get("plausibility", {}) if status == 200 else {}
    check(status == 200 and p.get("rationale") == [3, 4] and p.get("top_k") == 5 and "plausibility" not in got["results"][1],
          f"/v1/explain with rationales: the marked words and top-k (got {status} {str(p)[:200]})")
    figures = p.get("by_label", {}).get("insult", {})
    check(set(figures) == {"attention", "gradient"} and all(0 <= f["auprc"] <= 1 and 0 <= f["token_f1"] <= 1 for f in figures.values()),
          f"per label, the attention's and each asked method's IOU-F1, token-F1 and AUPRC ({figures})")
    # The attention's AUPRC by hand: the words ranked by weight (a dropped word lowest), precision at each marked one.
    weights = [w["weight"] if w["status"] not in ("dropped", "filtered") else -1 for w in got["results"][0]["words"]]
    hits, seen, area, last_recall, last_precision = 0, 0, 0.0, 0.0, 1.0
    for score in sorted(set(weights), reverse=True):  # one point per distinct score
        tied = [i for i, w in enumerate(weights) if w == score]
        hits, seen = hits + sum(i in (3, 4) for i in tied), seen + len(tied)
        recall, precision = hits / 2, hits / seen
        area += (recall - last_recall) * (precision + last_precision) / 2
        last_recall, last_precision = recall, precision
    check(abs(figures.get("attention", {}).get("auprc", -1) - area) < 1e-6, f"the attention's AUPRC is the PR curve's area ({area})")

    # ---- predict, the cheap path, agrees with explain ----
    predicted = srv.post("/v1/predict", {"model": "toxic", "texts": texts})[2]["results"]
    explained = srv.post("/v1/explain", {"model": "toxic", "texts": texts})[2]["results"]
    check(all(close(p["probabilities"], e["probabilities"]) for p, e in zip(predicted, explained)) and "words" not in predicted[0],
          "/v1/predict gives explain's probabilities only")
    check(srv.post("/v1/predict", {"model": "dates", "texts": dates})[2]["results"][0]["output"] == attn_explain("dates", dates[0])[0]["output"],
          "/v1/predict gives the seq2seq output")

    alone = {t: srv.post("/v1/explain", {"model": "toxic", "texts": [t]})[2]["results"][0] for t in texts}

    # ---- errors: status and a JSON error ----
    def error(expect, status, body, what):
        check(status == expect and isinstance(body, dict) and body.get("error", {}).get("status") == expect
              and body["error"].get("message"), f"{what}: {expect} with a JSON error (got {status} {body})")
    status, _, body = srv.post("/v1/explain", {"model": "toxic", "texts": [marked_text], "rationales": [[3, 10]]})
    error(400, status, body, "a rationale position beyond the text's words")
    check("rationales[0][1]" in str(body), f"the bad position is named ({body})")
    status, _, body = srv.post("/v1/explain", {"model": "toxic", "texts": [marked_text], "rationales": [[3], [4]]})
    error(400, status, body, "more rationales than texts")
    status, _, body = srv.post("/v1/explain", {"model": "toxic", "texts": [marked_text], "rationales": [["stupid"]]})
    error(400, status, body, "a rationale that is not positions")
    status, _, body = srv.post("/v1/explain", {"model": "dates", "texts": ["march 3 2001"], "rationales": [[0]]})
    error(400, status, body, "rationales for a model that is not a text classifier")
    status, _, body = srv.post("/v1/predict", {"model": "toxic", "texts": [marked_text], "rationales": [[3]]})
    error(400, status, body, "rationales on /v1/predict")

    error(400, *srv.post("/v1/explain", raw=b"{not json")[::2], "malformed JSON")
    error(400, *srv.post("/v1/explain", raw=b'{"model": "toxic", "texts": ["caf\xe9"]}')[::2], "invalid UTF-8")
    error(400, *srv.post("/v1/explain", {"model": "toxic"})[::2], "missing texts")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "texts": "one"})[::2], "texts not an array")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "texts": [3]})[::2], "a text that is not a string")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "rows": [[1]]})[::2], "rows for a text model")
    error(400, *srv.post("/v1/explain", {"model": "features", "rows": [[1, 2]]})[::2], "a row of the wrong width")
    error(400, *srv.post("/v1/explain", {"texts": ["a"]})[::2], "no model when several are served")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "texts": []})[::2], "no inputs")
    error(400, *srv.post("/v1/explain", [1, 2])[::2], "a body that is not an object")
    error(404, *srv.post("/v1/explain", {"model": "gpt", "texts": ["a"]})[::2], "unknown model")
    status, _, text = srv.request("GET", "/no/such/path")
    error(404, status, json.loads(text), "unknown path")
    status, headers, text = srv.request("GET", "/v1/explain")
    error(405, status, json.loads(text), "GET on /v1/explain")
    check(headers.get("Allow") == "POST", "405 says which method is allowed")
    status, _, text = srv.request("DELETE", "/healthz")
    error(405, status, json.loads(text), "DELETE on /healthz")
    error(413, *srv.post("/v1/explain", {"model": "toxic", "texts": ["a"] * 300})[::2], "more texts than --max-texts 256")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "texts": ["a"], "methods": ["shap"]})[::2], "an unknown method")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "texts": ["a"], "methods": ["attention-rollout"]})[::2],
          "a method the model cannot give")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "texts": ["a"], "methods": 5})[::2], "methods not a list")
    status, _, body = srv.post("/v1/explain", {"model": "toxic", "texts": ["a"], "methods": ["integrated-gradients"], "steps": 65})
    error(400, status, body, "steps over --max-steps")
    check("--max-steps" in body["error"]["message"], f"the 400 names --max-steps ({body['error']['message']})")
    error(400, *srv.post("/v1/explain", {"model": "toxic", "texts": ["a"], "methods": ["gradient"], "steps": "9"})[::2], "steps not an integer")
    error(400, *srv.post("/v1/predict", {"model": "toxic", "texts": ["a"], "methods": ["gradient"]})[::2], "methods on /v1/predict")

    # ---- the metrics ----
    metrics = srv.request("GET", "/metrics")[2]
    for family in ("attn_requests_total", "attn_request_duration_seconds_bucket", "attn_batch_size_bucket", "attn_queue_depth",
                   "attn_models_loaded 5"):
        check(family in metrics, f"/metrics has {family}")
    check('attn_requests_total{route="/v1/explain",status="413"} 1' in metrics, "/metrics counts requests by route and status")
    check('route="other",status="404"' in metrics, "unknown paths count under one label")
finally:
    code, log = srv.stop()
check(code == 0 and "stopped" in log, f"SIGTERM: exit 0 ({code})")



def queued(server, inputs):
    """Waits until /metrics says `inputs` inputs are queued (the batcher holds them for company)."""
    while f"attn_queue_depth {inputs}\n" not in server.request("GET", "/metrics")[2]:
        if server.proc.poll() is not None:
            raise SystemExit("attn serve exited")


# ---- concurrency: batched together, each result what its text gets alone ----
# (one inference thread, --max-batch 16 and a long --max-delay-ms: the batcher waits for 16 inputs,
# which 16 clients send at once)
srv = Server("--model", f"toxic={DIR}/run", "--max-batch", "16", "--max-delay-ms", "60000", threads=1)
try:
    before = srv.request("GET", "/metrics")[2]
    results, errors = {}, []

    def client(i):
        t = texts[i % len(texts)]
        for _ in range(3):
            status, _, body = srv.post("/v1/explain", {"model": "toxic", "texts": [t]})
            if status != 200:
                errors.append(status)
            else:
                results.setdefault(t, []).append(body["results"][0])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(16)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    check(not errors, f"48 concurrent requests all answered 200 ({errors})")
    check(all(close(r, alone[t]) for t, rs in results.items() for r in rs), "each text's result in a batch equals its result alone (1e-6)")
    after = srv.request("GET", "/metrics")[2]
    count = lambda text, name: float(re.search(rf"^{name} (\S+)$", text, re.M).group(1))
    batches = count(after, "attn_batch_size_count") - count(before, "attn_batch_size_count")
    inputs = count(after, "attn_batch_size_sum") - count(before, "attn_batch_size_sum")
    check(inputs == 48 and batches == 3, f"concurrent requests ran together: {inputs:.0f} inputs in {batches:.0f} batches of 16")
finally:
    srv.stop()

# ---- a full queue answers 503 with Retry-After; SIGTERM finishes the requests in flight ----
srv = Server("--model", f"toxic={DIR}/run", "--max-queue", "1", "--max-delay-ms", "60000", "--max-body-bytes", "4096")
try:
    status, _, body = srv.post("/v1/predict", raw=json.dumps({"texts": ["x" * 10000]}).encode())
    check(status == 413 and body["error"]["status"] == 413, f"a body over --max-body-bytes: 413 with a JSON error ({status} {body})")
    slow = {}
    th = threading.Thread(target=lambda: slow.update(r=srv.post("/v1/predict", {"texts": ["ice cream sucks"]})))
    th.start()
    queued(srv, 1)  # the first request waits in the queue for company
    status, headers, body = srv.post("/v1/predict", {"texts": ["another"]})
    check(status == 503 and body["error"]["status"] == 503 and headers.get("Retry-After") == "1", "a full queue: 503 with Retry-After")
    srv.proc.send_signal(signal.SIGTERM)  # while the first request is still queued
    th.join()
    check(slow["r"][0] == 200 and "probabilities" in slow["r"][2]["results"][0], "SIGTERM: the request in flight is answered")
    code = srv.proc.wait(timeout=30)
    check(code == 0, f"SIGTERM: exit 0 after draining ({code})")
finally:
    if srv.proc.poll() is None:
        srv.proc.kill()

# ---- a bad model is refused, named ----
bad = subprocess.run([ATTN, "serve", "--port", "0", "--model", f"good={DIR}/run", "--model", f"broken={DIR}/toxic.csv"],
                     capture_output=True, text=True, timeout=60)
check(bad.returncode == 1 and "broken" in bad.stderr and "toxic.csv" in bad.stderr, f"a bad model.pt stops the server, named: {bad.stderr.strip()}")
bad = subprocess.run([ATTN, "serve", "--port", "0"], capture_output=True, text=True, timeout=60)
check(bad.returncode == 2 and "--model" in bad.stderr, "no --model: a usage error")

finish()
