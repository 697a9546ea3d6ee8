#!/usr/bin/env bash
# attn as a library: `cmake --install` the build into a fresh prefix, build examples/ from a clean
# directory against the installed CMake package (find_package(attn), attn::attn), and run the
# example on a trained model.
# usage: example_test.sh BUILD_DIR EXAMPLES_DIR WORK_DIR MODEL
set -euo pipefail
build=$1 examples=$2 work=$3 model=$4
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/attn" && test -x "$work/prefix/bin/attn-explain"
test -f "$work/prefix/include/attn/tasks/task.h"
test -f "$work/prefix/lib/cmake/attn/attnConfig.cmake" || test -f "$work/prefix/lib/x86_64-linux-gnu/cmake/attn/attnConfig.cmake"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$examples" -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" "${launcher[@]}" >/dev/null
cmake --build "$work/example" >/dev/null
out=$("$work/example/explain_sentence" "$model" "ice cream sucks")
echo "$out"
grep -q "sucks" <<<"$out" && grep -q "toxic 0\." <<<"$out"
# The installed command runs too (the dispatcher finds its apps beside it).
"$work/prefix/bin/attn" explain --model "$model" "ice cream" | grep -q "cream"
echo "installed package: example built and run"
