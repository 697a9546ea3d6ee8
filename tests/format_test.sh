#!/usr/bin/env bash
# The C++ sources as .clang-format lays them out (Debian's clang-format 14): every tracked file, so
# whatever a change touches is checked. Names each file that differs; skipped (77) without clang-format.
# usage: format_test.sh SOURCE_DIR
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "skipped: no clang-format (apt-get install clang-format)"; exit 77; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.cpp' '*.h')
else
  files=$(find apps lib server tests bench examples -name '*.cpp' -o -name '*.h')
fi
bad=0
for f in $files; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "$f: not as .clang-format lays it out (clang-format -i $f)"
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "every C++ file is formatted"
exit "$bad"
