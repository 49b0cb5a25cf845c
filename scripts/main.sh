#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs the main job on
# the embedded default: the adapter report, then a checked demo kernel run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
bq="$root/build/bin/blockq"
"$bq" info
"$bq" demo
