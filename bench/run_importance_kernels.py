#!/usr/bin/env python3
"""Does attn faithfulness depend on AVX-512 (bench/results/importance_kernels.json)? The run of
run_importance_bench.py (150 Jigsaw-length comments, all five methods, integrated gradients with 50
steps, 2 threads), timed in alternating rounds with the kernels this host picks (OpenBLAS' and
LibTorch's AVX-512 ones here) and with the kernels a host without AVX-512 gets (OPENBLAS_CORETYPE=Zen,
ATEN_CPU_CAPABILITY=avx2): each with and without integrated gradients, and the Python peer once with
the AVX2 kernels. The same binaries and model; only the kernels the libraries dispatch to change.

usage: python3 bench/run_importance_kernels.py [--model RUN_DIR] [--rows 150] [--rounds 3] [--out bench/results/importance_kernels.json]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ATTN, BIN, PYTHON, RESULTS, jigsaw_model, median_of, timed, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = "attention,gradient,grad-input,integrated-gradients,leave-one-out"
KERNELS = {"as_installed": {}, "avx2": {"OPENBLAS_CORETYPE": "Zen", "ATEN_CPU_CAPABILITY": "avx2"}}


def openblas_core(env):
    """The kernel set OpenBLAS picks under `env` (its openblas_get_corename)."""
    code = ("import ctypes, ctypes.util, glob\n"
            "p = (glob.glob('/usr/lib/x86_64-linux-gnu/openblas*/libopenblas*.so.0') or [ctypes.util.find_library('openblas')])[0]\n"
            "l = ctypes.CDLL(p); l.openblas_get_corename.restype = ctypes.c_char_p; print(l.openblas_get_corename().decode())")
    return subprocess.run([PYTHON, "-c", code], check=True, capture_output=True, text=True, env={**os.environ, **env}).stdout.strip()


def run(cmd, env):
    seconds, _ = timed(subprocess.run, cmd, check=True, stdout=subprocess.DEVNULL, env={**os.environ, **env})
    return round(seconds, 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", help="a run directory (default: train one on 160,000 Jigsaw-profile comments)")
    ap.add_argument("--rows", type=int, default=150)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(RESULTS, "importance_kernels.json"))
    a = ap.parse_args()
    work = workdir("importance-kernels")
    run_dir = a.model or jigsaw_model(work)
    model = os.path.join(run_dir, "model.pt")
    csv = os.path.join(work, "comments.csv")
    subprocess.run([os.path.join(BIN, "gen_jigsaw_profile"), csv, "2000", "7"], check=True, stdout=subprocess.DEVNULL)

    def faithfulness(methods):
        return [ATTN, "faithfulness", "--model", model, "--csv", csv, "--rows", str(a.rows), "--methods", methods, "--steps", "50",
                "--threads", "2", "--json", os.path.join(work, "attn.json")]

    times = {k: {"all_methods": [], "without_integrated_gradients": []} for k in KERNELS}
    for _ in range(a.rounds):
        for name, env in KERNELS.items():
            times[name]["all_methods"].append(run(faithfulness(METHODS), env))
            times[name]["without_integrated_gradients"].append(run(faithfulness(METHODS.replace("integrated-gradients,", "")), env))
    peer = [PYTHON, os.path.join(HERE, "python_faithfulness.py"), model, csv, str(a.rows), "50", "2", os.path.join(work, "peer.json")]
    out = {"rows": a.rows, "steps": 50, "threads": 2, "methods": METHODS,
           "kernels": {name: {"env": env, "openblas_core": openblas_core(env),
                              **{k: {"runs": v, "median": median_of(v)} for k, v in times[name].items()}} for name, env in KERNELS.items()},
           "peer_avx2_seconds": run(peer, KERNELS["avx2"])}
    base, avx2 = out["kernels"]["as_installed"]["all_methods"]["median"], out["kernels"]["avx2"]["all_methods"]["median"]
    out["avx2_over_as_installed"] = round(avx2 / base, 3)
    out["peer_avx2_ratio"] = round(out["peer_avx2_seconds"] / avx2, 1)
    write_result(a.out, out)


if __name__ == "__main__":
    main()
