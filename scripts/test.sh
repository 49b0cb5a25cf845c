#!/usr/bin/env bash
# README command 2: installs what is missing, builds, and runs every test:
# the CTest suite (GPU tests once on the adapter's limits and once under the
# low-end profile), then the sanitizer job.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
status=0
ctest --test-dir "$root/build" --output-on-failure -j 2 || status=$?
if [ -x "$root/scripts/test-sanitize.sh" ] && [ "${BLOCKQ_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/test-sanitize.sh" || status=$?
fi
exit $status
