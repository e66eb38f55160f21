#!/usr/bin/env bash
# Sets up Kiln on a fresh Debian 12 machine, builds everything with warnings as errors, and runs every test.
# Then builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the tests once more, and last
# builds everything with GCC (Debian's other compiler, warnings as errors) and runs the tests that need no GPU, and
# last builds the concurrency suite with ThreadSanitizer and runs it.
#   scripts/test.sh                    all four passes
#   KILN_SKIP_ASAN=1 scripts/test.sh   without the sanitizer pass
#   KILN_SKIP_GCC=1 scripts/test.sh    without the GCC pass
#   KILN_SKIP_TSAN=1 scripts/test.sh   without the ThreadSanitizer pass
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

if [ "${KILN_SKIP_GCC:-0}" != "1" ]; then
  cmake --preset gcc >/dev/null
  cmake --build --preset gcc -j "$jobs"
  # Vulkan, the slow install checks and the LiteRT comparison ran in the clang pass; the rest again here.
  ctest --preset gcc -j "$jobs" -LE "vulkan|slow|litert|cts"
fi

if [ "${KILN_SKIP_TSAN:-0}" != "1" ]; then
  # Only the concurrency suite (tests/concurrency), with the ci build's kilnc for its kernels.
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j "$jobs"
  ctest --preset tsan -j "$jobs"
fi
