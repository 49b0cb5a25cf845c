#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs the main job on
# the embedded default: the adapter report, a checked demo kernel run, then
# `blockq run` on the embedded default model (the tiny synthetic llama, made on
# first use).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
bq="$root/build/bin/blockq"
"$bq" info
"$bq" demo
"$bq" run -p "Once upon a time" -n 32
