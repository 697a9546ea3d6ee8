#!/usr/bin/env python3
"""`attn serve` against a hostile client, on 127.0.0.1 only, every loop bounded. Each attack a probe
found against the earlier server (two HTTP parsers reading the same bytes) is tried here:

- request smuggling: every request whose framing could be read two ways (a body on GET, HEAD or
  OPTIONS, a keyless POST whose body is another request, a bare LF, `Transfer-Encoding: chunked,
  identity`, `%63hunked`, two Transfer-Encodings, Content-Length with Transfer-Encoding, two
  lengths, a bad request line followed by headers, a folded header line, an absolute-form target, no
  Host) is answered exactly once and the connection closed, so nothing behind it runs;
- bypasses of the limits: a gzip body (415, never inflated), a POST without a length (411), chunked
  trailers past the header limit (431), a chunked body past --max-body-bytes (413), a body past it
  sent without waiting (a readable 413, not a reset), a Range header (ignored: one whole 200);
- clients that never read a large response: each closed after --write-timeout-ms;
- starvation, on a server whose every time-out is 10 minutes, so that a starved client hangs rather
  than waits a little (no check here measures a time: a loaded machine is slow, not wrong): /healthz
  answered beside 20 connections holding framing tricks, beside 16 clients that never read a large
  response, and beside 32 integrated-gradients requests from one client sent at once (past
  --heavy-per-client: 429), and a one-text prediction answered while those admitted still run;
- the connection cap with half-sent requests from five addresses: a new client is served, the
  oldest unfinished request closed to make room;
- the second probe's: 8 MB posted whole by http.client before it reads (a readable 413, 20 of 20),
  every path but the probes 401 without a key (no route told from a missing one), a %-encoded dot
  segment 400, and 256 texts x 4 methods x 64 steps refused by --max-request-cost (413) before any
  batch runs;
- the rest: a number out of range (400), a large curl -d form body (200), Host and Origin allow-list
  (403), /v1/models without absolute paths, a key with '%' in it, Expect without its space, the
  Keep-Alive max the server keeps, 60,000 keys in a body, --host that merely starts with 127.

usage: hostile_test.py ATTN TINY_RUN_DIR SCRATCH_DIR
"""
import gzip
import http.client
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import serving  # noqa: E402
from serving import responses  # noqa: E402

ATTN, DIR, SCRATCH = sys.argv[1:4]
KEY = "ab%41cd-0123456789abcdef"  # a '%' the server must not decode
HOST = b"Host: 127.0.0.1\r\n"
AUTH = b"Authorization: Bearer " + KEY.encode() + b"\r\n"


def read_all(s):
    """Everything until the server closes (a reset counts as the end)."""
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            return out
        if not chunk:
            return out
        out += chunk


def connect(port, source=None, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    if source:
        s.bind((source, 0))
    s.settimeout(60)
    s.connect(("127.0.0.1", port))
    return s


def exchange(port, data):
    """Sends `data` on a new connection and reads every response until the server closes it."""
    with connect(port) as s:
        s.sendall(data)
        return responses(read_all(s))


def post(path, body, extra=b""):
    return b"POST " + path + b" HTTP/1.1\r\n" + HOST + AUTH + extra + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body


class Server(serving.Server):
    def __init__(self, *args):
        super().__init__(ATTN, "--threads", "1", "--model", f"toxic={DIR}/run", "--api-key-file", KEYS, *args)

    def status(self, method, path, body=None, key=True):
        """The status of one request on a new connection, or what went wrong (a starved request hangs:
        HANG_S is far beyond any wait a loaded machine causes, and far below the starvation server's
        time-outs, so it tells the two apart)."""
        try:
            return self.request(method, path, body, headers={"Authorization": f"Bearer {KEY}"} if key else {}, timeout=HANG_S)[0]
        except OSError as e:  # urllib's URLError, a socket time-out
            return f"no answer within {HANG_S} s ({e})"


HANG_S = 60  # how long a request may take before the test calls it starved
LONG = "600000"  # the starvation server's time-outs (ms): a starved request would wait this long


KEYS = serving.key_file(SCRATCH, f"alice:{KEY}\n")

server = Server("--write-timeout-ms", "1500", "--client-timeout-ms", "4000", "--keep-alive-ms", "4000", "--max-queue", "8192")
port = server.port
GET_SMUGGLED = b"GET /v1/models HTTP/1.1\r\n" + HOST + AUTH + b"\r\n"

# ---- Smuggling: answered once, then closed; what hides behind never runs.
cases = {
    "a body on GET": (b"GET /healthz HTTP/1.1\r\n" + HOST + b"Content-Length: " + str(len(GET_SMUGGLED)).encode() + b"\r\n\r\n" + GET_SMUGGLED,
                      400),
    "a body on HEAD": (b"HEAD /healthz HTTP/1.1\r\n" + HOST + b"Content-Length: " + str(len(GET_SMUGGLED)).encode() + b"\r\n\r\n" + GET_SMUGGLED,
                       400),
    "a body on OPTIONS": (b"OPTIONS /healthz HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + GET_SMUGGLED, 400),
    "a keyless POST whose body is a request": (
        b"POST /v1/predict HTTP/1.1\r\n" + HOST + b"Content-Length: " + str(len(GET_SMUGGLED)).encode() + b"\r\n\r\n" + GET_SMUGGLED, 401),
    "a header line ending in a bare LF": (b"GET /healthz HTTP/1.1\r\n" + HOST + b"X-A: 1\nContent-Length: 0\r\n\r\n" + GET_SMUGGLED, 400),
    "Transfer-Encoding: chunked, identity": (b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Transfer-Encoding: chunked, identity\r\n\r\n"
                                            + GET_SMUGGLED, 400),
    "Transfer-Encoding: %63hunked": (b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Transfer-Encoding: %63hunked\r\n\r\n" + GET_SMUGGLED,
                                     400),
    "two Transfer-Encodings": (b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Transfer-Encoding: identity\r\n"
                               b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + GET_SMUGGLED, 400),
    "Content-Length and Transfer-Encoding": (b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Content-Length: 5\r\n"
                                             b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + GET_SMUGGLED, 400),
    "two lengths": (b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}" + GET_SMUGGLED, 400),
    "a bad request line, then headers": (b"GARBAGE\r\n" + GET_SMUGGLED, 400),
    "a folded header line": (b"GET /healthz HTTP/1.1\r\n" + HOST + b"X-A: 1\r\n Content-Length: 5\r\n\r\n" + GET_SMUGGLED, 400),
    "an absolute-form target": (b"GET http://evil.example/healthz HTTP/1.1\r\n" + HOST + b"\r\n" + GET_SMUGGLED, 400),
    "no Host": (b"GET /healthz HTTP/1.1\r\n\r\n" + GET_SMUGGLED, 400),
    "a signed length": (b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Content-Length: +2\r\n\r\n{}" + GET_SMUGGLED, 400),
}
for what, (data, status) in cases.items():
    got = exchange(port, data)
    check([r[0] for r in got] == [status] and got[0][1].get("connection") == "close" and (b'"error"' in got[0][2] or what.endswith("HEAD")),
          f"{what}: one {status} answer, then closed ({[(r[0], r[2][:60]) for r in got]})")
models_before = server.request("GET", "/metrics", headers={"Authorization": f"Bearer {KEY}"})[2]
check('route="/v1/models",status="200"' not in models_before, "no smuggled GET /v1/models ever ran")

# ---- Limits that cannot be bypassed.
body = json.dumps({"texts": ["x " * 30000]}).encode()  # 60 KB, inflated from ~300 bytes
got = exchange(port, post(b"/v1/predict", gzip.compress(body), b"Content-Encoding: gzip\r\n"))
check([r[0] for r in got] == [415], f"a gzip body: 415, never inflated ({[r[0] for r in got]})")
got = exchange(port, b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"\r\n{\"texts\": [\"a\"]}")
check([r[0] for r in got] == [411], f"a POST without a length: 411 ({[r[0] for r in got]})")
got = exchange(port, b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"
               + b"".join(b"X-T%d: %s\r\n" % (i, b"a" * 100) for i in range(20000)) + b"\r\n")
check([r[0] for r in got] == [431], f"2 MB of chunked trailers: 431 ({[r[0] for r in got]})")
chunk = b"a" * 8192
got = exchange(port, b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Transfer-Encoding: chunked\r\n\r\n"
               + b"".join(b"2000\r\n" + chunk + b"\r\n" for _ in range(130)) + b"0\r\n\r\n")
check([r[0] for r in got] == [413], f"a chunked body past --max-body-bytes: 413 ({[r[0] for r in got]})")
# A body past the limit sent without waiting for an answer: the client still reads its 413.
with connect(port) as s:
    s.sendall(b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Content-Length: 2000000\r\n\r\n")
    try:
        for _ in range(12):  # 192 KB of it, then the client waits for the answer
            s.sendall(b"b" * 16384)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    got = responses(read_all(s))
check([r[0] for r in got] == [413] and b"--max-body-bytes" in got[0][2], f"an oversized body: a readable 413 ({got[:1]})")
ranges = ",".join(f"{i}-{i}" for i in range(1500))
for path in [b"/", b"/healthz"]:
    got = exchange(port, b"GET " + path + b" HTTP/1.1\r\n" + HOST + AUTH + b"Range: bytes=" + ranges.encode() + b"\r\nConnection: close\r\n\r\n")
    check([r[0] for r in got] == [200] and "multipart" not in got[0][1].get("content-type", ""), f"Range on {path!r} ignored: one whole 200")

# ---- Clients that never read: each sends an explanation of 256 long texts (a ~5.6 MB answer, more
# than the socket buffers hold; 256 x 16 inputs: --max-queue 8192) and 99 requests for the page behind
# it, and reads nothing. Once --write-timeout-ms passes with an answer unwritten the server closes
# each (it then holds no connection but the test's own); read afterwards, none got its 100 answers.
long_text = " ".join(["you are a stupid idiot and your edits are garbage"] * 20)  # 200 words: the model's maxlen
page = b"GET / HTTP/1.1\r\n" + HOST + AUTH + b"\r\n"
unread = post(b"/v1/explain", json.dumps({"texts": [long_text] * 256}).encode()) + page * 99


def non_readers():
    readers = []
    for _ in range(16):
        s = connect(port, rcvbuf=4096)
        s.sendall(unread)
        readers.append(s)
    return readers


def wait_cut_off(socks, what):
    """Whether the server closes every one of `socks` within HANG_S, read or not: a wait on each
    socket's hang-up (POLLRDHUP: the server's FIN; POLLHUP or POLLERR: its reset), reading nothing,
    so the clients still read nothing while the server decides (its length only bounds a hang)."""
    poller = select.poll()
    for s in socks:
        poller.register(s, select.POLLRDHUP)
    left = {s.fileno() for s in socks}
    deadline = time.monotonic() + HANG_S
    while left:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            check(False, f"{what}: {len(left)} connections still open after {HANG_S} s")
            return False
        for fd, _ in poller.poll(remaining * 1000):
            left.discard(fd)
            poller.unregister(fd)
    return True


readers = non_readers()
closed = wait_cut_off(readers, "clients that did not read")
cut = 0
for s in readers:
    cut += closed and len(responses(read_all(s))) < 100  # (fewer than the 100 a connection may ask for)
    s.close()
check(cut == 16, f"each client that did not read was cut off after --write-timeout-ms ({cut} of 16)")
print(f"clients that did not read, cut off: {cut} of 16")

# ---- The second probe's three. (1) A plain client (Python's http.client, as most libraries) posts
# 8 MB, eight times --max-body-bytes, whole before it reads: it reads the 413, never a broken pipe.
answers = serving.oversized_posts(lambda: http.client.HTTPConnection("127.0.0.1", port, timeout=HANG_S), 20,
                                  {"Authorization": f"Bearer {KEY}"})
check(answers == [(413, 413)] * 20, f"8 MB posted whole by http.client: a readable 413 JSON error, 20 of 20 ({answers[:3]})")
# (2) Without a key nothing tells a route from a missing path; with it, a dot segment is refused.
keyless = [exchange(port, b"GET " + p + b" HTTP/1.1\r\n" + HOST + b"Connection: close\r\n\r\n")
           for p in [b"/metrics", b"/no-such-path", b"/v1/models/../metrics", b"/%6detrics", b"/"]]
check([[r[0] for r in got] for got in keyless] == [[401]] * 5, f"without a key, every path but the probes: 401 ({keyless})")
got = exchange(port, b"GET /v1/models/%2e%2e/metrics HTTP/1.1\r\n" + HOST + AUTH + b"Connection: close\r\n\r\n")
check([r[0] for r in got] == [400], f"a %-encoded dot segment with the key: 400, never resolved ({[r[0] for r in got]})")


def batches():
    text = server.request("GET", "/metrics", headers={"Authorization": f"Bearer {KEY}"}, timeout=HANG_S)[2]
    return int(re.search(r"^attn_batch_size_count (\d+)$", text, re.M).group(1))


# (3) One request that would buy minutes of CPU (256 texts of 200 words, four methods, 64 steps) is
# refused with 413 before any of it runs (no batch ran); the same for one text is served.
costly = {"texts": [long_text] * 256, "methods": ["attention", "grad-input", "integrated-gradients", "leave-one-out"], "steps": 64}
before = batches()
status, _, text = server.request("POST", "/v1/explain", costly, headers={"Authorization": f"Bearer {KEY}"}, timeout=HANG_S)
check(status == 413 and "--max-request-cost" in text and batches() == before,
      f"256 texts x 4 methods x 64 steps: 413 naming the cap, before any work ({status}: {text[:160]})")
costly["texts"] = [long_text]
status = server.request("POST", "/v1/explain", costly, headers={"Authorization": f"Bearer {KEY}"}, timeout=HANG_S)[0]
check(status == 200, f"one such text by the same methods: served ({status})")

# ---- The rest.
got = exchange(port, post(b"/v1/predict", b'{"texts": ["a"], "x": 1e400}', b"Connection: close\r\n"))
check([r[0] for r in got] == [400] and b"out of range" in got[0][2], f"1e400 in a body: 400 ({got})")
form = json.dumps({"texts": ["thanks for the edit " * 600]}).encode()  # curl -d: form-urlencoded, 12 KB
got = exchange(port, post(b"/v1/predict", form, b"Content-Type: application/x-www-form-urlencoded\r\nConnection: close\r\n"))
check([r[0] for r in got] == [200], f"a 12 KB body as curl -d sends it: 200 ({[(r[0], r[2][:80]) for r in got]})")
got = exchange(port, b"GET /v1/models HTTP/1.1\r\nHost: evil.example\r\n" + AUTH + b"Connection: close\r\n\r\n")
check([r[0] for r in got] == [403] and b"--allowed-host" in got[0][2], f"a Host not this server's (DNS rebinding): 403 ({got})")
got = exchange(port, b"GET /v1/models HTTP/1.1\r\n" + HOST + AUTH + b"Origin: http://evil.example\r\nConnection: close\r\n\r\n")
check([r[0] for r in got] == [403], f"an Origin not this server's: 403 ({[r[0] for r in got]})")
got = exchange(port, b"GET /v1/models HTTP/1.1\r\nHost: localhost:%d\r\n" % port + AUTH + b"Origin: http://localhost:%d\r\n" % port
               + b"Connection: close\r\n\r\n")
check([r[0] for r in got] == [200], f"the page's own origin: 200 ({[r[0] for r in got]})")
paths = [m["path"] for m in json.loads(got[0][2])["models"]] if got and got[0][0] == 200 else []
check(paths == ["model.pt"], f"/v1/models names the model file, not where it is ({paths})")
check(got and got[0][0] == 200, "a key with '%' in it matches as sent (never %-decoded)")
with connect(port) as s:
    s.sendall(b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Expect:100-continue\r\nContent-Length: 16\r\nConnection: close\r\n\r\n")
    first = s.recv(4096)
    s.sendall(b'{"texts": ["a"]}')
    rest = responses(read_all(s))
check(first.startswith(b"HTTP/1.1 100 Continue") and [r[0] for r in rest] == [200], f"Expect without its space: 100, then 200 ({first[:30]!r})")
with connect(port) as s:
    s.sendall((b"GET /healthz HTTP/1.1\r\n" + HOST + b"\r\n") * 101)
    got = responses(read_all(s))
alive = [r[1].get("keep-alive", "") for r in got]
check(len(got) == 100 and alive[0] == "timeout=4, max=99" and got[-1][1].get("connection") == "close",
      f"Keep-Alive says the max the server keeps: 100 answers, the last closes ({len(got)}, {alive[:1]}, {got[-1][1] if got else None})")
many = ("{" + ",".join(f'"k{i}": {i}' for i in range(60000)) + ', "texts": ["a"]}').encode()
got = exchange(port, post(b"/v1/predict", many, b"Connection: close\r\n"))
check([r[0] for r in got] == [200], f"60,000 keys in a body ({len(many) // 1024} KiB): answered ({[r[0] for r in got]})")
code = server.stop()[0]
check(code == 0, "stopped")

# ---- Starvation, on a server that never times a client out within the test: starved, a request
# would wait there for 10 minutes, so each check asks for an answer at all (within HANG_S).
server = Server("--write-timeout-ms", LONG, "--client-timeout-ms", LONG, "--keep-alive-ms", LONG, "--request-timeout-ms", "0",
                "--max-queue", "8192")
port = server.port


def healthz_while(what):
    statuses = [server.status("GET", "/healthz", key=False) for _ in range(5)]
    check(statuses == [200] * 5, f"/healthz answered beside {what}: {statuses}")


held = []
for i in range(20):  # framing tricks held open: half a chunked body, an unfinished head, a slow body
    s = connect(port)
    s.sendall([b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Transfer-Encoding: chunked\r\n\r\n5\r\nab",
               b"GET /healthz HTTP/1.1\r\n" + HOST + b"X-Slow: a",
               b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Content-Length: 100\r\n\r\n{"][i % 3])
    held.append(s)
healthz_while("20 connections holding framing tricks")
for s in held:
    s.close()

readers = non_readers()  # here never cut off: they hold their writes for 10 minutes
healthz_while("16 clients that never read their answers")
for s in readers:
    s.close()

# 32 integrated-gradients requests from one client, all sent at once: --heavy-per-client (4) are
# admitted, each 32 texts at the most steps the server allows (64, --max-steps), several seconds of
# work that runs a text at a time, so none is answered before all 32 have arrived; the rest get 429.
# A one-text prediction sent beside them is answered while the admitted ones still run.
results, lock = [], threading.Lock()
start = threading.Barrier(33)


def integrated():
    body = {"texts": [long_text] * 32, "methods": ["integrated-gradients"], "steps": 64}
    start.wait()
    try:
        status = server.request("POST", "/v1/explain", body, headers={"Authorization": f"Bearer {KEY}"}, timeout=600)[0]
    except OSError as e:
        status = f"no answer ({e})"
    with lock:
        results.append((status, time.monotonic()))


threads = [threading.Thread(target=integrated) for _ in range(32)]
for t in threads:
    t.start()
start.wait()
healthz_while("32 integrated-gradients requests from one client")
status = server.status("POST", "/v1/predict", {"texts": ["you idiot"]})
predicted = time.monotonic()
for t in threads:
    t.join()
statuses = [r[0] for r in results]
admitted = [done for status_, done in results if status_ == 200]
check(status == 200 and any(done > predicted for done in admitted),
      f"a one-text prediction beside them: {status}, answered before the last admitted request "
      f"({sum(done > predicted for done in admitted)} of {len(admitted)} still running)")
check(statuses.count(429) >= 28 and statuses.count(200) + statuses.count(429) == 32,
      f"at most --heavy-per-client (4) in flight per client, the rest 429 ({statuses.count(200)} x 200, {statuses.count(429)} x 429, "
      f"others {[s for s in statuses if s not in (200, 429)]})")
print(f"32 integrated-gradients requests from one client: {statuses.count(200)} x 200, {statuses.count(429)} x 429; "
      f"the prediction answered with {sum(done > predicted for done in admitted)} still running")
check(server.stop()[0] == 0, "stopped")

# ---- The connection cap, filled with half-sent requests from five addresses (each under its own cap).
# Its time-outs are 10 minutes, so no half-sent request expires by itself: a new client is served,
# within HANG_S, only because the oldest unfinished request is closed to make room.
server = Server("--max-connections", "100", "--connections-per-client", "40", "--http-threads", "1",  # (events in order)
                "--client-timeout-ms", LONG, "--keep-alive-ms", LONG, "--write-timeout-ms", LONG)
half = []
for i in range(100):
    s = connect(server.port, source=f"127.0.0.{2 + i % 5}")
    s.sendall(b"POST /v1/predict HTTP/1.1\r\n" + HOST + AUTH + b"Content-Length: 100\r\n\r\n{")
    half.append(s)
status = server.status("GET", "/healthz", key=False)
check(status == 200, f"with the cap full of half-sent requests, a new client is served ({status})")
half[0].settimeout(HANG_S)
try:
    oldest = half[0].recv(4096)  # b"": closed without an answer
except ConnectionResetError:
    oldest = b""
except socket.timeout:
    oldest = f"still open after {HANG_S} s"
check(oldest == b"", f"and the oldest unfinished request made room, closed ({oldest!r})")
for s in half:
    s.close()
check(server.stop()[0] == 0, "stopped")

# ---- A --host that only starts with 127. is not loopback: keys are required.
r = subprocess.run([ATTN, "serve", "--port", "0", "--model", f"toxic={DIR}/run", "--host", "127.0.0.1.attacker.invalid"],
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 2 and "--allow-unauthenticated" in r.stderr, f"--host 127.0.0.1.attacker.invalid needs keys ({r.returncode}: {r.stderr.strip()})")

shutil.rmtree(SCRATCH, ignore_errors=True)
finish()
