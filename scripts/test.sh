#!/usr/bin/env bash
# Set up, build, and run every test (Catch2 unit and CLI tests, Keras / torch.load parity) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j 2
