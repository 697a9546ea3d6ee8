#!/usr/bin/env python3
"""The first hour on a fresh machine, measured: the README's two commands on a fresh clone with the
compiler cache off (CCACHE_DISABLE=1), as a new user or a CI runner meets them.

Each run clones COMMIT into a temporary folder and runs `bash scripts/main.sh` or `bash scripts/test.sh`
there, each line of its output timestamped as it arrives. Recorded per run: the wall time and exit
code; each phase's time (the scripts' `-- [m:ss] NAME: done in N s` lines, scripts/phase.sh; older
commits without them get the build from ninja's log and CTest's from its summary); from ninja's log
(.ninja_log) the steps, the compile and link CPU-seconds (each step's duration; Ninja runs 4 at once
on 2 cores, so they overlap), when the last compile ended (what the link tail waits on) and the 20
slowest steps; the largest process's peak memory. With --warm, a warm rebuild of the test command's
tree after touching one library file (the compiler cache still off).

The Debian packages must be installed already (run either script once): the figure is the build and
the run, not the download. Nothing else should run on the machine meanwhile.

usage: python3 bench/dev/run_cold_build.py [--commits after=HEAD] [--commands main,test] [--runs 3]
                                           [--warm lib/src/metrics/metrics.cpp] [--out bench/dev/results/cold_build.json]
  --commits before=df3a1e0,after=HEAD   alternates the commits (and the commands) run by run, so a slow
                                        spell of the host (this one's speed drifts by a third over an
                                        hour) does not fall on one side
Runs of other labels (or commands) already in --out are kept; runs of the same label and command are
replaced.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ROOT, host, result_path, write_json  # noqa: E402

PHASE_DONE = re.compile(r"^-- \[\d+:\d\d\] ([a-z][a-z-]*): done in (\d+) s$")
PHASE_START = re.compile(r"^-- \[\d+:\d\d\] ([a-z][a-z-]*): ")
CTEST_TOTAL = re.compile(r"^Total Test time \(real\) = +([\d.]+) sec")
CTEST_PASSED = re.compile(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)")


def run_logged(cmd, cwd, env, log_path):
    """Runs cmd, writing each output line to log_path with its seconds since the start; returns
    (wall seconds, exit code, [(seconds, line)])."""
    lines = []
    t0 = time.perf_counter()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", bufsize=1)
        for line in proc.stdout:
            t = time.perf_counter() - t0
            line = line.rstrip("\n")
            lines.append((t, line))
            log.write(f"{t:8.1f} {line}\n")
            log.flush()  # (progress readable while it runs)
        code = proc.wait()
    return time.perf_counter() - t0, code, lines


def ninja_steps(build_dir):
    """Ninja's log of the last build in build_dir: [(start s, end s, output)], the newest entry per output."""
    path = os.path.join(build_dir, ".ninja_log")
    if not os.path.exists(path):
        return []
    steps = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _, output, _ = line.rstrip("\n").split("\t")
            steps[output] = (int(start) / 1000, int(end) / 1000, output)
    return sorted(steps.values())


def is_compile(output):
    return output.endswith((".o", ".gch", ".pch")) or "cmake_pch" in output


def build_profile(build_dir):
    steps = ninja_steps(build_dir)
    if not steps:
        return None
    compiles = [s for s in steps if is_compile(s[2])]
    links = [s for s in steps if not is_compile(s[2])]
    span = max(e for _, e, _ in steps)
    last_compile = max((e for _, e, _ in compiles), default=0.0)
    slowest = sorted(steps, key=lambda s: s[1] - s[0], reverse=True)[:20]
    # When fewer than two steps ran (a core idle: waiting on the precompiled header or on the last
    # big unit): a sweep over the steps' starts and ends.
    events = sorted([(s, 1) for s, _, _ in steps] + [(e, -1) for _, e, _ in steps])
    running, last, under_two = 0, 0.0, 0.0
    for t, d in events:
        if running < 2:
            under_two += t - last
        running, last = running + d, t
    return {"steps": len(steps), "compiles": len(compiles), "links": len(links), "ninja_wall_s": round(span, 1),
            "last_compile_end_s": round(last_compile, 1),
            "under_two_steps_s": round(under_two, 1),
            "compile_step_s": round(sum(e - s for s, e, _ in compiles), 1), "link_step_s": round(sum(e - s for s, e, _ in links), 1),
            "slowest": [{"output": o, "seconds": round(e - s, 1)} for s, e, o in slowest]}


def phases(lines):
    """{phase: seconds} from the scripts' phase lines; for older scripts without them, CTest's summary."""
    found = {}
    for _, line in lines:
        m = PHASE_DONE.match(line)
        if m:
            found[m.group(1)] = int(m.group(2))
    if "ctest" not in found:
        for _, line in lines:
            m = CTEST_TOTAL.match(line)
            if m:
                found["ctest"] = round(float(m.group(1)))
    return found


def one_run(commit, command, warm_file, keep_logs):
    work = tempfile.mkdtemp(prefix=f"attn-cold-{command}-")
    clone = os.path.join(work, "attn")
    try:
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        subprocess.run(["git", "-C", clone, "checkout", "-q", commit], check=True)
        env = dict(os.environ, CCACHE_DISABLE="1")
        env.pop("ATTN_SCRIPT_START", None)
        print(f"== cold {command}.sh at {commit} in {clone}", file=sys.stderr, flush=True)
        log = os.path.join(keep_logs, f"cold_{command}_{commit[:7]}_{int(time.time())}.log")
        rss = os.path.join(work, "rss")
        wall, code, lines = run_logged(["/usr/bin/time", "-q", "-f", "%M", "-o", rss, "bash", f"scripts/{command}.sh"], clone, env, log)
        result = {"wall_s": round(wall, 1), "exit": code, "phases": phases(lines), "log": log,
                  "peak_rss_mb": round(int(open(rss).read().split()[-1]) / 1024),
                  "build": build_profile(os.path.join(clone, "build"))}
        if command == "test":
            result["clang_build"] = build_profile(os.path.join(clone, "build-fuzz"))
            for _, line in lines:
                m = CTEST_PASSED.search(line)
                if m:
                    result["ctest"] = {"failed": int(m.group(2)), "total": int(m.group(3))}
            failed = [line.split("-", 1)[-1].strip() for _, line in lines if re.match(r"^\s+\d+ - .*\((Failed|Timeout|SEGFAULT|Subprocess)", line)]
            if failed:
                result["ctest_failed"] = failed
            if warm_file and code == 0:
                os.utime(os.path.join(clone, warm_file))
                t0 = time.perf_counter()
                subprocess.run(["cmake", "--build", "build"], cwd=clone, env=env, check=True, stdout=subprocess.DEVNULL)
                result["warm_rebuild"] = {"touched": warm_file, "seconds": round(time.perf_counter() - t0, 1)}
        print(f"== cold {command}.sh: {wall:.0f} s, exit {code}, phases {result['phases']}", file=sys.stderr, flush=True)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def summarise(runs):
    summary = {}
    for r in runs:
        s = summary.setdefault(r["label"], {}).setdefault(r["command"], {"runs": 0, "passed": 0, "wall_s": []})
        s["runs"] += 1
        s["passed"] += r["exit"] == 0
        s["wall_s"].append(r["wall_s"])
    for by_command in summary.values():
        for s in by_command.values():
            s["median_wall_s"] = round(statistics.median(s["wall_s"]), 1)
    return summary


def write(path, runs):
    result = {"benchmark": "the README's two commands on a fresh clone, compiler cache off (CCACHE_DISABLE=1), Debian packages installed",
              "host": host(), "runs": runs, "summary": summarise(runs)}
    write_json(path, result)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", default="after=HEAD", help="LABEL=REV[,LABEL=REV...]: the commits to measure, alternating")
    ap.add_argument("--commands", default="main,test")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warm", default="lib/src/metrics/metrics.cpp",
                    help="after each test.sh run, touch this file and time the rebuild ('' for none)")
    ap.add_argument("--out", default=result_path(__file__, "cold_build.json"))
    args = ap.parse_args()
    commits = []
    for pair in args.commits.split(","):
        label, _, rev = pair.partition("=")
        sha = subprocess.run(["git", "-C", ROOT, "rev-parse", rev or label], check=True, capture_output=True, text=True).stdout.strip()
        commits.append((label, sha))
    logs = os.path.join(tempfile.gettempdir(), "attn-cold-build-logs")
    os.makedirs(logs, exist_ok=True)
    commands = args.commands.split(",")
    previous = json.load(open(args.out)) if os.path.exists(args.out) else {}
    labels = {label for label, _ in commits}
    kept = [r for r in previous.get("runs", []) if not (r["label"] in labels and r["command"] in commands)]
    runs = []
    for i in range(args.runs):
        for label, sha in commits:
            for command in commands:
                r = one_run(sha, command, args.warm, logs)
                runs.append(dict(label=label, commit=sha[:7], command=command, run=i + 1, **r))
                write(args.out, kept + runs)  # after every run: a long measurement interrupted keeps what it has
    print(json.dumps(summarise(kept + runs), indent=2))
    sys.exit(0 if all(r["exit"] == 0 for r in runs) else 1)


if __name__ == "__main__":
    main()
