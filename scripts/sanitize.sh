#!/usr/bin/env bash
# The readers and writers under AddressSanitizer and UndefinedBehaviorSanitizer (clang, in build-fuzz/,
# the tree scripts/fuzz.sh shares: scripts/clang_tree.sh): the text, io, data and report unit tests,
# and the command-line tests tagged [readers] (every kind of bad input to prepare, tokenize and
# datagen). Any finding fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase.sh
phase sanitize-build "the readers, their tests and the fuzz targets with clang, ASan and UBSan in build-fuzz/ (about 6 min cold)"
source scripts/clang_tree.sh
phase_done
phase sanitize "the readers' tests under ASan and UBSan (about 1 min)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_container_overflow=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Each run's summary is printed; a failing run prints all of its output (the sanitizer's report).
run() {
  local name=$1 log
  shift
  log=$(mktemp)
  echo "sanitize: $name"
  if "$@" > "$log" 2>&1; then
    tail -n 2 "$log"
    rm -f "$log"
  else
    cat "$log"
    rm -f "$log"
    echo "sanitize: $name failed"
    exit 1
  fi
}
for t in text io data report; do
  run "${t}_tests" "build-fuzz/tests/${t}_tests" --order rand --rng-seed 1 --warn NoTests
done
run "cli_tests [readers]" build-fuzz/tests/cli_tests "[readers]" --warn NoTests
echo "sanitize: no findings"
phase_done
