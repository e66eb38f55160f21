#!/usr/bin/env bash
# Regenerates what the ABI checks compare against (docs/hal.md "Keeping the ABI"): runtime/abi_layout.c and
# tests/abi/abi_probe.c (scripts/gen_abi_layout.py), then the abidw baselines tests/abi/libkiln.abi and
# tests/abi/abi_probe.abi from a build configured with the ci preset (clang, RelWithDebInfo: the DWARF the
# baselines are read from). Run it only for a change to the ABI that is meant, and commit its output with it.
#
#   scripts/update_abi_baseline.sh [<build-dir>]     (default: build/ci)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/ci}
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "update_abi_baseline: $build is not configured: run 'cmake --preset ci' first" >&2
  exit 1
fi

python3 "$root/scripts/gen_abi_layout.py"
cmake --build "$build" --target kiln kiln_abi_probe
check=$root/tests/abi/check_abi.sh
"$check" --update "$build/runtime/libkiln.so" "$root/tests/abi/libkiln.abi" "$root/include/kiln" \
  "$root/tests/abi/libkiln.suppr"
"$check" --update "$build/tests/abi/libkiln_abi_probe.so" "$root/tests/abi/abi_probe.abi"
git -C "$root" status --short -- runtime/abi_layout.c tests/abi
