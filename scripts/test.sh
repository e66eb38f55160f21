#!/usr/bin/env bash
# Sets up Kiln on a fresh Debian 12 machine, builds everything with warnings as errors, and runs every test.
# Then builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the tests once more.
#   scripts/test.sh            both passes
#   KILN_SKIP_ASAN=1 scripts/test.sh   the normal pass only
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=$(nproc)
# ccache hits across checkouts in different folders (CI builds a fresh clone elsewhere).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"
ctest --preset ci -j "$jobs"

if [ "${KILN_SKIP_ASAN:-0}" != "1" ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan -j "$jobs"
fi
