#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# Builds the libFuzzer targets of the file readers (fuzz/) with clang and
# -fsanitize=fuzzer,address,undefined into LLMFT_FUZZ_BUILD_DIR (default build-fuzz/), then
# runs each TARGET (default: all) for SECONDS (default 60), starting from its committed
# corpus fuzz/corpus/TARGET. New inputs go to BUILD/corpus/TARGET, crashing inputs to
# BUILD/artifacts/TARGET/. Prints per target the executions and crashes; exits 1 if any
# target crashed. Installs clang and libFuzzer first (scripts/install_deps.sh --fuzz).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install_deps.sh" --fuzz
build=${LLMFT_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-60}
[[ $# -gt 0 ]] && shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(token_file safetensors json_config tokenizer prepare checkpoint)

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link -DLLMFT_CUDA=OFF \
  -DLLMFT_SANITIZE=ON -DLLMFT_FUZZ=ON -DBUILD_TESTING=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0
summary=()
for target in "${targets[@]}"; do
  corpus=$build/corpus/$target
  artifacts=$build/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  log=$build/fuzz_$target.log
  echo "fuzz: $target for ${seconds}s (log: $log)"
  status=0
  # The checkpoint target starts MPI, which (with hwloc) keeps allocations until exit by
  # design, as the sanitizer suite's ASAN_OPTIONS also says: no leak checks there. HDF5
  # asks malloc for impossible sizes that damaged metadata spell, and turns the NULL it gets
  # without a sanitizer into an error: let malloc return NULL there too.
  leaks=()
  asan=${ASAN_OPTIONS:-}
  if [[ $target == checkpoint ]]; then
    leaks=(-detect_leaks=0)
    asan=detect_leaks=0:allocator_may_return_null=1${asan:+:$asan}
  fi
  ASAN_OPTIONS=$asan "$build/fuzz_$target" "${leaks[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$root/fuzz/corpus/$target" \
    > "$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$artifacts" -type f | wc -l)
  summary+=("$target: ${execs:-?} executions, $crashes crashing inputs, exit $status")
  if [[ $status -ne 0 || $crashes -ne 0 ]]; then
    failed=1
    tail -n 40 "$log"
    find "$artifacts" -type f
  fi
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$failed"
