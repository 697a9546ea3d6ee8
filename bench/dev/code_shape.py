#!/usr/bin/env python3
"""The shape of the code, counted as issue 57 counts it, for a tree or a commit: what a review of
the rooms looks at, in numbers a change can be held to.

  input_lookups      task inputs looked up by name in lib/src: .text("  .given("  .integer("  .list("  .get("
  model_fact_lookups a model's facts read back from its client JSON in lib/src and server/src
                     (describe().value, described.value/at, info.at("input"))
  explanation_downcasts  dynamic_cast<const ExplanationList in lib and server
  files_over_600     lib/src and server/src files of more than 600 lines
  functions_over_60  functions of more than 60 lines in lib/src and server/src (a definition from a
                     line at column 0 ending in ") {" to its closing "}" at column 0), tables left out
  tasks_lines        lines of lib/src/tasks and lib/include/attn/tasks
  units_without_test lib and server units with no tests/<layer>/<unit>_test.cpp

usage: python3 bench/dev/code_shape.py [--commit REV] [--out FILE]
  --commit REV counts REV's files (git show), not the working tree's.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ROOT  # noqa: E402

TABLES = {"route_table", "train_options"}  # functions that are one table each


def files(commit, *paths):
    if commit:
        out = subprocess.run(["git", "-C", ROOT, "ls-tree", "-r", "--name-only", commit, "--", *paths], check=True, capture_output=True,
                             text=True).stdout
    else:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "--", *paths], check=True, capture_output=True, text=True).stdout
    return [f for f in out.split("\n") if f]


def text(commit, path):
    if commit:
        return subprocess.run(["git", "-C", ROOT, "show", f"{commit}:{path}"], check=True, capture_output=True, text=True).stdout
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def long_functions(source, limit=60):
    out, start = [], None
    lines = source.split("\n")
    for i, line in enumerate(lines):
        if start is None and re.match(r"^[A-Za-z].*\)\s*(const\s*)?(override\s*)?\{\s*$", line) and not line.startswith("namespace"):
            start, head = i, line
        elif start is not None and line == "}":
            name = re.search(r"([A-Za-z_:~]+)\(", head)
            if i - start + 1 > limit and not (name and name.group(1).split("::")[-1] in TABLES):
                out.append((i - start + 1, head.strip()[:100]))
            start = None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commit", default="")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    code = [f for f in files(a.commit, "lib/src", "server/src") if f.endswith((".cpp", ".h"))]
    sources = {f: text(a.commit, f) for f in code}
    lib = [f for f in code if f.startswith("lib/src/")]
    lookups = sum(len(re.findall(r'\.(text|given|integer|list|get)\("', sources[f])) for f in lib)
    facts = sum(len(re.findall(r'describe\(\)\.value|described\.value|described\.at|info\.at\("input"\)', s)) for s in sources.values())
    downcasts = sum(s.count("dynamic_cast<const ExplanationList") for s in sources.values())
    big = sorted(((s.count("\n"), f) for f, s in sources.items() if f.endswith(".cpp") and s.count("\n") > 600), reverse=True)
    functions = sorted(((n, f, head) for f, s in sources.items() if f.endswith(".cpp") for n, head in long_functions(s)), reverse=True)
    tasks = sum(text(a.commit, f).count("\n") for f in files(a.commit, "lib/src/tasks", "lib/include/attn/tasks"))
    tests = set(files(a.commit, "tests"))
    untested = []
    for f in code:
        if not f.endswith(".cpp"):
            continue
        layer = "server" if f.startswith("server/") else f.split("/")[2]
        unit = os.path.basename(f)[:-4]
        if f"tests/{layer}/{unit}_test.cpp" not in tests:
            untested.append(f"{layer}/{unit}")
    result = {"commit": a.commit or "working tree", "input_lookups": lookups, "model_fact_lookups": facts, "explanation_downcasts": downcasts,
              "files_over_600": [f"{f} ({n})" for n, f in big], "functions_over_60": [f"{f}: {h} ({n})" for n, f, h in functions],
              "tasks_lines": tasks, "units_without_test": untested}
    print(json.dumps(result, indent=2))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
