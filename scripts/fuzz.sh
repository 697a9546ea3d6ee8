#!/usr/bin/env bash
# libFuzzer (clang, with AddressSanitizer and UndefinedBehaviorSanitizer) on attn's readers: the CSV
# readers, the tokenizer (fitting and applying arbitrary bytes), tokenizer.json, data.pt, model
# configs and --set, and the model-file loader. Seeds come from tests/fixtures and, when build/ holds
# them, a prepared data set and the test runs' model.pt. The corpora grow in build-fuzz/corpus.
#   scripts/fuzz.sh [SECONDS]     each target runs SECONDS (default 300; CI runs 30)
#   FUZZ_SEED=N scripts/fuzz.sh   libFuzzer's random seed (default: a new one each run). CI fixes it,
#                                 so a red CI is a regression it can reproduce, not a new roll of the
#                                 dice; the long runs explore.
# Prints executions and findings per target (also build-fuzz/summary.json); a crash fails the script
# and leaves its input in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
source scripts/clang_tree.sh
targets=("${fuzz_targets[@]}")

# Seeds.
seeds=build-fuzz/seeds
rm -rf "$seeds"
rm -rf build-fuzz/findings
mkdir -p "$seeds"/{csv,tokenizer,tokenizer_json,data_pt,config,model_file} build-fuzz/findings
cp tests/fixtures/messy_comments.csv "$seeds/csv/"
printf 'id,x0,x1,label\n1,0.5,-1,1\n2,1e3,2,0\n' > "$seeds/csv/features.csv"
printf 'source,target\n"9 may, 1998",1998-05-09\n' > "$seeds/csv/pairs.csv"
head -c 20000 tests/fixtures/messy_comments.csv > "$seeds/tokenizer/messy.txt"
printf '{"lstm_units": 30, "labels": 2}' > "$seeds/config/set.json"
printf 'score=general' > "$seeds/config/assignment.txt"
if [ -x build/bin/attn ]; then
  build/bin/attn prepare --csv tests/fixtures/messy_comments.csv --out build-fuzz/prepared --maxlen 20 >/dev/null
  cp build-fuzz/prepared/tokenizer.json "$seeds/tokenizer_json/"
  cp build-fuzz/prepared/data.pt "$seeds/data_pt/"
fi
for found in tests/fixtures/fuzz/*; do  # what earlier runs found stays in the corpus
  t=$(basename "$found"); t=${t%%-*}
  [ -d "$seeds/$t" ] && cp "$found" "$seeds/$t/"
done
for run in build/tests/tiny_run/run build/tests/tiny_run/features; do
  [ -f "$run/model.pt" ] && cp "$run/model.pt" "$seeds/model_file/$(basename "$run").pt" && cp "$run/config.json" "$seeds/config/$(basename "$run").json"
done

# The targets' temporary files (fuzz_util.h) go here, removed at the end.
scratch="$PWD/build-fuzz/tmp"
rm -rf "$scratch"
mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT

# Two targets at a time, one per core (each libFuzzer process is single-threaded, so a target gets
# the same executions as it would alone); the summaries follow in the list's order.
fuzz_one() {
  local t=$1 options=detect_leaks=1 code=0
  # LibTorch is not instrumented (no leak or container checks there); a huge allocation it attempts
  # for a corrupt file must end in an error, not in ASan's report.
  case $t in data_pt|config|model_file) options=detect_leaks=0:detect_container_overflow=0:allocator_may_return_null=1 ;; esac
  TMPDIR="$scratch" ASAN_OPTIONS=$options UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "build-fuzz/tests/fuzz/${t}_fuzz" \
    -max_total_time="$seconds" ${FUZZ_SEED:+-seed="$FUZZ_SEED"} -timeout=20 -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix=build-fuzz/findings/"$t"- \
    "build-fuzz/corpus/$t" "$seeds/$t" > "build-fuzz/$t.log" 2>&1 || code=$?
  echo "$code" > "build-fuzz/$t.exit"
}
running=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  rm -f "build-fuzz/$t.exit"
  if ((running == 2)); then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

summary="{"
status=0
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  code=$(cat "build-fuzz/$t.exit" 2>/dev/null || echo 1)
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/$t.log" | grep -o '[0-9]*$' || echo 0)
  found=$(find build-fuzz/findings -name "$t-*" | wc -l)
  echo "fuzz: $t: $runs executions in ${seconds}s, $found findings (exit $code), corpus $(ls "$corpus" | wc -l) inputs"
  summary+="\"$t\": {\"executions\": $runs, \"seconds\": $seconds, \"findings\": $found, \"corpus\": $(ls "$corpus" | wc -l)},"
  if [ "$code" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    tail -n 40 "build-fuzz/$t.log"
  fi
done
echo "${summary%,}}" > build-fuzz/summary.json
exit $status
