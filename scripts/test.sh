#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs every test:
# the sanitizer job (ASan + UBSan over the GGUF and quant suites), then the
# CTest suite (GPU tests once on the adapter's limits and once under the
# low-end profile, the llama.cpp oracle, the headless-Chromium check).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
status=0
if [ "${BLOCKQ_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/test-sanitize.sh" || status=$?
fi
ctest --test-dir "$root/build" --output-on-failure -j "${BLOCKQ_TEST_JOBS:-2}" || status=$?
exit $status
