#!/usr/bin/env bash
# The layering: text, io, data, report, metrics -> nn, parallel -> models -> tasks -> analyses -> train. Fails, naming
# the file, when
#   - a layer's headers or sources include a layer above it, or reach another layer's files by a
#     relative path ("../"), which the build's include directories would not catch;
#   - include/ does not mirror src/: every public header lib/include/attn/L/X.h has its
#     lib/src/L/X.cpp, and every lib/src/L/X.cpp has a header, public (lib/include/attn/L/X.h) or the
#     layer's own (lib/src/L/X.h); a unit too large for one file goes on in X_PART.cpp
#     (text/tokenizer_json.cpp: the tokenizer's JSON reader);
#   - the library changes process-wide state: a signal handler, the environment, a fork, the
#     process's name (the apps' to do).
# usage: layering_test.sh LIB_DIR
set -euo pipefail
lib=$1
rank() {
  case $1 in text|io|data|report|metrics) echo 0 ;; nn|parallel) echo 1 ;; models) echo 2 ;; tasks) echo 3 ;; analyses) echo 4 ;; train) echo 5 ;; *) echo 9 ;; esac
}
bad=0
for dir in "$lib"/include/attn/* "$lib"/src/*; do
  [ -d "$dir" ] || continue
  layer=$(basename "$dir")
  own=$(rank "$layer")
  while IFS=: read -r file included; do
    if [ "$(rank "$included")" -gt "$own" ]; then
      echo "$file: the $layer layer includes attn/$included/ (a layer above it)"
      bad=1
    fi
  done < <(grep -rEo '#include +"attn/[a-z_]+/' "$dir" | sed -E 's|#include +"attn/([a-z_]+)/|\1|')
done
while IFS= read -r hit; do
  echo "$hit: a relative include across directories (include another layer by its attn/ name)"
  bad=1
done < <(grep -rnE '#include +"\.\./' "$lib" || true)
for header in "$lib"/include/attn/*/*.h; do
  layer=$(basename "$(dirname "$header")")
  unit=$(basename "$header" .h)
  if [ ! -f "$lib/src/$layer/$unit.cpp" ]; then
    echo "$header: no lib/src/$layer/$unit.cpp (include/ mirrors src/)"
    bad=1
  fi
done
for source in "$lib"/src/*/*.cpp; do
  layer=$(basename "$(dirname "$source")")
  unit=$(basename "$source" .cpp)
  part_of=""
  for header in "$lib"/include/attn/"$layer"/*.h "$lib"/src/"$layer"/*.h; do
    [ -f "$header" ] || continue
    base=$(basename "$header" .h)
    case $unit in "${base}"_*) part_of=$base ;; esac
  done
  if [ ! -f "$lib/include/attn/$layer/$unit.h" ] && [ ! -f "$lib/src/$layer/$unit.h" ] && [ -z "$part_of" ]; then
    echo "$source: no header attn/$layer/$unit.h, public or the layer's own (include/ mirrors src/)"
    bad=1
  fi
done
while IFS= read -r hit; do
  echo "$hit: the library changes process-wide state (signals, environment, fork, process name: the apps')"
  bad=1
done < <(grep -rnE 'signal\(|sigaction|setenv|prctl|fork\(' "$lib" || true)
[ "$bad" -eq 0 ] && echo "layering holds: text, io, data, report, metrics -> nn, parallel -> models -> tasks -> analyses -> train; include/ mirrors src/"
exit "$bad"
