#!/usr/bin/env python3
"""The explain page in a real browser: `attn serve` runs, headless Chromium (Debian's chromium) loads
/?model=...&text=..., and what the page renders (each word's weight, the probabilities, the seq2seq
output and heatmap, the feature bars, the self-attention heatmap, a document's sentences, a span
tagger's underlined characters) equals what the API returns.
Keeps a screenshot (page.png beside the test's work files). Exit 77 without Chromium.

usage: page_test.py ATTN TINY_RUN_DIR OUT_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

ATTN, DIR, OUT = sys.argv[1:4]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    print("SKIP: no chromium (apt-get install chromium; scripts/setup.sh installs it)")
    sys.exit(77)
os.makedirs(OUT, exist_ok=True)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import check, finish  # noqa: E402
import serving  # noqa: E402


server = serving.Server(ATTN, "--model", f"spans={DIR}/tagger", "--model", f"toxic={DIR}/run", "--model", f"dates={DIR}/dates", "--model", f"features={DIR}/features",
                        "--model", f"transformer={DIR}/transformer", "--model", f"documents={DIR}/hierarchical")
base = f"http://127.0.0.1:{server.port}"


def api(model, **body):
    req = urllib.request.Request(base + "/v1/explain", data=json.dumps({"model": model, **body}).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["results"]


def chromium(url, *extra):
    profile = tempfile.mkdtemp(prefix="attn-chromium-")
    try:
        return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               f"--user-data-dir={profile}", "--virtual-time-budget=20000", *extra, url],
                              capture_output=True, text=True, timeout=120).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def page(**query):
    return chromium(base + "/?" + urllib.parse.urlencode(query), "--dump-dom")


def panel(dom, which):
    start = dom.find(f'id="result{which}"')
    end = dom.find('id="result', start + 10) if which == 1 else len(dom)
    return dom[start:end if end > 0 else len(dom)]


try:
    # Text classifiers, two inputs side by side: every word's weight and every probability as the API gives them.
    a, b = "ice cream sucks zzzqq !!!", "Thanks for fixing the citation"
    dom = page(model="toxic", text=a, text2=b)
    check('data-ready="1"' in dom, "the page finished (data-ready)")
    for which, text in ((1, a), (2, b)):
        html = panel(dom, which)
        expected = api("toxic", texts=[text])[0]
        words = re.findall(r'data-word="([^"]*)" data-status="([^"]*)" data-weight="([^"]*)"', html)
        check([w for w, _, _ in words] == [w["word"] for w in expected["words"]], f"panel {which}: every word of {text!r}, in order")
        check(all(s == w["status"] and float(x) == w["weight"] for (_, s, x), w in zip(words, expected["words"])),
              f"panel {which}: each word's status and weight equal the API's")
        probs = dict((l, float(p)) for l, p in re.findall(r'data-label="([^"]*)" data-p="([^"]*)"', html))
        check(probs == expected["probabilities"], f"panel {which}: the probabilities equal the API's")
        spans = re.findall(r'<span class="(w[^"]*)" data-word="([^"]*)" data-status="([^"]*)"[^>]*title="([^"]*)"', html)
        for (cls, word, status, title), w in zip(spans, expected["words"]):
            if w["status"] in ("kept", "oov"):
                check(cls == "w" and title.startswith("weight "), f"panel {which}: {word!r} is shaded, its weight on hover")
            else:  # struck through (the page's style for .w.dropped), the reason on hover
                check(cls == "w dropped" and title == f'{w["status"]}: {w["reason"]}', f"panel {which}: {word!r} struck through, {title!r}")
        check(len(spans) == len(expected["words"]), f"panel {which}: a span per word")
    check(".w.dropped { color: #999; text-decoration: line-through; }" in dom, "dropped words are struck through")
    check('class="legend"' in dom, "a colour legend")
    # Importance methods: one method's scores per word, for the most probable label; then every method
    # the model gives, one row each ("compare methods"), for a label picked in the URL.
    text = "You are a stupid idiot and your edits are garbage"
    models = json.loads(urllib.request.urlopen(base + "/v1/models").read())["models"]
    toxic_methods = next(m for m in models if m["name"] == "toxic")["methods"]
    check(toxic_methods == ["attention", "gradient", "grad-input", "integrated-gradients", "leave-one-out"],
          f"/v1/models lists the text model's methods ({toxic_methods})")
    expected = api("toxic", texts=[text], methods=["integrated-gradients"], steps=50)[0]
    top = max(expected["probabilities"], key=expected["probabilities"].get)
    html = panel(page(model="toxic", text=text, method="integrated-gradients"), 1)
    scored = re.findall(r'data-word="([^"]*)" data-score="([^"]*)"', html)
    check([w for w, _ in scored] == [w["word"] for w in expected["words"]], "one method: every word, in order")
    check(all(abs(float(v) - e) <= 1e-6 * max(1.0, abs(e)) for (_, v), e in zip(scored, expected["word_importance"]["integrated-gradients"][top])),
          f"one method: each word's integrated-gradients score for {top} equals the API's")
    check("data-gap=" in html, "integrated gradients' completeness gap is shown")
    expected = api("toxic", texts=[text], methods=toxic_methods, steps=50)[0]
    html = panel(page(model="toxic", text=text, methods="1", label="insult"), 1)
    check('data-label="insult"' in html, "compare methods: the label picked in the URL")
    rows = re.findall(r'<tr data-method="([^"]*)">(.*?)</tr>', html)
    check([m for m, _ in rows] == toxic_methods, f"compare methods: one row per method ({[m for m, _ in rows]})")
    for method, row in rows:
        values = [float(v) for v in re.findall(r'data-score="([^"]*)"', row)]
        want = expected["word_importance"][method]["insult"]
        check(len(values) == len(want) and all(abs(a - b) <= 1e-6 * max(1.0, abs(b)) for a, b in zip(values, want)),
              f"compare methods: {method}'s scores for insult equal the API's")
    shot = os.path.join(OUT, "methods.png")
    chromium(base + "/?" + urllib.parse.urlencode({"model": "toxic", "text": text, "methods": "1"}), f"--screenshot={shot}",
             "--window-size=1400,900")
    check(os.path.exists(shot), f"a screenshot of the methods compared: {shot}")
    # A human rationale: its words underlined (any case, punctuation around them), each method's plausibility as the API gives it.
    expected = api("toxic", texts=[text], rationales=[[3, 4]])[0]
    top = max(expected["probabilities"], key=expected["probabilities"].get)
    html = panel(page(model="toxic", text=text, rationale="Stupid, idiot!"), 1)
    underlined = re.findall(r'<span class="w[^"]* rationale" data-word="([^"]*)"', html)
    check(underlined == ["stupid", "idiot"], f"the rationale's words are underlined ({underlined})")
    figures = dict((m, float(a)) for m, a in re.findall(r'<tr data-method="([^"]*)" data-auprc="([^"]*)"', html))
    want = {m: f["auprc"] for m, f in expected["plausibility"]["by_label"][top].items()}
    check(figures == want, f"the plausibility table: the API's AUPRC per method for {top} ({figures} vs {want})")
    shot = os.path.join(OUT, "rationale.png")
    chromium(base + "/?" + urllib.parse.urlencode({"model": "toxic", "text": text, "rationale": "stupid, idiot"}), f"--screenshot={shot}",
             "--window-size=1400,900")
    check(os.path.exists(shot), f"a screenshot of a rationale: {shot}")
    # Seq2seq: the output and the output x input heatmap.
    expected = api("dates", texts=["may 9, 1998"])[0]
    dom = page(model="dates", text="may 9, 1998")
    check(f'data-output="{expected["output"]}"' in dom, "seq2seq: the output as the API gives it")
    cells = len(re.findall(r'<td data-row="\d+" data-col="\d+"', panel(dom, 1)))
    check(cells == len(expected["output_tokens"]) * len(expected["source_tokens"]), f"seq2seq: a heatmap cell per output x input ({cells})")
    # Feature models: a bar per feature with the API's weight.
    row = "0.5,1.5,-1,0,2,-0.25"
    expected = api("features", rows=[[float(v) for v in row.split(",")]])[0]
    bars = re.findall(r'data-feature="([^"]*)" data-weight="([^"]*)"', page(model="features", text=row))
    check([(f["feature"], f["weight"]) for f in expected["features"]] == [(n, float(w)) for n, w in bars], "features: each bar's weight")
    # Transformer classifiers: the self-attention heatmap with layer and head selectors.
    dom = page(model="transformer", text="ice cream sucks")
    check('data-name="self-attention"' in dom and "layer 1" in dom and "head 1" in dom, "transformer: self-attention with selectors")
    # Hierarchical models: a bar per sentence with the API's weight, its words with theirs within it.
    text = "Hi Tom,\nThe article about the river is good. You are a stupid idiot and your edits are a joke.\n\nThanks,\nAnna"
    expected = api("documents", texts=[text])[0]
    html = panel(page(model="documents", text=text), 1)
    sentences = re.findall(r'data-sentence-weight="([^"]*)" data-status="([^"]*)"', html)
    check([(float(w), s) for w, s in sentences] == [(s["weight"], s["status"]) for s in expected["sentences"]],
          f"documents: a row per sentence with the API's weight ({len(sentences)} of {len(expected['sentences'])})")
    rows = re.findall(r'<tr class="sentence[^"]*"(.*?)</tr>', html)
    check(len(rows) == len(expected["sentences"]) and all(
        [float(v) for v in re.findall(r'data-weight="([^"]*)"', row)] == [w["weight"] for w in s["words"]]
        for row, s in zip(rows, expected["sentences"])), "documents: each sentence's words with their weight within it")
    shot = os.path.join(OUT, "sentences.png")
    chromium(base + "/?" + urllib.parse.urlencode({"model": "documents", "text": text}), f"--screenshot={shot}", "--window-size=1400,900")
    check(os.path.exists(shot), f"a screenshot of the sentences: {shot}")
    # Span taggers: the characters it marks underlined, at the API's offsets; each word with its probability.
    text = "thanks for the source, you idiot!! see the talk page"
    expected = api("spans", texts=[text])[0]
    html = panel(page(model="spans", text=text), 1)
    runs = [(int(a), int(b), t) for a, b, t in re.findall(r'<u data-begin="(\d+)" data-end="(\d+)"[^>]*>([^<]*)</u>', html)]
    check(runs == [(r["begin"], r["end"], r["text"]) for r in expected["marked"]] and runs,
          f"spans: the marked characters underlined at the API's offsets ({runs} vs {expected['marked']})")
    probs = [float(p) for p in re.findall(r'data-probability="([^"]*)"', html)]
    check(probs == [w["probability"] for w in expected["words"]], "spans: each word with the API's probability")
    # A screenshot for people to look at.
    shot = os.path.join(OUT, "page.png")
    chromium(base + "/?" + urllib.parse.urlencode({"model": "toxic", "text": a, "text2": b}), f"--screenshot={shot}", "--window-size=1400,900")
    check(os.path.exists(shot) and open(shot, "rb").read(8) == b"\x89PNG\r\n\x1a\n", f"a screenshot: {shot}")
finally:
    server.stop()

finish()
