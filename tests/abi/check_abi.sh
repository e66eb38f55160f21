#!/usr/bin/env bash
# Compares the ABI of a freshly built library with its committed baseline (docs/hal.md "Keeping the ABI").
#
#   tests/abi/check_abi.sh [--update] <library.so> <baseline.abi> [<headers-dir> [<suppressions>]]
#
# abidw (Debian's abigail-tools) reads the library's exported functions and variables and every type they reach
# from its DWARF; abidiff compares that with <baseline.abi>. With <headers-dir>, a type not declared in a header
# there is private: abidw keeps it as an opaque (declaration-only) type, so the C++ behind a C handle is not part
# of the ABI. <suppressions> (abidiff's format) names types whose changes abidiff does not report. The rule:
#   - no change: pass;
#   - only additions (new functions or variables, enumerators appended): pass, with a NOTICE listing them;
#   - anything else (a function or variable removed or changed, a type reached from one changed: a field added,
#     removed, moved or retyped, a struct resized, a parameter retyped): fail, with abidiff's report.
# abidiff's exit status has bit 4 for any ABI change and bit 8 for an incompatible one; bit 4 alone is told apart
# from additions by its summary ("N Removed, N Changed, N Added"). A change that is meant (a HAL minor version
# appending a field, a major version) is accepted by regenerating the baseline with scripts/update_abi_baseline.sh
# in the same commit: the baseline's diff is what review sees.
# --update writes <baseline.abi> instead of comparing. Exit 77 (a CTest skip) when abigail-tools is missing.
set -uo pipefail

update=0
if [ "${1:-}" = "--update" ]; then
  update=1
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 [--update] <library.so> <baseline.abi> [<headers-dir> [<suppressions>]]" >&2
  exit 2
fi
lib=$1
baseline=$2
headers=${3:-}
suppr=${4:-}

for tool in abidw abidiff; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool not found: the ABI check needs abigail-tools (apt-get install abigail-tools, scripts/setup.sh)"
    exit 77
  fi
done
# The section list is read whole first: `readelf | grep -q` under pipefail fails at random when grep exits at
# its first match and readelf dies writing the rest (SIGPIPE).
sections=$(readelf -S "$lib" 2>/dev/null)
if ! grep -q '\.debug_info' <<<"$sections"; then
  echo "FAIL: $lib has no DWARF (.debug_info): the ABI check needs a build with -g (the ci preset, RelWithDebInfo)"
  exit 1
fi

# Only what the library exports, and the types that reaches; no build paths (the baseline does not depend on
# where the tree is built); type ids by hash, so that a regenerated baseline's diff shows what changed.
flags=(--exported-interfaces-only --no-comp-dir-path --no-corpus-path --no-show-locs --type-id-style hash)
if [ -n "$headers" ]; then
  flags+=(--drop-private-types --headers-dir "$headers")
fi
diff_flags=()
if [ -n "$suppr" ]; then
  diff_flags+=(--suppressions "$suppr")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fresh=$tmp/$(basename "$baseline")
if ! abidw "${flags[@]}" --out-file "$fresh" "$lib"; then
  echo "FAIL: abidw could not read $lib"
  exit 1
fi

if [ $update -eq 1 ]; then
  cp "$fresh" "$baseline"
  echo "check_abi: wrote $baseline from $lib"
  exit 0
fi
if [ ! -f "$baseline" ]; then
  echo "FAIL: no baseline $baseline: create it with scripts/update_abi_baseline.sh"
  exit 1
fi

abidiff "${diff_flags[@]}" "$baseline" "$fresh" >"$tmp/report" 2>&1
rc=$?
name=$(basename "$lib")
if [ $rc -eq 0 ]; then
  echo "PASS: the ABI of $name equals $(basename "$baseline")"
  exit 0
fi
if [ $((rc & 3)) -ne 0 ]; then
  cat "$tmp/report"
  echo "FAIL: abidiff failed (exit status $rc)"
  exit 1
fi
# The counts of removed and changed functions, variables and symbols, summed over abidiff's summary lines.
removed=$(grep -Eo '[0-9]+ Removed' "$tmp/report" | awk '{s += $1} END {print s + 0}')
changed=$(grep -Eo '[0-9]+ Changed' "$tmp/report" | awk '{s += $1} END {print s + 0}')
if [ $((rc & 8)) -ne 0 ] || [ "$removed" -ne 0 ] || [ "$changed" -ne 0 ]; then
  cat "$tmp/report"
  echo "FAIL: the ABI of $name differs from $(basename "$baseline") ($removed removed, $changed changed; abidiff" \
       "exit status $rc: $([ $((rc & 8)) -ne 0 ] && echo 'incompatible change' || echo 'ABI change'))."
  echo "      If the change is meant (a HAL minor version appending a field, or a major version: docs/hal.md" \
       "\"Keeping the ABI\"), regenerate the baseline with scripts/update_abi_baseline.sh and commit it with the change."
  exit 1
fi
cat "$tmp/report"
echo "PASS (NOTICE): $name only adds to $(basename "$baseline"); regenerate the baseline when the additions are released"
exit 0
