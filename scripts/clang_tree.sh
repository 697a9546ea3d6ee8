# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: the one clang tree both build in, build-fuzz/.
# Everything in it is compiled with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's
# coverage (-DATTN_FUZZ=ON); sanitize.sh builds the readers' unit tests and the commands there,
# fuzz.sh the fuzz targets, so the libraries they share are compiled once (and clang compiles
# instrumented code 2-3x faster than GCC). Both configure it with the same options: -O1 (what the
# sanitizers' documentation recommends) and line tables only (file:line in their reports), and
# build both sets of targets in one go (the second script finds them built): one Ninja run keeps
# both cores busy where two in turn would wait on each other's last files.
export CCACHE_BASEDIR="$PWD"  # a fresh clone elsewhere reuses the compiler cache
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
  -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -gline-tables-only" -DCMAKE_C_FLAGS_SANITIZE="-O1 -gline-tables-only" -DATTN_FUZZ=ON \
  -DATTN_BUILD_TESTS=ON -DATTN_BUILD_BENCH=OFF -DATTN_BUILD_SERVER=OFF >/dev/null
sanitize_targets=(text_tests io_tests data_tests report_tests cli_tests attn attn-prepare attn-tokenize attn-datagen attn-plot)
fuzz_targets=(csv tokenizer tokenizer_json data_pt config model_file)
cmake --build build-fuzz --target "${sanitize_targets[@]}" "${fuzz_targets[@]/%/_fuzz}"
