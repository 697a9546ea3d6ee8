#!/usr/bin/env python3
"""`attn serve` reloads a model's file without downtime, on 127.0.0.1: POST /v1/models/NAME/reload (and
SIGHUP) loads the new file, checks and warms it, and swaps it in while requests keep being answered;
/v1/models shows each model's file digest and load time; predictions afterwards are the new file's
(as `attn explain --json` gives them); a corrupt file leaves the loaded model serving and says why
(422 JSON, the log, /metrics); the reload route needs the API key like every other.

usage: serve_reload_test.py ATTN TINY_RUN_DIR SCRATCH_DIR
"""
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import serving  # noqa: E402

ATTN, DIR, SCRATCH = sys.argv[1:4]
KEY = "reload-test-key-0123456789"
TEXT = "you are a stupid idiot"


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def replace(source, target):
    """Copies source over target as a deployment would: a new file renamed into place."""
    shutil.copyfile(source, target + ".new")
    os.replace(target + ".new", target)


def explain_probabilities(model_file):
    out = subprocess.run([ATTN, "explain", "--json", "--model", model_file, TEXT], check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])["probabilities"]


shutil.rmtree(SCRATCH, ignore_errors=True)
os.makedirs(SCRATCH)
served = os.path.join(SCRATCH, "model.pt")
shutil.copyfile(os.path.join(DIR, "run", "model.pt"), served)
first_probabilities = explain_probabilities(served)
other_probabilities = explain_probabilities(os.path.join(DIR, "transformer", "model.pt"))
check(first_probabilities != other_probabilities, "the two model files predict differently (the test can tell them apart)")

server = serving.Server(ATTN, "--threads", "2", "--model", f"toxic={served}", env=dict(os.environ, ATTN_API_KEY=KEY))
proc, port, log = server.proc, server.port, server.lines
logged = threading.Condition()


def read_log():
    for line in iter(proc.stdout.readline, ""):
        with logged:
            log.append(line)
            logged.notify_all()


def wait_for_log(text, start):
    """Blocks until a line after log[start] contains text (the server's own account of what it did)."""
    with logged:
        return logged.wait_for(lambda: any(text in line for line in log[start:]), timeout=300)


threading.Thread(target=read_log, daemon=True).start()


def call(method, path, body=None, key=KEY):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def probabilities():
    status, body = call("POST", "/v1/predict", {"texts": [TEXT]})
    return body["results"][0]["probabilities"] if status == 200 else None


def close(a, b):
    return a is not None and all(abs(a[k] - b[k]) <= 1e-5 for k in b)


status, models = call("GET", "/v1/models")
info = models["models"][0]
check(info["sha256"] == sha256(served) and re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", info["loaded_at"]),
      "/v1/models shows the file's SHA-256 and when it was loaded")
check(close(probabilities(), first_probabilities), "before: the first file's predictions")

# Requests keep being answered while the file is reloaded.
statuses, stop, more = [], threading.Event(), threading.Condition()


def traffic():
    while not stop.is_set():
        status = call("POST", "/v1/predict", {"texts": [TEXT]})[0]
        with more:
            statuses.append(status)
            more.notify_all()


clients = [threading.Thread(target=traffic) for _ in range(3)]
for c in clients:
    c.start()
replace(os.path.join(DIR, "transformer", "model.pt"), served)
status, body = call("POST", "/v1/models/toxic/reload")
check(status == 200 and body["reloaded"]["sha256"] == sha256(served), f"reload: 200 with the new file's digest ({status})")
with more:  # a few more requests after the swap
    after_reload = len(statuses)
    more.wait_for(lambda: len(statuses) >= after_reload + 3, timeout=300)
stop.set()
for c in clients:
    c.join()
check(len(statuses) > 3 and all(s == 200 for s in statuses), f"every request during the reload was answered ({len(statuses)} requests)")
check(close(probabilities(), other_probabilities), "after: the new file's predictions")

# A corrupt file: 422 saying why, the loaded model still serves.
with open(served, "r+b") as f:
    f.seek(os.path.getsize(served) // 2)
    f.write(b"\x00corrupt\x00")
status, body = call("POST", "/v1/models/toxic/reload")
check(status == 422 and "still serves" in body["error"]["message"] and served in body["error"]["message"],
      f"a corrupt file: 422 naming the file ({status}: {body})")
check(close(probabilities(), other_probabilities), "the loaded model still serves")
status, body = call("GET", "/v1/models")
check(body["models"][0]["sha256"] == sha256(os.path.join(DIR, "transformer", "model.pt")), "/v1/models still shows the loaded file's digest")
req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {KEY}"})
metrics = urllib.request.urlopen(req, timeout=60).read().decode()
check('attn_model_reloads_total{model="toxic",result="ok"} 1' in metrics and
      'attn_model_reloads_total{model="toxic",result="failed"} 1' in metrics, "/metrics counts reloads by result")
status, body = call("POST", "/v1/models/nobody/reload")
check(status == 404, "an unknown model: 404")
status, body = call("POST", "/v1/models/toxic/reload", key=None)
check(status == 401, "reloading needs the API key")
status, body = call("GET", "/v1/models/toxic/reload")
check(status == 405, "GET on the reload route: 405")

# SIGHUP reloads every model: the first file again.
replace(os.path.join(DIR, "run", "model.pt"), served)
start = len(log)
proc.send_signal(signal.SIGHUP)
check(wait_for_log("reloaded toxic", start), "SIGHUP: the server says it reloaded the model")
check(close(probabilities(), first_probabilities), "SIGHUP: the file is reloaded")
check(any("reload of toxic failed" in line and "still serves" in line for line in log), "the failed reload is in the log, with why")

proc.send_signal(signal.SIGTERM)
proc.wait(timeout=60)
check(proc.returncode == 0, "stopped")
shutil.rmtree(SCRATCH, ignore_errors=True)
finish()
