#!/usr/bin/env bash
# The sanitizer job: builds the CPU test binaries (test_gguf, test_quant) with
# AddressSanitizer + UBSan into build-asan/ and runs them, so the malformed-GGUF
# corpus, truncation and mutation tests run with every read bounds-checked.
# Env: CC/CXX pick the compiler (default gcc), BLOCKQ_JOBS the build parallelism.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-asan"
jobs=${BLOCKQ_JOBS:-$(nproc)}
targets=(test_gguf test_quant)

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBLOCKQ_SANITIZE=ON >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${targets[@]}"; do
  echo "== sanitize: $t"
  "$build/bin/$t" --gtest_brief=1 || { echo "sanitize: $t FAILED"; status=1; }
done
exit $status
