#!/usr/bin/env bash
# Installs what attn needs from Debian's packages (only what is missing; as root or through sudo),
# then configures and builds it (Release, Ninja, ccache) in build/. Safe to run again.
#   setup.sh main   what the main job needs: the library and the attn, attn-train, attn-explain commands
#   setup.sh        everything: every command, the tests (and what they need) and the benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/phase.sh
mode=${1:-all}
export CCACHE_BASEDIR="$PWD"  # a fresh clone elsewhere reuses the compiler cache

packages=(
  g++ cmake ninja-build ccache
  libtorch-dev libopenblas0-openmp   # LibTorch 1.13; without OpenBLAS it falls back to a 15x slower BLAS
  libcxxopts-dev nlohmann-json3-dev libicu-dev zlib1g-dev
  libgloo-dev                        # the headers of c10d's Gloo process group (data-parallel training)
)
if [ "$mode" != main ]; then
  packages+=(libboost-dev libssl-dev)  # attn serve: Boost.Beast and Asio (HTTP); OpenSSL for TLS and API keys
  packages+=(catch2 python3 python3-torch python3-keras-preprocessing)  # tests: Catch2, Python torch.load, the real Keras
  packages+=(openssl python3-jsonschema)      # the server's tests: a self-signed certificate, OpenAPI validation
  packages+=(chromium)                        # the explain page's test, in a real (headless) browser
  packages+=(iproute2)                        # the two-host training test: network namespaces, veth, tc
  packages+=(clang libclang-rt-14-dev libfuzzer-14-dev)  # scripts/fuzz.sh: libFuzzer with ASan and UBSan
  packages+=(clang-format)                    # the format test (.clang-format)
fi
phase packages "the Debian packages attn needs, installing only those missing"
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
phase_done

# build "WHAT" "COLD" [--target T...]: builds, saying first how many steps are left (Ninja's dry run)
# and, for a tree never built, how long it takes cold.
build() {
  local what=$1 cold=$2 steps
  shift 2
  steps=$(cmake --build build "$@" -- -n | grep -c '^\[' || true)
  if [ -f build/.ninja_log ]; then
    phase build "$what: $steps steps left"
  else
    phase build "$what: $steps steps ($cold on 2 cores without a compiler cache)"
  fi
  cmake --build build "$@"
  phase_done
}

phase configure "CMake: a Release build with Ninja in build/"
if [ "$mode" = main ]; then
  # A build the test command configured keeps its tests, benchmarks and server (switching them off
  # would take `attn serve` out of the dispatcher's list); a fresh one configures only the main job.
  if [ -f build/CMakeCache.txt ]; then
    cmake -S . -B build >/dev/null
  else
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=OFF -DATTN_BUILD_BENCH=OFF -DATTN_BUILD_SERVER=OFF >/dev/null
  fi
  phase_done
  build "the library and the attn, attn-train and attn-explain commands" "about 4-5 min" --target attn attn-train attn-explain
else
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTN_BUILD_TESTS=ON -DATTN_BUILD_BENCH=ON -DATTN_BUILD_SERVER=ON >/dev/null
  phase_done
  build "the library, every command, the server, the tests and the benchmarks" "about 10 min"
fi
