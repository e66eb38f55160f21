#!/usr/bin/env bash
# Sets up Kiln on a fresh Debian 12 machine, builds it, and runs its main job on the model that ships in the
# repo: examples/atan/atan.tflite, y = atan(x + offset) with a custom `Atan` op written in C.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target kiln_atan_demo kiln_cli
echo
build/release/examples/atan/kiln_atan_demo
