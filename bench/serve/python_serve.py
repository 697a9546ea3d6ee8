#!/usr/bin/env python3
"""The obvious Python way to serve an attn model, for bench/serve/run_serve_bench.py to compare against:
torch.jit.load of the same model.pt, its embedded Keras tokenizer, pad_sequences to the run's maxlen,
one forward per request, behind Python's ThreadingHTTPServer. POST /v1/explain {"texts": [...]} ->
{"results": [{"probabilities": {...}, "attention": [...]}]}.

usage: python_serve.py MODEL.pt PORT [--nodelay]   (--nodelay: TCP_NODELAY on, as attn serve has it)
"""
import json
import os
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import peer_usage  # noqa: E402

peer_usage(__doc__, 2)
import torch  # noqa: E402
from keras_preprocessing.sequence import pad_sequences  # noqa: E402
from keras_preprocessing.text import tokenizer_from_json  # noqa: E402

extra = {"config.json": "", "tokenizer.json": ""}
model = torch.jit.load(sys.argv[1], _extra_files=extra)
model.eval()
config = json.loads(extra["config.json"])
tokenizer = tokenizer_from_json(extra["tokenizer.json"])
labels, maxlen = config["data"]["labels"], config["data"]["maxlen"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        if "--nodelay" in sys.argv:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        x = pad_sequences(tokenizer.texts_to_sequences(body["texts"]), maxlen=maxlen)
        with torch.no_grad():
            probs, attention = model(torch.tensor(x, dtype=torch.int64))
        results = [{"probabilities": dict(zip(labels, p)), "attention": a} for p, a in zip(probs.tolist(), attention.tolist())]
        out = json.dumps({"results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


print("ready", flush=True)
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
