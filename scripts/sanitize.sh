#!/usr/bin/env bash
# The torch-free code under AddressSanitizer and UndefinedBehaviorSanitizer (GCC), in build-asan/:
# the text, data and report unit tests, and the command-line tests of the torch-free commands
# (every kind of bad input to prepare, tokenize and datagen). Any finding fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTN_SANITIZE=address,undefined \
  -DATTN_BUILD_BENCH=OFF -DATTN_BUILD_SERVER=OFF >/dev/null
cmake --build build-asan --target text_tests data_tests report_tests cli_tests attn attn-prepare attn-tokenize attn-datagen attn-plot
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in text data report; do
  echo "sanitize: ${t}_tests"
  "build-asan/tests/${t}_tests" --order rand --rng-seed 1 | tail -n 2
done
echo "sanitize: cli_tests (torch-free commands)"
build-asan/tests/cli_tests "attn --help, --version and unknown commands" "bad flags are usage errors (exit 2)" \
  "prepare writes tokenizer.json, data.pt and prepare.json" \
  "bad input files fail with file, line and column (exit 1) and write nothing" \
  "a corrupt or mismatched tokenizer.json is named with its key" "tokenize rejects invalid UTF-8 on stdin with its line" \
  "an empty CSV is an error naming it, before anything is written" \
  "datagen: the seeds' data sets, bad settings are usage errors" | tail -n 2
echo "sanitize: no findings"
