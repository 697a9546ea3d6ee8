#!/usr/bin/env python3
"""What attn faithfulness needs of a host (bench/importance/results/importance_kernels.json): AVX-512, or cores?
The run of run_importance_bench.py (150 Jigsaw-length comments, all five methods, integrated
gradients with 50 steps, 2 threads), timed in alternating rounds with the kernels this host picks
(OpenBLAS' and LibTorch's AVX-512 ones here), with the kernels a host without AVX-512 gets
(OPENBLAS_CORETYPE=Zen, ATEN_CPU_CAPABILITY=avx2), and on one CPU (taskset -c 0: a host whose two
CPUs share one core's arithmetic, as a cloud machine's two hyperthreads do): each with and without
integrated gradients; the Python peer once with the AVX2 kernels and once on one CPU. The same
binaries and model; only the kernels the libraries dispatch to, or the CPUs, change.

usage: python3 bench/importance/run_importance_kernels.py [--model RUN_DIR] [--rows 150] [--rounds 2] [--out bench/importance/results/importance_kernels.json]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: benchlib
from benchlib import ATTN, BIN, JIGSAW_MODEL_HELP, PYTHON, arguments, jigsaw_model, median_of, timed, workdir, write_result  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
METHODS = "attention,gradient,grad-input,integrated-gradients,leave-one-out"
KERNELS = {"as_installed": {}, "avx2": {"OPENBLAS_CORETYPE": "Zen", "ATEN_CPU_CAPABILITY": "avx2"}, "one_cpu": {}}
ONE_CPU = ["taskset", "-c", "0"]  # the one_cpu runs: every thread on CPU 0


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
    ap = arguments(__file__, "importance_kernels.json", rows=150, rounds=2)
    ap.add_argument("--model", help=JIGSAW_MODEL_HELP)
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
            prefix = ONE_CPU if name == "one_cpu" else []
            times[name]["all_methods"].append(run(prefix + faithfulness(METHODS), env))
            times[name]["without_integrated_gradients"].append(run(prefix + faithfulness(METHODS.replace("integrated-gradients,", "")), env))
    peer = [PYTHON, os.path.join(HERE, "python_faithfulness.py"), model, csv, str(a.rows), "50", "2", os.path.join(work, "peer.json")]
    out = {"rows": a.rows, "steps": 50, "threads": 2, "methods": METHODS,
           "kernels": {name: {"env": env, "cpus": "0" if name == "one_cpu" else "all", "openblas_core": openblas_core(env),
                              **{k: {"runs": v, "median": median_of(v)} for k, v in times[name].items()}} for name, env in KERNELS.items()},
           "peer_avx2_seconds": run(peer, KERNELS["avx2"]), "peer_one_cpu_seconds": run(ONE_CPU + peer, {})}
    median = {name: out["kernels"][name]["all_methods"]["median"] for name in KERNELS}
    out["avx2_over_as_installed"] = round(median["avx2"] / median["as_installed"], 3)
    out["one_cpu_over_as_installed"] = round(median["one_cpu"] / median["as_installed"], 3)
    out["peer_avx2_ratio"] = round(out["peer_avx2_seconds"] / median["avx2"], 1)
    out["peer_one_cpu_ratio"] = round(out["peer_one_cpu_seconds"] / median["one_cpu"], 1)
    write_result(a.out, out)


if __name__ == "__main__":
    main()
