#!/usr/bin/env bash
# Installs the Debian 12 packages Kiln builds and tests with. Idempotent: installs only what is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  llvm-19-dev libclang-cpp19-dev libclang-19-dev clang-19 libclang-rt-19-dev libfuzzer-19-dev
  flatbuffers-compiler libflatbuffers-dev
  libvulkan-dev glslang-dev spirv-tools mesa-vulkan-drivers vulkan-validationlayers
  libgtest-dev libgmock-dev libbenchmark-dev
  libsleef-dev
  libxnnpack-dev libpthreadpool-dev
  python3-numpy python3-flatbuffers
  python3-dev pybind11-dev python3-pytest
  python3-venv
  abigail-tools
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
