#!/usr/bin/env bash
# Sets up Kiln on a fresh Debian 12 machine, builds it, and runs its main job on the model that ships in the
# repo: examples/atan/atan.tflite, y = atan(x + offset) with a custom `Atan` op. First the op written in C
# (kiln_atan_demo); then the same op written once as a RenderScript-style kernel (examples/atan/atan_op.rs),
# compiled by kilnc and served with `kiln run --op`, on the CPU and on the GPU (Mesa's lavapipe where there is no
# GPU), with --explain saying where each node ran. All three print the same numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target kiln_atan_demo kiln_cli kilnc kiln_vulkan
echo
build/release/examples/atan/kiln_atan_demo

echo
echo "== the same op as a kernel: kilnc examples/atan/atan_op.rs"
build/release/compiler/kilnc examples/atan/atan_op.rs -o build/release/atan_op.kmod
for device in cpu gpu; do
  echo
  echo "== kiln run --op Atan=atan_op.kmod:atan_op --device $device --explain"
  # The Vulkan driver is found in the build tree; an installed Kiln finds it beside itself.
  build/release/tools/kiln run examples/atan/atan.tflite --input examples/atan/atan_x.npy \
    --op Atan=build/release/atan_op.kmod:atan_op --device "$device" --explain
done
