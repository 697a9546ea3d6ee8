#!/usr/bin/env bash
# Set up, build, and run every test: CTest (Catch2 unit and CLI tests, Keras / torch.load parity,
# the server and its page in Chromium), then the readers under ASan + UBSan (scripts/sanitize.sh)
# and every libFuzzer target for 30 s with a fixed seed (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j 2
bash scripts/sanitize.sh
FUZZ_SEED=1 bash scripts/fuzz.sh 30
