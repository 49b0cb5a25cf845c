#!/usr/bin/env bash
# Runs on the lent H200 (device tool): the decoder's own matvec shapes with
# the hooks it gives them (`bench matvec --hooks`), the plan's kernel against
# a sweep of workgroup shapes, then a table of the plan and the best variant
# of each case. Expects the carried folders that bench/h200.sh does.
# With MODELS=1 it only runs the tests of the matvec and model families, then
# `bench run` on the synthetic smollm2-360m, llama-3.2-1b and llama-3-8b with
# blockq and blockq_old (a build to compare with, if carried) in turn.
# Usage: OUT=... bench/h200_shapes.sh [SWEEP]
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=.devrun/build/bin
SWEEP=${1:-${SWEEP:-tpr=4,8,16,32;wg=128,256,512,1024;rpl=1,2}}
# format shape hooks: per layer, qkv (rope), o (acc), gate and up (silu), down (acc)
CASES=${CASES:-"q4_0 6144x4096 rope
q4_0 4096x4096 acc
q4_0 14336x4096 silu
q4_0 4096x14336 acc
q4_0 3072x2048 rope
q4_0 2048x2048 acc
q4_0 8192x2048 silu
q4_0 2048x8192 acc
q8_0 1600x960 rope
q8_0 960x960 acc
q8_0 2560x960 silu
q8_0 960x2560 acc"}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if [ -n "${MODELS:-}" ]; then
  timeout 240 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  timeout 240 $B/test_model --gtest_filter='-*Oracle*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  . bench/run_models.sh
  run_models "smollm2-360m q8_0 8
llama-3.2-1b q4_0 8
llama-3-8b q4_0 8" 2
  exit 0
fi
: > "$OUT/shapes.txt"
echo "$CASES" | while read -r f s h; do
  [ -z "$f" ] && continue
  for sw in "" "$SWEEP" "gx=1"; do
    args=(--formats "$f" --shapes "$s" --batch 1 --hooks "$h" ${BENCH_ARGS:-})
    [ -n "$sw" ] && args+=(--sweep "$sw")
    timeout 240 $B/blockq bench matvec "${args[@]}" 2>/dev/null | grep -E "^(device|[A-Za-z0-9_]+ +[0-9]+x)" |
      sed "s/^/$([ -z "$sw" ] && echo plan || echo sweep) /" >> "$OUT/shapes.txt"
  done
done
grep -m1 "device" "$OUT/shapes.txt"
printf '%-6s %-11s %-5s %9s %9s %9s  %s\n' format shape hooks plan_us best_us read_us "best variant"
grep -E "^(plan|sweep) [A-Za-z0-9_]+ +[0-9]+x" "$OUT/shapes.txt" | awk '
  { key = $2 " " $3 " " $5; us = $6 + 0
    if ($1 == "plan") { plan[key] = us; read[key] = $(NF - 2) }
    if (!(key in best) || us < best[key]) { best[key] = us; spec[key] = $10 }
    if (!(key in order)) { order[key] = ++n; keys[n] = key } }
  END { for (i = 1; i <= n; ++i) { k = keys[i]; split(k, p, " ")
    printf "%-6s %-11s %-5s %9.2f %9.2f %9s  %s\n", p[1], p[2], p[3], plan[k], best[k], read[k], spec[k] } }'
