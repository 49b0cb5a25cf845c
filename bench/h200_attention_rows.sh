#!/usr/bin/env bash
# Runs on the lent H200 (device tool): the prompt attention kernel (session
# 40). test_k_attention, then `bench attention --tokens` for three models'
# heads, prompt passes of TOKENS tokens ending at POSITIONS, under each
# variant of VARIANTS ("name|options"; "tok|--rows-min 0" is the per-token
# kernel; a name starting with "old" runs .devrun/build/bin/blockq_old, an
# earlier build, carried), in REPS alternating rounds; a table of µs by
# variant last.
# Expects the carried folders that bench/h200.sh does.
# Usage: OUT=... bench/h200_attention_rows.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export LD_LIBRARY_PATH=$PWD/.devrun/third_party/dawn/node_modules/bun-webgpu-linux-x64:$PWD/.devrun/lib
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=.devrun/build/bin
HEADS=${HEADS:-32/8x128,32/8x64,15/5x64}
POSITIONS=${POSITIONS:-511,1023,4095}
TOKENS=${TOKENS:-16,128,512}
REPS=${REPS:-1}
VARIANTS=${VARIANTS:-"rows|
tok|--rows-min 0
k16|--rows-keys 16
r16|--rows-rows 16
r64|--rows-rows 64 --rows-keys 16
wg256|--rows-wg 256"}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if [ -z "${SKIP_TESTS:-}" ]; then
  timeout 150 $B/test_k_attention > "$OUT/test_attention.log" 2>&1
  echo "test_k_attention exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_attention.log" | tr '\n' ' ')"
  grep -E "FAILED|Failure" "$OUT/test_attention.log" | head -5
fi
: > "$OUT/attention-rows.txt"
for rep in $(seq "$REPS"); do
  echo "$VARIANTS" | while IFS='|' read -r name args; do
    [ -z "$name" ] && continue
    bin=$B/blockq; [[ $name == old* ]] && bin=$B/blockq_old; [ -x "$B/blockq_$name" ] && bin=$B/blockq_$name
    timeout ${BENCH_TIMEOUT:-120} $bin bench attention --heads "$HEADS" --positions "$POSITIONS" --tokens "$TOKENS" \
      --samples ${SAMPLES:-7} $args 2>&1 | grep -E "^(device|[0-9]+/[0-9]+x|Error|error)" | sed "s|^|$name |" >> "$OUT/attention-rows.txt"
  done
done
grep -m1 "device" "$OUT/attention-rows.txt"
grep -iE " error" "$OUT/attention-rows.txt" | head -5
# Table: one row per heads, tokens and position, the median of the rounds for each variant (µs).
grep -E "^[A-Za-z0-9]+ [0-9]+/[0-9]+x" "$OUT/attention-rows.txt" | awk -v vars="$(echo "$VARIANTS" | cut -d'|' -f1 | tr '\n' ' ')" '
  { key = $2 " " $3 " " $4; v = $1; n = ++cnt[key, v]; us[key, v, n] = $6 + 0
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key } }
  END { nv = split(vars, vs, " "); printf "%-24s", "heads tokens position"; for (i = 1; i <= nv; ++i) printf " %9s", vs[i]; print ""
    for (k = 1; k <= nk; ++k) { printf "%-24s", keys[k]
      for (i = 1; i <= nv; ++i) { m = cnt[keys[k], vs[i]]; if (!m) { printf " %9s", "-"; continue }
        for (a = 1; a <= m; ++a) x[a] = us[keys[k], vs[i], a]
        for (a = 1; a <= m; ++a) for (b = a + 1; b <= m; ++b) if (x[b] < x[a]) { t = x[a]; x[a] = x[b]; x[b] = t }
        printf " %9.2f", (m % 2) ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2 }
      print "" } }'
