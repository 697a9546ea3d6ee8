#!/usr/bin/env python3
"""`attn serve`'s GET /openapi.json against the live server, on 127.0.0.1: every route it lists is served
with the method it lists; every response this test provokes (200s and each kind of error) has a status
the document lists for that operation and a body its schema accepts (jsonschema, Debian's
python3-jsonschema); every route the server answers is in the document.

usage: serve_openapi_test.py ATTN TINY_RUN_DIR
"""
import json
import os
import re
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import serving  # noqa: E402

try:
    import jsonschema
except ImportError:
    print("skipped: no jsonschema module (apt-get install python3-jsonschema)")
    sys.exit(77)

ATTN, DIR = sys.argv[1:3]
KEY = "openapi-test-key-0123456789"


server = serving.Server(ATTN, "--threads", "1", "--model", f"toxic={DIR}/run", "--model", f"features={DIR}/features",
                        env=dict(os.environ, ATTN_API_KEY=KEY))
port = server.port


def call(method, path, body=None, raw=None, key=KEY):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


status, _, text = call("GET", "/openapi.json")
check(status == 200, "GET /openapi.json")
doc = json.loads(text)
jsonschema.Draft7Validator.check_schema({"type": "object"})
resolver = jsonschema.RefResolver.from_schema(doc)
check(doc["openapi"].startswith("3.") and doc["info"]["title"] == "attn serve", "an OpenAPI 3 document")


def template_of(path):
    for template in doc["paths"]:
        if re.fullmatch(re.sub(r"\{[^}/]+\}", "[^/]+", template), path):
            return template
    return None


def validate(method, path, status, content_type, text, what):
    template = template_of(path)
    check(template is not None, f"{what}: {path} is in the document")
    if template is None:
        return
    operations = doc["paths"][template]
    op = operations.get(method.lower())
    if op is None:  # a method the path does not take: the document lists the path's methods, the server said 405
        check(status == 405, f"{what}: {method} {path} is not in the document, and the server answered 405 ({status})")
        return
    response = op["responses"].get(str(status))
    check(response is not None, f"{what}: status {status} of {method} {template} is documented")
    if response is None:
        return
    media = response["content"]
    documented_type = next(iter(media))
    check(content_type.split(";")[0] == documented_type.split(";")[0], f"{what}: content type {content_type} is {documented_type}")
    if documented_type == "application/json":
        try:
            jsonschema.Draft7Validator(media[documented_type]["schema"], resolver=resolver).validate(json.loads(text))
            check(True, what)
        except jsonschema.ValidationError as e:
            check(False, f"{what}: the body does not match the schema: {e.message}")


cases = [
    ("GET", "/healthz", None, None, None, "health"),
    ("GET", "/readyz", None, None, None, "ready"),
    ("GET", "/v1/models", None, None, KEY, "models"),
    ("POST", "/v1/explain", {"model": "toxic", "texts": ["you idiot"], "methods": ["gradient"]}, None, KEY, "explain"),
    ("POST", "/v1/explain", {"model": "features", "rows": [[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]]}, None, KEY, "explain rows"),
    ("POST", "/v1/predict", {"model": "toxic", "texts": ["you idiot", "thanks"]}, None, KEY, "predict"),
    ("POST", "/v1/models/toxic/reload", None, None, KEY, "reload"),
    ("GET", "/metrics", None, None, KEY, "metrics"),
    ("GET", "/openapi.json", None, None, KEY, "openapi"),
    ("GET", "/", None, None, KEY, "the page"),
    ("POST", "/v1/predict", None, b"{not json", KEY, "400 malformed JSON"),
    ("POST", "/v1/predict", {"model": "toxic", "rows": [[1]]}, None, KEY, "400 wrong field"),
    ("POST", "/v1/predict", {"model": "nobody", "texts": ["a"]}, None, KEY, "404 unknown model"),
    ("POST", "/v1/models/nobody/reload", None, None, KEY, "404 unknown model to reload"),
    ("GET", "/v1/predict", None, None, KEY, "405"),
    ("POST", "/v1/models", {}, None, KEY, "405 on models"),
    ("GET", "/v1/models", None, None, None, "401 without a key"),
    ("POST", "/v1/explain", {"texts": ["a"]}, None, "wrong-key-0123456789", "401 wrong key"),
    ("POST", "/v1/predict", {"model": "toxic", "texts": ["a"] * 300}, None, KEY, "413 too many inputs"),
]
for method, path, body, raw, key, what in cases:
    status, content_type, text = call(method, path, body, raw, key)
    validate(method, path, status, content_type, text, f"{what} ({status})")
status, _, text = call("GET", "/no/such/path")
check(status == 404 and template_of("/no/such/path") is None and json.loads(text)["error"]["status"] == 404,
      "an unknown path: 404 with the JSON error, and not in the document")
# Every route in the document answers its method (not 404/405).
for template, operations in doc["paths"].items():
    path = template.replace("{name}", "toxic")
    for method in operations:
        status, _, _ = call(method.upper(), path, {} if method == "post" else None)
        check(status not in (404, 405), f"{method.upper()} {template} is served ({status})")

server.stop()
finish()
