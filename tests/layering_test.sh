#!/usr/bin/env bash
# The layering: text, io, data, report -> nn -> models -> tasks -> train. Fails, naming the file,
# when a layer's headers or sources include a layer above it.
# usage: layering_test.sh LIB_DIR
set -euo pipefail
lib=$1
rank() {
  case $1 in text|io|data|report) echo 0 ;; nn) echo 1 ;; models) echo 2 ;; tasks) echo 3 ;; train) echo 4 ;; *) echo 9 ;; esac
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
[ "$bad" -eq 0 ] && echo "layering holds: text, io, data, report -> nn -> models -> tasks -> train"
exit "$bad"
