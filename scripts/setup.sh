#!/usr/bin/env bash
# Installs what attn needs from Debian's packages (only what is missing; as root or through sudo),
# then configures and builds it (Release, Ninja, ccache) in build/. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build ccache
  libtorch-dev libopenblas0-openmp   # LibTorch 1.13; without OpenBLAS it falls back to a 15x slower BLAS
  libcxxopts-dev nlohmann-json3-dev catch2 libicu-dev zlib1g-dev
  python3 python3-torch python3-keras-preprocessing   # parity tests: Python torch.load and the real Keras
)
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

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
