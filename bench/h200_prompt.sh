#!/usr/bin/env bash
# Runs on the lent H200 (device tool): prompt evaluation (sessions 36-37).
# The tests of the prompt passes and of the int8 gemm (test_model's
# GpuPrompt* and Int8Gemm, test_k_gemm's int8 cases) and test_k_sample; then
# `bench gemm` at m = 16..512 on the 8B's shapes (f32 and int8 gemm lines)
# with the crossover, and the tilings of both gemms swept at 14336x4096
# (q4_0, m = 32, 128, 512; the int8 gemm's steps of 1-4 blocks and split-k
# included); then for each synthetic model `bench run --prompt-sweep` (each
# prompt length from position 0, wall clock to the logits, median of 3)
# under one pass of 128 rows (session 36's behaviour), the default passes
# (512 down to 8 since session 39), session 38's default passes
# (128/64/32/16), the default with --f32-gemm, and one pass of 128 again
# (drift); one line per
# run: tokens:rows:ms, then one of the GPU time of each pass, rows:whole:
# qkv/attention/ffn-gate-up/ffn-down ms. Expects the carried folders that bench/h200.sh does.
# PART picks what runs, so each call fits the device's 10 minutes: `tests`,
# `crossover` (the matvec/gemm crossovers with f32 and int8 x), `gemm` (the
# two bench gemm runs), `small` (smollm2-360m and llama-3.2-1b),
# `big` (llama-3-8b) or `all`. A run is not started once LIMIT seconds
# (default 540) have passed. Raw outputs go to $OUT as they are made.
# CFGS (configurations separated by ';'), SW (prompt lengths), MODELS
# ('preset type' pairs separated by ';', in place of small/big) and
# SWEEP_SHAPES, SWEEP_FORMATS, SWEEP_M, SWEEP_KINDS and SWEEP_TIMEOUT (the gemm sweep's)
# override the defaults; SWEEP_ONLY=1 skips the plain bench gemm run. A
# configuration "old:OPTIONS" runs .devrun/build/bin/blockq_old (an earlier
# build, carried) with OPTIONS and its own tuning cache.
# Usage: OUT=... PART=tests,gemm bench/h200_prompt.sh
set -u
PART=${PART:-all} LIMIT=${LIMIT:-540}
want() { [ "$PART" = all ] || [[ ",$PART," == *",$1,"* ]]; }
late() { [ "$SECONDS" -ge "$LIMIT" ] && echo "(skipped after ${SECONDS} s: $*)"; }
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export LD_LIBRARY_PATH=$PWD/.devrun/third_party/dawn/node_modules/bun-webgpu-linux-x64:$PWD/.devrun/lib BLOCKQ_MODEL_DIR=/tmp/bqmodels
mkdir -p /tmp/o $BLOCKQ_MODEL_DIR
B=.devrun/build/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if want tests; then
timeout 200 $B/test_model --gtest_filter='GpuPrompt*:*Int8Gemm*' > /tmp/o/test_model.log 2>&1
echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)|max rel' /tmp/o/test_model.log | tr '\n' ' ')"
timeout 200 $B/test_k_gemm --gtest_filter='*Int8*' > /tmp/o/test_gemm.log 2>&1
echo "test_k_gemm int8 exit $?: $(grep -E '^\[  (PASSED|FAILED)' /tmp/o/test_gemm.log | tr '\n' ' ')"
timeout 120 $B/test_k_sample > /tmp/o/test_sample.log 2>&1
echo "test_k_sample exit $?: $(grep -E '^\[  (PASSED|FAILED)' /tmp/o/test_sample.log | tr '\n' ' ')"
fi
if want crossover && ! late "crossover"; then
timeout 150 $B/blockq bench gemm --formats q4_0,q8_0,q4_K --shapes 4096x4096 --m 64 --crossover > /tmp/o/crossover.txt 2>&1
cp /tmp/o/crossover.txt "$OUT/"
grep -E "^crossover" /tmp/o/crossover.txt
fi
if want gemm && [ -z "${SWEEP_ONLY:-}" ] && ! late "bench gemm"; then
timeout 150 $B/blockq bench gemm --formats q4_0,q8_0,q4_K --shapes 14336x4096,4096x14336,6144x4096 --m 16,32,64,128,512 \
  --crossover > /tmp/o/gemm.txt 2>&1
cp /tmp/o/gemm.txt "$OUT/"
tail -32 /tmp/o/gemm.txt
fi
if want gemm && ! late "bench gemm --sweep"; then
timeout ${SWEEP_TIMEOUT:-240} $B/blockq bench gemm --sweep --formats ${SWEEP_FORMATS:-q4_0} --shapes ${SWEEP_SHAPES:-14336x4096} \
  --m ${SWEEP_M:-32,128,512} --sweep-kinds ${SWEEP_KINDS:-f32,int8} --samples 5 \
  > /tmp/o/gemm-sweep.txt 2>&1
cp /tmp/o/gemm-sweep.txt "$OUT/"
grep -E "int8| d |\* " /tmp/o/gemm-sweep.txt | head -70
fi
SW=${SW:-5,12,27,45,60,100,116,200,500,1000}
models=()
want small && models+=("smollm2-360m q8_0" "llama-3.2-1b q4_0")
want big && models+=("llama-3-8b q4_0")
[ -n "${MODELS:-}" ] && IFS=';' read -r -a models <<< "$MODELS"
cfgs=("--batch 128 --min-batch 128" " " "--batch 128 --min-batch 16" "--f32-gemm" "--batch 128 --min-batch 128")
[ -n "${CFGS+x}" ] && IFS=';' read -r -a cfgs <<< "$CFGS"
for m in "${models[@]}"; do
  set -- $m
  for cfg in "${cfgs[@]}"; do
    late "$1 [$cfg]" && continue
    t0=$SECONDS
    bin=$B/blockq c=$cfg cache=${BLOCKQ_CACHE_DIR:-$HOME/.cache/blockq}
    [[ $cfg == old:* ]] && { bin=$B/blockq_old c=${cfg#old:} cache=/tmp/o/cache-old; }
    BLOCKQ_CACHE_DIR=$cache timeout 150 $bin bench run --preset $1 --type $2 -p 27 -n 16 --samples 3 --prompt-sweep $SW $c > /tmp/o/run.txt 2>&1
    echo "== $1 $2 [$cfg] ($((SECONDS - t0)) s): $(grep -E '^(prompt |first tok)' /tmp/o/run.txt | tr -s ' ' | tr '\n' '|')"
    sed -n '/^prompt sweep/,/^model/p' /tmp/o/run.txt | grep -E '^ +[0-9]' | awk '{printf "%s:%s:%s ", $1, $2, $3}'; echo
    sed -n '/^prompt passes by kernel family/,/^model/p' /tmp/o/run.txt | grep -E '^ +[0-9]' | awk '{printf "%s:%s:%s/%s/%s/%s ", $1, $2, $4, $6, $8, $9}'; echo
    cat /tmp/o/run.txt >> /tmp/o/all-runs.txt
    cp /tmp/o/all-runs.txt "$OUT/"
  done
done
tar czf "$OUT/prompt.tgz" -C /tmp/o --exclude='*.gguf' .
