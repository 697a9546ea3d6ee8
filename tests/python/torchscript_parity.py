#!/usr/bin/env python3
"""Loads every TorchScript file written by tests/nn/export_modules.cpp with Python's
torch.jit.load, runs it on the saved inputs and compares with the outputs the C++ module gave
(<= 1e-6). Exit 77 (CTest skip) without python3-torch.

usage: torchscript_parity.py DIR
"""
import glob
import os
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e} (install python3-torch)")
    sys.exit(77)

directory = sys.argv[1]
failures, checks = [], 0
files = sorted(glob.glob(os.path.join(directory, "*_io.pt")))
if not files:
    sys.exit(f"no modules in {directory}")
for io_path in files:
    name = os.path.basename(io_path)[: -len("_io.pt")]
    module = torch.jit.load(os.path.join(directory, name + ".pt"))
    module.eval()
    io = torch.load(io_path)
    with torch.no_grad():
        out = module(*io["inputs"])
    if not isinstance(out, tuple):
        out = (out,)
    expected = io["outputs"]
    checks += 1
    if len(out) != len(expected):
        failures.append(f"{name}: {len(out)} outputs, expected {len(expected)}")
        continue
    for i, (got, want) in enumerate(zip(out, expected)):
        diff = (got - want).abs().max().item() if got.numel() else 0.0
        if got.shape != want.shape or diff > 1e-6:
            failures.append(f"{name}: output {i} differs (shape {tuple(got.shape)} vs {tuple(want.shape)}, max diff {diff})")
    params = [n for n, _ in module.named_parameters()]
    print(f"{name}: ok; parameters {params}")
for f in failures:
    print("FAIL:", f)
print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
