#!/usr/bin/env bash
# Runs on the lent H200 (device tool): the attention kernel's latency options
# at short contexts. Its tests, the registers of the default plans (vkstats),
# then `bench attention` for three models' heads under each variant of
# VARIANTS ("name|options", blockq_old when the name starts with "old"), in
# REPS alternating rounds, and a table of µs by variant last.
# With MODELS=1 it runs the model tests, then `bench run` on the synthetic
# smollm2-360m, llama-3.2-1b and llama-3-8b (RUNS: "preset type prompt" lines)
# with blockq and blockq_old in turn, instead.
# Expects the carried folders that bench/h200.sh does (spirv-tools among the
# .gl debs for vkstats). Usage: OUT=... bench/h200_attention.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=.devrun/build/bin
HEADS=${HEADS:-32/8x128,32/8x64,15/5x64}
POSITIONS=${POSITIONS:-40,128,256,1024,2048,4095}
REPS=${REPS:-2}
VARIANTS=${VARIANTS:-"plan|
old|
one|--tiers 2048:128
none|--tiers none
v16|--tiers 64:128:1:32:16,128:256:1:32:16,256:512:1:32:16,2048:128:1:32:16"}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if [ -n "${MODELS:-}" ]; then
  timeout 200 $B/test_model --gtest_filter='-*Oracle*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  . bench/run_models.sh
  run_models "${RUNS:-"smollm2-360m q8_0 8
llama-3.2-1b q4_0 8
llama-3.2-1b q4_0 500
llama-3-8b q4_0 8"}" "$REPS"
  exit 0
fi
timeout 120 $B/test_k_attention > "$OUT/test_attention.log" 2>&1
echo "test_k_attention exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_attention.log" | tr '\n' ' ')"
rm -rf "$OUT/shaders"
timeout 100 $B/blockq --dump-shaders "$OUT/shaders" bench attention --heads "$HEADS" --positions 40,4095 --samples 3 \
  > /dev/null 2>&1
[ -x $B/vkstats ] && PATH=/usr/bin:$PATH $B/vkstats "$OUT/shaders" 2>&1 | grep -iE "attention|regist" > "$OUT/regs.txt"
rm -rf "$OUT/shaders"
: > "$OUT/attention.txt"
for rep in $(seq "$REPS"); do
  echo "$VARIANTS" | while IFS='|' read -r name args; do
    [ -z "$name" ] && continue
    bin=blockq; case "$name" in old*) bin=blockq_old ;; esac
    timeout 100 $B/$bin bench attention --heads "$HEADS" --positions "$POSITIONS" $args 2>&1 |
      grep -E "^(device|[0-9]+/[0-9]+x)" | sed "s|^|$name |" >> "$OUT/attention.txt"
  done
done
grep -m1 "device" "$OUT/attention.txt"
cat "$OUT/regs.txt" 2>/dev/null
# Table: one row per heads and position, the median of the rounds for each variant (µs).
grep -E "^[A-Za-z0-9]+ [0-9]+/[0-9]+x" "$OUT/attention.txt" | awk -v vars="$(echo "$VARIANTS" | cut -d'|' -f1 | tr '\n' ' ')" '
  { key = $2 " " $3; v = $1; n = ++cnt[key, v]; us[key, v, n] = $5 + 0
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key } }
  END { nv = split(vars, vs, " "); printf "%-18s", "heads position"; for (i = 1; i <= nv; ++i) printf " %8s", vs[i]; print ""
    for (k = 1; k <= nk; ++k) { printf "%-18s", keys[k]
      for (i = 1; i <= nv; ++i) { m = cnt[keys[k], vs[i]]; if (!m) { printf " %8s", "-"; continue }
        for (a = 1; a <= m; ++a) x[a] = us[keys[k], vs[i], a]
        for (a = 1; a <= m; ++a) for (b = a + 1; b <= m; ++b) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
        printf " %8.2f", (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2 }
      print "" } }'
