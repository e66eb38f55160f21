#!/usr/bin/env bash
# A long libFuzzer campaign over Kiln's model fuzzers (issue #14), as opposed to the 15-second ctest smoke runs.
#
#   scripts/fuzz_campaign.sh [--build DIR] [--seconds N] [--work DIR] [--models DIR] [--extra-seeds DIR]... [TARGET...]
#
# TARGETs default to interpreter_fuzzer and model_reader_fuzzer (also: flex_fuzzer, module_reader_fuzzer,
# vulkan_payload_fuzzer), built in DIR (default build/fuzz: the fuzz preset,
# clang -O1 with asserts, libFuzzer with ASan+UBSan, several times the executions per second of the asan preset's
# -O0 build; `cmake --preset fuzz && cmake --build --preset fuzz`).
# Seeds: every .tflite under --models (default ../shared/models) and ../shared/repro, the op and quantized seeds the
# build wrote (tests/fuzz/op_seeds, quantized_seeds), and each --extra-seeds folder (for instance the single-op
# models of tests/models/data_op_models.py: `python tests/models/data_op_models.py DIR` in the LiteRT venv). Each
# target runs N seconds (default 600) in fork mode, going on past findings, with a 5-second timeout per input and a
# 2 GiB memory limit; its new corpus and any findings (crash-*, timeout-*, oom-*) are kept under WORK/TARGET.
# Prints, per target, the executions and the oom/timeout/crash counts; exits 1 if any target found something.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/fuzz
seconds=600
work=""
models=$root/../shared/models
extra=()
targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --extra-seeds) extra+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(interpreter_fuzzer model_reader_fuzzer)
[ -n "$work" ] || work=$build/fuzz-campaign

seeds=$work/seeds
mkdir -p "$seeds"
for dir in "$models" "$root/../shared/repro" "$build/tests/fuzz/op_seeds" "$build/tests/fuzz/quantized_seeds" \
           ${extra[@]+"${extra[@]}"}; do
  [ -d "$dir" ] || continue
  find "$dir" -maxdepth 1 -name '*.tflite' -size -300k -exec cp {} "$seeds/" \;
done
echo "seeds: $(find "$seeds" -name '*.tflite' | wc -l) models in $seeds"

found=0
for target in "${targets[@]}"; do
  binary=$build/tests/fuzz/$target
  if [ ! -x "$binary" ]; then
    echo "$target: not built ($binary)" >&2
    exit 2
  fi
  mkdir -p "$work/$target/corpus" "$work/$target/findings"
  log=$work/$target/campaign.log
  # The model seeds feed the model fuzzers; the others start from their built-in valid input (and a reproducer).
  target_seeds=("$seeds")
  case $target in
    interpreter_fuzzer|model_reader_fuzzer) ;;
    flex_fuzzer) target_seeds=("$work/$target/repro"); mkdir -p "${target_seeds[0]}"
                 cp "$root/../shared/repro/"flex_*.bin "${target_seeds[0]}/" 2>/dev/null || true ;;
    *) target_seeds=() ;;
  esac
  "$binary" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=5 -rss_limit_mb=2048 \
    -max_len=300000 -max_total_time="$seconds" -artifact_prefix="$work/$target/findings/" \
    "$work/$target/corpus" ${target_seeds[@]+"${target_seeds[@]}"} >"$log" 2>&1 || true
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  runs=$(echo "$last" | sed -E 's/^#([0-9]+).*/\1/')
  counts=$(echo "$last" | grep -oE 'oom/timeout/crash: [0-9]+/[0-9]+/[0-9]+' || echo "oom/timeout/crash: ?")
  findings=$(find "$work/$target/findings" -type f | wc -l)
  echo "$target: ${runs:-0} executions in ${seconds}s, $counts, $findings finding files (log: $log)"
  [ "$findings" -eq 0 ] || found=1
done
exit $found
