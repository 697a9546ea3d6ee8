"""`attn serve` started for a test: on a free port (--port 0), its output read until it says it is
ready, then asked over plain HTTP and stopped with SIGTERM, as a user's process manager stops it; and
what the tests share around it: a scratch folder with an API key file, the responses read back from a
socket's bytes, a socket read until a marker arrives. The soak benchmark (bench/serve/run_serve_soak.py)
starts its server and reads its hostile clients' answers with these too."""
import json
import os
import re
import shutil
import signal
import subprocess
import urllib.error
import urllib.request


class Server:
    """attn serve ARGS... on 127.0.0.1; .port is the port it chose, .lines what it printed so far."""

    def __init__(self, attn, *args, env=None):
        self.proc = subprocess.Popen([attn, "serve", "--port", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=env)
        self.lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("attn serve exited early:\n" + "".join(self.lines))
            self.lines.append(line)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
            if re.match(r"attn serve: ready\b", line):  # "ready", or "ready (API keys required)"
                break

    def request(self, method, path, body=None, raw=None, headers=None, timeout=60):
        """(status, headers, text) of one request; `body` is sent as JSON, `raw` as it is."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def stop(self, timeout=60):
        """SIGTERM, then (exit code, everything it printed)."""
        self.proc.send_signal(signal.SIGTERM)
        out = self.proc.communicate(timeout=timeout)[0]
        return self.proc.returncode, "".join(self.lines) + out


def key_file(scratch, text):
    """SCRATCH emptied, and keys.txt in it holding `text` (mode 600: attn serve refuses a key file others
    may read); its path."""
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    path = os.path.join(scratch, "keys.txt")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


def responses(data):
    """The responses in `data`: [(status, headers (lower-case names), body)], by Content-Length."""
    out = []
    while data.startswith(b"HTTP/1."):
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if status == 100:
            data = rest
            continue
        length = int(headers.get("content-length", "0"))
        out.append((status, headers, rest[:length]))
        data = rest[length:]
    return out


def read_until(s, marker, data=b"", size=65536):
    """`data` and what `s` sends after it, read until `marker` is in it or the peer closes."""
    while marker not in data:
        chunk = s.recv(size)
        if not chunk:
            break
        data += chunk
    return data


def oversized_posts(connect, tries, headers=None, size=8_000_000):
    """[(status, the JSON error's status) or the error] of `tries` POSTs of `size` bytes to /v1/predict,
    each on a new connection from `connect()` (http.client's), the body sent whole before the answer is
    read, as most client libraries send one."""
    answers = []
    for _ in range(tries):
        c = connect()
        try:
            c.request("POST", "/v1/predict", body=b"x" * size, headers={"Content-Type": "application/json", **(headers or {})})
            r = c.getresponse()
            answers.append((r.status, json.loads(r.read())["error"]["status"]))
        except OSError as e:
            answers.append(str(e))
        finally:
            c.close()
    return answers
