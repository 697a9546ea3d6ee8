#!/usr/bin/env python3
"""`attn serve --tls-cert --tls-key`, on 127.0.0.1 with a self-signed certificate made here: HTTPS
answers as HTTP did (a client that checks the certificate), 8 MB posted whole gets a readable 413, TLS 1.1 and plain HTTP get no answer, a
client stalled in its handshake holds no thread (others are served: with --client-timeout-ms at 10
minutes, so a starved client would hang, not merely wait; no check measures a time) and is closed
after --client-timeout-ms, and a key file others may read or a key that does not match the
certificate stop the server before it starts, naming the file.

usage: serve_tls_test.py ATTN TINY_RUN_DIR SCRATCH_DIR
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import serving  # noqa: E402

ATTN, DIR, SCRATCH = sys.argv[1:4]


def make_cert(name):
    cert, key = os.path.join(SCRATCH, name + ".pem"), os.path.join(SCRATCH, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    os.chmod(key, 0o600)
    return cert, key


if shutil.which("openssl") is None:
    print("skipped: no openssl command (apt-get install openssl)")
    sys.exit(77)
shutil.rmtree(SCRATCH, ignore_errors=True)
os.makedirs(SCRATCH)
cert, key = make_cert("server")
other_cert, _ = make_cert("other")

# ---- Refused before serving.
def refused(*args):
    r = subprocess.run([ATTN, "serve", "--port", "0", "--model", f"toxic={DIR}/run", *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr

os.chmod(key, 0o644)
code, err = refused("--tls-cert", cert, "--tls-key", key)
check(code == 2 and key in err and "chmod 600" in err, f"a key others may read is refused ({code}: {err.strip()})")
os.chmod(key, 0o600)
code, err = refused("--tls-cert", other_cert, "--tls-key", key)
check(code == 2 and "does not match" in err and other_cert in err and key in err, f"a key of another certificate is refused ({code}: {err.strip()})")
code, err = refused("--tls-cert", cert)
check(code == 2 and "--tls-key" in err, f"a certificate without its key is refused ({code}: {err.strip()})")

# ---- Serving HTTPS.
def serve(client_timeout_ms):
    """(process, port) of an HTTPS server with one HTTP thread."""
    proc = subprocess.Popen([ATTN, "serve", "--port", "0", "--threads", "1", "--http-threads", "1", "--client-timeout-ms", client_timeout_ms,
                             "--model", f"toxic={DIR}/run", "--tls-cert", cert, "--tls-key", key],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    for line in proc.stdout:
        m = re.search(r"listening on https://127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
        if line.strip().endswith("ready"):
            break
    check(port is not None, "the server says it listens on https://")
    return proc, port


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    check(proc.returncode == 0, "stopped")


# No handshake or request expires here by itself: a client the stalled ones starved would wait 10
# minutes, so 30 s without an answer is a failure, never a slow machine.
proc, port = serve("600000")
context = ssl.create_default_context(cafile=cert)


def predict(timeout=30):
    req = urllib.request.Request(f"https://127.0.0.1:{port}/v1/predict", method="POST", data=json.dumps({"texts": ["you idiot"]}).encode())
    with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
        return r.status, json.loads(r.read())


# Clients stalled in the handshake (a TCP connection, no ClientHello) and one that sent half a
# ClientHello: more than the HTTP threads, yet a real client is answered.
stalled = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(8)]
stalled[0].sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
for i in range(5):
    try:
        status, body = predict(timeout=30)
        check(status == 200 and len(body["results"]) == 1, f"HTTPS request {i} answered beside 8 stalled handshakes ({status})")
    except OSError as e:  # urllib's URLError, a socket time-out: the starvation this is about
        check(False, f"HTTPS request {i} answered beside 8 stalled handshakes (no answer within 30 s: {e})")
for s in stalled:
    s.close()

# Keep-alive over TLS: two requests on one connection.
with socket.create_connection(("127.0.0.1", port), timeout=60) as raw:
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        check(tls.version() in ("TLSv1.2", "TLSv1.3"), f"TLS 1.2 or later ({tls.version()})")
        for _ in range(2):
            tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            data = serving.read_until(tls, b"alive", size=4096)
            check(data.startswith(b"HTTP/1.1 200") and b"alive" in data, "a keep-alive request over TLS")

# A client that posts 8 MB (over --max-body-bytes) whole before it reads gets its 413 over TLS too:
# the server drains what is still coming before its close_notify, so nothing resets the connection.
answers = serving.oversized_posts(lambda: http.client.HTTPSConnection("127.0.0.1", port, timeout=60, context=context), 10)
check(answers == [(413, 413)] * 10, f"8 MB posted whole over TLS: a readable 413 JSON error, 10 of 10 ({answers[:3]})")

# TLS 1.1: no handshake.
old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
old.load_verify_locations(cert)
old.minimum_version = ssl.TLSVersion.TLSv1
old.maximum_version = ssl.TLSVersion.TLSv1_1
try:
    old.set_ciphers("DEFAULT@SECLEVEL=0")
    with socket.create_connection(("127.0.0.1", port), timeout=60) as raw:
        with old.wrap_socket(raw, server_hostname="127.0.0.1"):
            check(False, "TLS 1.1 must be refused")
except (ssl.SSLError, OSError):
    check(True, "TLS 1.1 is refused")
# Plain HTTP to the HTTPS port: no HTTP answer.
with socket.create_connection(("127.0.0.1", port), timeout=60) as raw:
    raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try:
        data = raw.recv(100)
    except ConnectionResetError:
        data = b""
    check(not data.startswith(b"HTTP/"), f"plain HTTP gets no HTTP answer ({data[:20]!r})")

stop(proc)

# Stalled handshakes are closed once --client-timeout-ms has passed (the read waits for that outcome).
proc, port = serve("2000")
stalled = socket.create_connection(("127.0.0.1", port), timeout=120)
stalled.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
try:
    got = stalled.recv(100)
except ConnectionResetError:
    got = b""
except socket.timeout:
    got = "still open after 120 s"
check(got == b"", f"a stalled handshake is closed after --client-timeout-ms ({got!r})")
stalled.close()
stop(proc)
shutil.rmtree(SCRATCH, ignore_errors=True)
finish()
