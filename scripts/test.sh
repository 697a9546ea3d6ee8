#!/usr/bin/env bash
# Set up, build, and run every test: CTest (Catch2 unit and CLI tests, Keras / torch.load parity,
# the server and its page in Chromium), then the readers under ASan + UBSan (scripts/sanitize.sh)
# and every libFuzzer target for 15 s with a fixed seed (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase.sh
echo "attn's tests: install what is missing, build everything, CTest, the sanitizers, the fuzzers. On a fresh"
echo "2-core machine about 23 min: build 10, CTest 6, the sanitizers' clang build and runs 6, fuzzing 1."
bash scripts/setup.sh
phase ctest "every test, two at a time (about 6 min on 2 cores)"
ctest --test-dir build --output-on-failure -j 2
phase_done
bash scripts/sanitize.sh
phase fuzz "6 fuzz targets for 15 s each, two at a time (about 1 min)"
FUZZ_SEED=1 bash scripts/fuzz.sh 15
phase_done
