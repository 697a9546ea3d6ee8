#!/usr/bin/env python3
"""`attn serve` with API keys, on 127.0.0.1: every path but /healthz and /readyz answers 401
(WWW-Authenticate, JSON) without a valid `Authorization: Bearer KEY`, unknown ones and other spellings
included (no route can be told from a missing one), and as before with one; --public-docs opens the page
and /openapi.json; dot segments are 400; a key from ATTN_API_KEY works the same; /metrics and the access log name the key, never show it; a key file
others may read, and a --host other than loopback without keys, stop the server before it starts.

usage: serve_auth_test.py ATTN TINY_RUN_DIR SCRATCH_DIR
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import serving  # noqa: E402

ATTN, DIR, SCRATCH = sys.argv[1:4]
ALICE, BOB = "alice-0123456789abcdef", "bob-fedcba9876543210"


class Server(serving.Server):
    def __init__(self, *args, env=None):
        super().__init__(ATTN, "--threads", "1", "--model", f"toxic={DIR}/run", *args, env=env)

    def request(self, method, path, key=None, body=None, scheme="Bearer"):
        return super().request(method, path, body, headers={"Authorization": f"{scheme} {key}"} if key else {})


def refused_at_start(*args, env=None):
    r = subprocess.run([ATTN, "serve", "--port", "0", "--model", f"toxic={DIR}/run", *args], capture_output=True, text=True, timeout=120,
                       env=env)
    return r.returncode, r.stderr


keys = serving.key_file(SCRATCH, f"# the callers\nalice:{ALICE}\nbob:{BOB}\n")
log = os.path.join(SCRATCH, "access.jsonl")

# ---- Refused before serving.
os.chmod(keys, 0o644)
code, err = refused_at_start("--api-key-file", keys)
check(code == 2 and keys in err and "chmod 600" in err, f"a key file others may read is refused ({code}: {err.strip()})")
os.chmod(keys, 0o600)
code, err = refused_at_start("--host", "0.0.0.0")
check(code == 2 and "--allow-unauthenticated" in err and "--api-key-file" in err,
      f"a non-loopback --host without keys does not start ({code}: {err.strip()})")

# ---- Keys from a file.
server = Server("--api-key-file", keys, "--access-log", log)
check(any("API keys required" in line for line in server.lines), "the server says it requires keys")
for path in ["/healthz", "/readyz"]:
    status, _, _ = server.request("GET", path)
    check(status == 200, f"GET {path} needs no key ({status})")
# Without a key, a route, a missing path, a wrong method and other spellings all look the same.
status, _, _ = server.request("POST", "/healthz")
check(status == 405, f"POST /healthz without a key: 405, as anyone may know the probes ({status})")
for method, path in [("GET", "/"), ("GET", "/openapi.json"), ("GET", "/nothing-here"), ("DELETE", "/v1/models"),
                     ("GET", "/v1/models/../metrics"), ("GET", "/%6detrics"), ("GET", "/%68ealthz"), ("GET", "/healthz/"),
                     ("GET", "/v1/models/toxic/reload")]:
    status, headers, text = server.request(method, path)
    check(status == 401 and headers.get("WWW-Authenticate", "").startswith("Bearer"), f"{method} {path} without a key: 401 ({status})")
# With one, as ever: 404, 405; a dot segment (also %-encoded) is refused, never resolved.
for method, path, expected in [("GET", "/nothing-here", 404), ("GET", "/%6detrics", 404), ("POST", "/healthz", 405),
                               ("GET", "/v1/models/../metrics", 400), ("GET", "/v1/%2e%2E/metrics", 400), ("GET", "/./healthz", 400),
                               ("GET", "/openapi.json", 200), ("GET", "/", 200)]:
    status, _, text = server.request(method, path, key=ALICE)
    check(status == expected, f"{method} {path} with alice's key: {expected} ({status}: {text[:80]})")
body = {"texts": ["you are an idiot"]}
for method, path, payload in [("GET", "/v1/models", None), ("POST", "/v1/predict", body), ("POST", "/v1/explain", body),
                              ("GET", "/metrics", None)]:
    status, headers, text = server.request(method, path, body=payload)
    check(status == 401 and headers.get("WWW-Authenticate", "").startswith("Bearer"), f"{method} {path} without a key: 401 ({status})")
    check(json.loads(text)["error"]["status"] == 401 and "Authorization: Bearer" in text, f"{method} {path}: the JSON error says how")
    status, _, text = server.request(method, path, key="not-" + ALICE, body=payload)
    check(status == 401 and "not valid" in text, f"{method} {path} with a wrong key: 401 ({status})")
    status, _, text = server.request(method, path, key=ALICE, body=payload)
    check(status == 200, f"{method} {path} with alice's key: 200 ({status}: {text[:80]})")
status, _, text = server.request("POST", "/v1/predict", key=BOB, body=body, scheme="bearer")
check(status == 200 and len(json.loads(text)["results"]) == 1, "bob's key, the scheme in lower case: 200")
status, _, metrics = server.request("GET", "/metrics", key=ALICE)
check('attn_requests_by_key_total{key="alice"} 11' in metrics and 'attn_requests_by_key_total{key="bob"} 1' in metrics,
      "/metrics counts requests by key name")
check(ALICE not in metrics and BOB not in metrics, "/metrics never shows a key")
code, out = server.stop()
check(code == 0, "stopped")
with open(log) as f:
    text = f.read()
lines = [json.loads(line) for line in text.splitlines()]
check(ALICE not in text and BOB not in text, "the access log never shows a key")
predicts = [e for e in lines if e["path"] == "/v1/predict" and e["status"] == 200]
check(len(predicts) == 2 and {e.get("key") for e in predicts} == {"alice", "bob"} and all(e["inputs"] == 1 for e in predicts),
      "the access log names the key and counts the inputs")
check(all({"time", "client", "method", "path", "status", "ms"} <= set(e) for e in lines) and
      any(e["status"] == 401 and "key" not in e for e in lines), "every request is a line; refused ones carry no key name")

# ---- --public-docs: the page and the API's description without a key; the rest as before.
server = Server("--api-key-file", keys, "--public-docs")
for path in ["/", "/openapi.json", "/healthz"]:
    status, _, _ = server.request("GET", path)
    check(status == 200, f"--public-docs: GET {path} needs no key ({status})")
for path in ["/v1/models", "/metrics", "/nothing-here"]:
    status, _, _ = server.request("GET", path)
    check(status == 401, f"--public-docs: GET {path} without a key: 401 ({status})")
check(server.stop()[0] == 0, "stopped")

# ---- One key from the environment.
env = dict(os.environ, ATTN_API_KEY=ALICE)
server = Server(env=env)
status, _, _ = server.request("GET", "/v1/models")
check(status == 401, "ATTN_API_KEY: no key, 401")
status, _, _ = server.request("GET", "/v1/models", key=ALICE)
check(status == 200, "ATTN_API_KEY: the key, 200")
check(server.stop()[0] == 0, "stopped")
code, err = refused_at_start("--api-key-file", keys, env=env)
check(code == 2 and "not both" in err, "a key file and ATTN_API_KEY together are refused")

shutil.rmtree(SCRATCH, ignore_errors=True)
finish()
