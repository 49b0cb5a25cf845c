#!/usr/bin/env bash
# Runs on the lent H200 (device tool): the GPU test suite, `blockq info`,
# the matvec benchmark (and a variant sweep), and ggml's test-backend-ops
# (Vulkan) on the same shapes, printing a short table last. Mode `final`:
# every kernel contract test, the gather/matvec contract benches, the matvec
# 8B shapes, GEMM and the end-to-end run benchmark. Expects the
# stripped binaries and Dawn under .devrun/ and the Vulkan loader debs in
# .gl/ (see docs/perf/README.md). Usage: bench/h200.sh [quick|sweep|splitk|full|tests|final|arena|int8|gemm6|breakdown|steps7|stage8|batch9|kquant10|batch11|pipe12|gx13|pq14|st15|b16|bs17|blk18|xq19|regs|attention|host|gensample]
set -u
mode=${1:-full}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=.devrun/build/bin
# The matvec and model tests with time limits, one result line each.
mv_tests() {
  timeout 300 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  timeout 200 $B/test_model --gtest_filter='-*Oracle*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/nvidia-smi.txt"
$B/blockq info --json > "$OUT/info.json" 2> "$OUT/info.err" || cat "$OUT/info.err"
grep -E '"description"|"backend"|maxStorageBufferBindingSize"|maxComputeWorkgroupStorageSize|subgroupM' "$OUT/info.json"
if [ "$mode" = tests ] || [ "$mode" = full ]; then
  $B/test_gpu > "$OUT/test_gpu.log" 2>&1; echo "test_gpu exit $?"; tail -3 "$OUT/test_gpu.log"
  BLOCKQ_LIMITS=low-end $B/test_gpu > "$OUT/test_gpu_lowend.log" 2>&1; echo "test_gpu low-end exit $?"
  $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1; echo "test_k_matvec exit $?"; grep -E "PASSED|FAILED" "$OUT/test_matvec.log" | head -5
fi
if [ "$mode" = matvec ]; then
  for lim in ${MV_TEST_PROFILES-adapter low-end}; do
    BLOCKQ_LIMITS=$([ $lim = low-end ] && echo low-end) $B/test_k_matvec > "$OUT/test_matvec_$lim.log" 2>&1
    echo "test_k_matvec ($lim) exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec_$lim.log" | head -3 | tr '\n' ' ')"
  done
  # The same cases without the clock warm-up, to show what it changes.
  BLOCKQ_WARM_MS=0 $B/blockq bench matvec --formats q8_0,q4_0,q4_K,f16 --shapes 4096x14336 --batch 1 \
    2>/dev/null > "$OUT/matvec_cold.txt"
  $B/blockq bench matvec --formats q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K,iq4_nl,iq4_xs,f16 --shapes 4096x14336,14336x4096 \
    --batch 1,8 2>/dev/null > "$OUT/matvec_default.txt"
  timeout 200 $B/blockq bench matvec --formats q8_0,q4_0,q4_K,q6_K,f16 --shapes 4096x14336,14336x4096 --batch 1 \
    --sweep "${SWEEP1:-wg=256,512,1024;tpr=16,32;unroll=1,2;rpl=1,2}" 2>/dev/null > "$OUT/sweep_b1.txt"
  timeout 150 $B/blockq bench matvec --formats q8_0,q4_0,q4_K --shapes 4096x14336 --batch 8 \
    --sweep "${SWEEP8:-wg=256,512,1024;tpr=8,16,32;rpl=1,2,4}" 2>/dev/null > "$OUT/sweep_b8.txt"
  for f in sweep_b1 sweep_b8; do
    echo "best of $f:"
    grep -E "^[a-z]" "$OUT/$f.txt" | sort -k1,1 -k2,2 -k3,3n -k4,4n | awk '{key=$1" "$2" "$3; if (key!=last) {print $1, $2, "b"$3, $4" us", $7, $8; last=key}}'
  done
  echo "cold:"; grep -E "^(device|[a-z])" "$OUT/matvec_cold.txt" | awk '{print $1, $2, $3, $4, $7}'
  echo "default:"; grep -E "^(device|[a-z])" "$OUT/matvec_default.txt" | awk '{print $1, $2, $3, $4, $7}'
fi
if [ "$mode" = round ]; then
  # One tuning round: GEMM tilings, the end-to-end run, matvec sweeps.
  timeout 120 $B/blockq bench gemm --sweep --formats q8_0,q4_0 --shapes 4096x14336,14336x4096 --m 512 --samples 5 \
    2>/dev/null > "$OUT/gemm_sweep.txt"
  for p in "smollm2-360m q8_0" "llama-3.2-1b q4_0"; do
    set -- $p
    timeout 150 $B/blockq bench run --preset $1 --type $2 2>&1 | grep -v -E "XDG|Warning|While|InitializeImpl" \
      >> "$OUT/bench_run.txt"
  done
  MV_TEST_PROFILES=${MV_TEST_PROFILES-adapter} SWEEP1=${SWEEP1:-wg=512,1024;tpr=16,32;unroll=1,2;rpl=1,2} \
    SWEEP8=${SWEEP8:-wg=256,512,1024;tpr=16,32;rpl=2,4;tokens=4,8} bash "$0" matvec
  echo "gemm:"; grep -E "^\S" "$OUT/gemm_sweep.txt" | head -40
  echo "run:"; grep -E "^(model|prompt|generation|dispatches|memory|  [a-z])" "$OUT/bench_run.txt"
fi
if [ "$mode" = check ]; then
  # A short confirmation run: the end-to-end benchmark, the matvec 8B shapes
  # for the three target formats, then the matvec parity tests.
  for p in "smollm2-360m q8_0" "llama-3.2-1b q4_0"; do
    set -- $p
    timeout 100 $B/blockq bench run --preset $1 --type $2 2>&1 | grep -v -E "XDG|Warning|While|InitializeImpl" \
      | tee -a "$OUT/bench_run.txt" | grep -E "^(prompt|generation|dispatches|memory|  total)"
  done
  $B/blockq bench matvec --formats q8_0,q4_0,q4_K --shapes 4096x14336,14336x4096 --batch 1,8 2>/dev/null \
    | tee "$OUT/matvec_check.txt" | grep -E "^(device|[a-z])" | awk '{print $1, $2, $3, $4, $7}'
  timeout 60 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1; echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
fi
if [ "$mode" = sweep ]; then
  tag=${TAG:-sweep}
  $B/blockq bench matvec --formats ${FORMATS:-q8_0,q4_0,q4_K} --shapes ${SHAPES:-4096x14336,14336x4096} \
    --batch ${BATCH:-1} --sweep "${SWEEP:-sg=1;wg=256,512;tpr=4,8,16;unroll=2,4}" 2>/dev/null > "$OUT/$tag.txt"
  # the best variant of each (format, shape, batch), and the spread
  grep -E "^[a-z]" "$OUT/$tag.txt" | sort -k1,1 -k2,2 -k3,3n -k4,4n | awk '{key=$1" "$2" "$3; if (key!=last) {print $1, $2, "b"$3, $4" us", $7, $8; last=key}}'
fi
if [ "$mode" = splitk ]; then
  # Split-k: its parity tests on this adapter, then batch 1 and 8 sweeps over
  # the split count; the best variant per (format, shape, batch, splits).
  timeout 120 $B/test_k_matvec --gtest_filter='*SplitK*:*Parity*' > "$OUT/test_splitk.log" 2>&1
  echo "matvec split-k and parity tests exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_splitk.log" | tr '\n' ' ')"
  FORMATS=${SK_FORMATS1:-q8_0,q4_0,q4_K,q6_K,f16,q5_K} SHAPES=4096x14336,14336x4096 BATCH=1 TAG=sk_b1 \
    SWEEP=${SK_SWEEP1:-wg=256,512,1024;tpr=16,32;splits=1,2,4,8} bash "$0" sweep > /dev/null
  FORMATS=${SK_FORMATS8:-q8_0,q4_0,q4_K} SHAPES=4096x14336 BATCH=8 TAG=sk_b8 \
    SWEEP=${SK_SWEEP8:-wg=256,512;tpr=16,32;rpl=2,4;tokens=4,8;splits=1,2,4,8} bash "$0" sweep > /dev/null
  for f in sk_b1 sk_b8; do
    echo "$f (format shape batch splits: best us, of bw, kernel):"
    grep -E "^[a-z]" "$OUT/$f.txt" | awk '{sk=1; if (match($8, /\.sk[0-9]+/)) sk=substr($8, RSTART+3, RLENGTH-3); print $1, $2, $3, sk, $4, $7, $8}' \
      | sort -k1,1 -k2,2 -k3,3n -k4,4n -k5,5n | awk '{key=$1" "$2" "$3" "$4; if (key!=last) {print; last=key}}'
  done
fi
if [ "$mode" = full ] || [ "$mode" = quick ]; then
  shapes="49152x960,2560x960,14336x4096,4096x14336"
  [ "$mode" = quick ] && shapes="4096x14336"
  $B/blockq bench matvec --shapes "$shapes" --batch 1,8 --json 2>/dev/null > "$OUT/matvec.json"
  $B/blockq bench matvec --shapes "$shapes" --batch 1,8 2>/dev/null | tee "$OUT/matvec.txt" | tail -100
fi
if [ -f .devrun/anchors/tbo-vk.xz ] && { [ "$mode" = full ] || [ "$mode" = ggml ]; }; then
  xz -dkc .devrun/anchors/tbo-vk.xz > /tmp/tbo-vk && chmod +x /tmp/tbo-vk
  /tmp/tbo-vk perf -b Vulkan0 -o MUL_MAT -p 'type_a=(q8_0|q4_0|q4_1|q5_0|q5_1|q2_K|q3_K|q4_K|q5_K|q6_K|iq4_nl|iq4_xs|f16),type_b=f32,m=4096,n=(1|8),k=14336' \
    2>&1 | grep -E "MUL_MAT" | tee "$OUT/ggml_vulkan.txt"
fi
if [ "$mode" = final ]; then
  # The record for docs/perf, most important first: matvec (every format, both
  # 8B shapes, batch 1 and 8), the end-to-end run, GEMM, ggml's figures on the
  # same shapes, then the parity tests on this adapter.
  $B/blockq bench matvec --formats q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K,iq4_nl,iq4_xs,f16 --shapes 4096x14336,14336x4096 \
    --batch 1,8 2>/dev/null | tee "$OUT/matvec_final.txt" | grep -E "^(device|[a-z])" | awk '{print $1, $2, $3, $4, $7}'
  for p in "smollm2-360m q8_0" "llama-3.2-1b q4_0"; do
    set -- $p
    timeout 120 $B/blockq bench run --preset $1 --type $2 2>&1 | grep -v -E "XDG|Warning|While|InitializeImpl" \
      | tee -a "$OUT/bench_run.txt" | grep -E "^(prompt|generation|  total)"
  done
  timeout 100 $B/blockq bench gemm --formats q8_0,q4_0 --m 64,512,2048 2>/dev/null | tee "$OUT/gemm.txt" | tail -14
  if [ -f .devrun/anchors/tbo-vk.xz ]; then
    xz -dkc .devrun/anchors/tbo-vk.xz > /tmp/tbo-vk && chmod +x /tmp/tbo-vk
    timeout 60 /tmp/tbo-vk perf -b Vulkan0 -o MUL_MAT -p 'type_a=(q8_0|q4_0|q4_1|q5_0|q5_1|q2_K|q3_K|q4_K|q5_K|q6_K|iq4_nl|iq4_xs|f16),type_b=f32,m=4096,n=(1|8),k=14336' \
      2>&1 | grep -E "MUL_MAT" > "$OUT/ggml_vulkan.txt"; wc -l < "$OUT/ggml_vulkan.txt"
  fi
  timeout 100 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1; echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  timeout 80 $B/test_k_gemm > "$OUT/test_gemm.log" 2>&1; echo "test_k_gemm exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_gemm.log" | tr '\n' ' ')"
fi
if [ "$mode" = arena ]; then
  # The weight arena and the row gather: their tests on this adapter (and the
  # low-end profile), the model's GPU tests (the llama.cpp oracle needs node,
  # which this machine lacks), the end-to-end run (memory, tokens/s) and the
  # row gather of the two presets' token tables.
  $B/test_gpu --gtest_filter='Arena*' > "$OUT/test_arena.log" 2>&1; echo "arena tests exit $?"
  BLOCKQ_LIMITS=low-end $B/test_gpu --gtest_filter='Arena*' > "$OUT/test_arena_lowend.log" 2>&1; echo "arena tests low-end exit $?"
  timeout 120 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1; echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  BLOCKQ_LIMITS=low-end timeout 60 $B/test_k_matvec --gtest_filter='*Rows*' > "$OUT/test_rows_lowend.log" 2>&1
  echo "rows tests low-end exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_rows_lowend.log" | tr '\n' ' ')"
  timeout 150 $B/test_model --gtest_filter='-*Oracle*' > "$OUT/test_model.log" 2>&1; echo "test_model (no oracle) exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  for p in "smollm2-360m q8_0" "llama-3.2-1b q4_0"; do
    set -- $p
    timeout 120 $B/blockq bench run --preset $1 --type $2 2>&1 | grep -v -E "XDG|Warning|While|InitializeImpl" \
      | tee -a "$OUT/bench_run.txt" | grep -E "^(memory|prompt|generation|first|  total|  embed)"
  done
  $B/blockq bench matvec --formats q8_0 --shapes 49152x960 --batch 1,8 --rows 2>/dev/null > "$OUT/rows.txt"
  $B/blockq bench matvec --formats q4_0 --shapes 128256x2048 --batch 1,8 --rows 2>/dev/null >> "$OUT/rows.txt"
  grep -E "^[a-z]" "$OUT/rows.txt" | awk '{print $1, $2, $3, $4, $7, $8}'
fi
if [ "$mode" = int8 ]; then
  # Int8 activations against f32 (session 5): the int8 parity tests, both paths
  # on the 8B shapes twice, MatMulNBits 4-bit, the end-to-end run with and
  # with --f32-activations, and ggml-Vulkan on the same shape.
  timeout 100 $B/test_k_matvec --gtest_filter='MatvecInt8.*' > "$OUT/test_i8.log" 2>&1
  echo "int8 tests exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_i8.log" | tr '\n' ' ')"
  for r in 1 2; do
    timeout 150 $B/blockq bench matvec --formats q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K,onnx4 \
      --shapes 4096x14336,14336x4096 --batch 1,8 --sweep "i8=0,1" 2>/dev/null > "$OUT/i8_ab_run$r.txt"
  done
  for p in "smollm2-360m q8_0" "llama-3.2-1b q4_0"; do
    set -- $p
    for f in "--f32-activations" ""; do
      echo "== $1 $2 $f" >> "$OUT/bench_run.txt"
      timeout 100 $B/blockq bench run --preset $1 --type $2 $f 2>&1 | grep -v -E "XDG|Warning|While|InitializeImpl" \
        >> "$OUT/bench_run.txt"
    done
  done
  if [ -f .devrun/anchors/tbo-vk.xz ]; then
    xz -dkc .devrun/anchors/tbo-vk.xz > /tmp/tbo-vk && chmod +x /tmp/tbo-vk
    timeout 90 /tmp/tbo-vk perf -b Vulkan0 -o MUL_MAT \
      -p 'type_a=(q8_0|q4_0|q4_1|q5_0|q5_1|q2_K|q3_K|q4_K|q5_K|q6_K|iq4_nl|iq4_xs),type_b=f32,m=4096,n=(1|8),k=14336' 2>&1 \
      | grep -E "MUL_MAT" | sed 's/\x1b\[[0-9;]*m//g' > "$OUT/ggml_vulkan.txt"
  fi
  echo "format shape batch f32/int8 (run 1) | (run 2)"
  paste <(grep -E "^[a-z]" "$OUT/i8_ab_run1.txt" | awk '{print $1, $2, $3, $4}') \
        <(grep -E "^[a-z]" "$OUT/i8_ab_run2.txt" | awk '{print $4}')
  grep -E "^(==|generation|  total)" "$OUT/bench_run.txt"
fi
if [ "$mode" = gemm6 ]; then
  # The GEMM defaults of session 6 (8-element paired steps, k split below 512
  # tiles): gemm and prompt-model parity, then default against tuned on every
  # format at m = 512 and on q8_0/q4_0 at m = 64 and 2048.
  timeout 120 $B/test_k_gemm > "$OUT/test_gemm.log" 2>&1
  echo "test_k_gemm exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_gemm.log" | tr '\n' ' ')"
  timeout 90 $B/test_model --gtest_filter='*GpuPrompt*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  timeout 360 $B/blockq bench gemm --formats q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K,iq4_nl,iq4_xs,f16 --shapes 4096x14336,14336x4096 --m 512 \
    --samples 5 2>/dev/null > "$OUT/gemm512.txt"
  timeout 150 $B/blockq bench gemm --formats q8_0,q4_0 --shapes 4096x14336,14336x4096 --m 64,2048 --samples 3 \
    2>/dev/null > "$OUT/gemm64_2048.txt"
  cat "$OUT/gemm512.txt" "$OUT/gemm64_2048.txt" | grep -v "^ *{"
fi
if [ "$mode" = breakdown ]; then
  # Session 7: where a matvec's time goes. The timing probes cut the x
  # staging (probe 1), the lane loop (2) or both (3) out of the planned
  # kernel, or reduce the loop to the weight loads (4). Parity first.
  timeout 120 $B/test_k_matvec --gtest_filter='*Probe*:MatvecInt8.*' > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  row() { grep -E "^[a-z]" "$1" | awk '{print $1, $2, "b"$3, $4, $7, $10}' | sed 's/matvec\.//; s/\.g65535//; s/n[0-9]*\.k[0-9]*\.m[0-9]*\.//'; }
  timeout 150 $B/blockq bench matvec --formats q8_0,q4_0,q4_K --shapes 4096x14336,14336x4096 --batch 1,8 \
    --sweep "i8=1;probe=0,1,2,3,4" 2>/dev/null > "$OUT/probe_i8.txt"
  timeout 100 $B/blockq bench matvec --formats f16,q8_0 --shapes 4096x14336,14336x4096 --batch 1,8 \
    --sweep "i8=0;probe=0,1,2,3,4" 2>/dev/null > "$OUT/probe_f32.txt"
  # More loads in flight per lane: the loads-only kernel and the plan, unrolled.
  timeout 60 $B/blockq bench matvec --formats q8_0 --shapes 4096x14336 --batch 1 \
    --sweep "i8=1;probe=4,0;unroll=1,2,3" 2>/dev/null > "$OUT/probe_mlp.txt"
  for f in probe_i8 probe_f32 probe_mlp; do echo "== $f"; row "$OUT/$f.txt"; done
fi
if [ "$mode" = steps7 ]; then
  # Session 7's default (constant lane steps with int8 activations): parity,
  # the int8 model path, then the plan with and without it on the 8B shapes,
  # in two processes (this machine's first rows vary between processes).
  timeout 150 $B/test_k_matvec --gtest_filter='MatvecInt8.*:*ConstantSteps*:*Interleaved*:*Probe*:*SplitK*' \
    > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  timeout 90 $B/test_model --gtest_filter='*Int8*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  for r in 1 2; do
    timeout 150 $B/blockq bench matvec --formats q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K --shapes 4096x14336,14336x4096 \
      --batch 1,8 --sweep "i8=1;cs=1,0" 2>/dev/null > "$OUT/steps_run$r.txt"
    echo "== run $r"; grep -E "^[a-z]" "$OUT/steps_run$r.txt" | awk '{print $1, $2, "b"$3, $4, $7, $10}'
  done
fi
if [ "$mode" = stage8 ]; then
  # Session 8: the plain read's shape against the same bytes (is the grid the
  # gap?), the loads with and without the staging (probes 4 and 7), the
  # quad-lane int8 staging (qs) and two 16-byte units a step (unroll) against
  # the old defaults, the final defaults, and the parity tests.
  timeout 200 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  timeout 120 $B/test_model --gtest_filter='*Int8*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  timeout 100 $B/blockq bench matvec --read-sizes 59.5 --read-shapes 256x16,256x30,1024x8,1024x30,1024x60 \
    2>/dev/null > "$OUT/read_shapes.txt"
  timeout 100 $B/blockq bench matvec --formats q8_0,q8_0 --shapes 4096x14336 --batch 1 \
    --sweep "i8=1;probe=0,4,7;wg=512,1024" 2>/dev/null > "$OUT/probes.txt"
  timeout 150 $B/blockq bench matvec --formats q8_0,q8_0,q4_K,q5_K --shapes 4096x14336,14336x4096 --batch 1,8 \
    --sweep "i8=1;qs=0,1" 2>/dev/null > "$OUT/quad.txt"
  timeout 150 $B/blockq bench matvec --formats q4_0,q4_0,q4_1,q5_0,q5_1,onnx4 --shapes 4096x14336,14336x4096 \
    --batch 1,8 --sweep "i8=1;unroll=1,2" 2>/dev/null > "$OUT/unroll.txt"
  timeout 200 $B/blockq bench matvec --formats q8_0,q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K,onnx4 \
    --shapes 4096x14336,14336x4096 --batch 1,8 --sweep "i8=1" 2>/dev/null > "$OUT/default.txt"
  timeout 100 $B/blockq bench matvec --formats f16,f16 --shapes 4096x14336,14336x4096 --batch 1,8 \
    2>/dev/null | grep -E "^[a-z]" >> "$OUT/default.txt"
  cat "$OUT/read_shapes.txt"
  for f in probes quad unroll default; do
    echo "== $f"; grep -E "^[a-z]" "$OUT/$f.txt" | awk '{print $1, $2, "b"$3, $4, $7, $8}'
  done
fi
if [ "$mode" = batch9 ]; then
  # Session 9: the split batch plan and the float formats' 8-element units,
  # each default against the old plan (splits=1) in alternating processes
  # (the first rows of a process are often slow here, so each lists its
  # first format twice), then the parity tests (the oracle tests need
  # node-llama-cpp, which the device lacks).
  timeout 200 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  timeout 200 $B/test_model --gtest_filter='-*Oracle*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  for r in 1 2; do
    for sw in "i8=1" "i8=1;splits=1"; do
      timeout 60 $B/blockq bench matvec --formats q8_0,q8_0,q4_K,q5_K,q6_K --shapes 4096x14336 --batch 8 \
        --sweep "$sw" 2>/dev/null | grep -E "^[a-z]" >> "$OUT/batch_i8.txt"
    done
    for sw in "" "splits=1"; do
      timeout 60 $B/blockq bench matvec --formats f16,f16,bf16,f32 --shapes 4096x14336 --batch 8 \
        ${sw:+--sweep "$sw"} 2>/dev/null | grep -E "^[a-z]" >> "$OUT/batch_f.txt"
    done
  done
  timeout 100 $B/blockq bench matvec --formats f16,f16,bf16,f32 --shapes 2560x960,49152x960,4096x14336,14336x4096 \
    --batch 1,8 2>/dev/null > "$OUT/float_default.txt"
  for f in batch_i8 batch_f float_default; do
    echo "== $f"; grep -E "^[a-z]" "$OUT/$f.txt" | awk '{print $1, $2, "b"$3, $4, $8}'
  done
fi
if [ "$mode" = kquant10 ]; then
  # Session 10: the K-quant batch lanes against the old ones (forced), in
  # alternating processes that list each format three times; the plain reads
  # by size (the per-call ceiling of each format's bytes); the parity tests.
  # The scale-decode and unpack2x16float comparisons need a build of the
  # previous commit as blockq_old (docs/perf/2026-12-01-session10-h200.md).
  for r in 1 2; do
    for sw in "default=i8=1" "old=i8=1;tpr=8;rpl=4;tokens=4;wg=512"; do
      timeout 60 $B/blockq bench matvec --formats q4_K,q4_K,q4_K,q5_K,q5_K,q5_K --shapes 14336x4096 --batch 8 \
        --sweep "${sw#*=}" 2>/dev/null | grep -E "^[a-z]" | sed "s/^/${sw%%=*} /" >> "$OUT/k8_short.txt"
    done
    for sw in "default=i8=1" "old=i8=1;tpr=8;rpl=4;tokens=8;splits=8;wg=512"; do
      timeout 60 $B/blockq bench matvec --formats q4_K,q4_K,q4_K,q5_K,q5_K,q5_K --shapes 4096x14336 --batch 8 \
        --sweep "${sw#*=}" 2>/dev/null | grep -E "^[a-z]" | sed "s/^/${sw%%=*} /" >> "$OUT/k8_long.txt"
    done
    if [ -x $B/blockq_old ]; then
      for b in blockq blockq_old; do
        timeout 100 $B/$b bench matvec --formats q4_K,q4_K,q5_K,q5_K --shapes 4096x14336,14336x4096 --batch 1,8 \
          --sweep "i8=1" 2>/dev/null | grep -E "^[a-z]" | sed "s/^/$b /" >> "$OUT/kscale.txt"
        timeout 60 $B/$b bench matvec --formats f16,f16 --shapes 4096x14336,14336x4096 --batch 1,8 \
          2>/dev/null | grep -E "^[a-z]" | sed "s/^/$b /" >> "$OUT/f16.txt"
      done
    fi
  done
  timeout 60 $B/blockq bench matvec --read-sizes 0.0625,1,8,31.6,38.6,46,59.5,112,1024 2>/dev/null > "$OUT/reads.txt"
  timeout 200 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  for f in k8_short k8_long kscale f16; do
    [ -f "$OUT/$f.txt" ] && { echo "== $f"; awk '{print $1, $2, $3, "b"$4, $5}' "$OUT/$f.txt"; }
  done
  echo "== reads"; cat "$OUT/reads.txt"
fi
if [ "$mode" = batch11 ]; then
  # Session 11: the 16-slice batch plan of Q8_0, Q4_K and Q5_K, the lanes of
  # Q5_0/Q5_1 splits, the split K-quant batches over k = 4096 and the quad
  # staging of Q4_0/Q4_1/Q5_0/Q5_1, each against the old choice (forced), in
  # alternating processes; then the parity tests
  # (docs/perf/2026-12-01-session11-h200.md).
  for r in 1 2; do
    for sw in "default=i8=1" "old8=i8=1;tokens=8;splits=8;tpr=8;rpl=4;wg=512"; do
      timeout 60 $B/blockq bench matvec --formats q8_0,q8_0 --shapes 4096x14336 --batch 8 --sweep "${sw#*=}" \
        2>/dev/null | grep -E "^[a-z]" | sed "s/^/${sw%%=*} /" >> "$OUT/split16.txt"
    done
    for sw in "default=i8=1" "old8=i8=1;tokens=8;splits=8;tpr=4;rpl=2;wg=512"; do
      timeout 60 $B/blockq bench matvec --formats q4_K,q4_K,q5_K,q5_K --shapes 4096x14336 --batch 8 --sweep "${sw#*=}" \
        2>/dev/null | grep -E "^[a-z]" | sed "s/^/${sw%%=*} /" >> "$OUT/split16.txt"
    done
    for sw in "default=i8=1" "old=i8=1;tokens=8;splits=8;tpr=8;rpl=4;wg=512"; do
      timeout 60 $B/blockq bench matvec --formats q5_0,q5_1,q5_0,q5_1 --shapes 4096x14336 --batch 8 --sweep "${sw#*=}" \
        2>/dev/null | grep -E "^[a-z]" | sed "s/^/${sw%%=*} /" >> "$OUT/split16.txt"
    done
    for sw in "default=i8=1" "old=i8=1;splits=1;tokens=4;tpr=4;rpl=2;wg=512"; do
      timeout 60 $B/blockq bench matvec --formats q4_K,q5_K,q6_K,q4_K,q5_K,q6_K --shapes 14336x4096 --batch 8 \
        --sweep "${sw#*=}" 2>/dev/null | grep -E "^[a-z]" | sed "s/^/${sw%%=*} /" >> "$OUT/split16.txt"
    done
    timeout 100 stdbuf -oL $B/blockq bench matvec --formats q4_0,q4_1,q5_0,q5_1 --shapes 4096x14336,14336x4096 \
      --batch 1,8 --sweep "i8=1;qs=0,1" 2>/dev/null | grep -E "^[a-z]" >> "$OUT/quad.txt"
  done
  timeout 240 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  echo "== split16"; awk '{print $1, $2, $3, "b"$4, $5}' "$OUT/split16.txt"
  echo "== quad (v16: plain staging, v48: quad)"
  perl -ne '@a=split; ($v)=/(\.v\d+)\s/; print "$a[0] $a[1] b$a[2] $a[3] $v\n"' "$OUT/quad.txt"
fi
if [ "$mode" = pipe12 ]; then
  # Session 12: the pipelined lane loop (sweep key pl) against the plain one
  # for the formats that have it, at the 8B shapes, two processes; then its
  # parity tests (docs/perf/2026-12-01-session12-h200.md).
  for r in 1 2; do
    timeout 150 stdbuf -oL $B/blockq bench matvec --formats q4_K,q5_K,q6_K,q8_0,q4_0 --shapes 4096x14336,14336x4096 \
      --batch 1,8 --sweep "i8=1;pl=0,1" 2>/dev/null | grep -E "^[a-z]" >> "$OUT/pipe.txt"
  done
  timeout 240 $B/test_k_matvec --gtest_filter='*Pipelin*:*Plan*' > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  echo "== pipe (v64 bit: pipelined)"
  perl -ne '@a=split; ($v)=/(\.v\d+)\s/; print "$a[0] $a[1] b$a[2] $a[3] $v\n"' "$OUT/pipe.txt"
fi
if [ "$mode" = gx13 ]; then
  # Session 13: the float formats at batch 1 with x read from global memory
  # (the plan's default) against the staged plan (gx=0), alternating in
  # three processes each, next to ggml-Vulkan's F16/BF16 (if tbo-vk.xz is in
  # .devrun/anchors); then the parity tests (docs/perf/2026-12-02-session13-h200.md).
  [ -f .devrun/anchors/tbo-vk.xz ] && (cd .devrun/anchors && xz -dkf tbo-vk.xz && chmod +x tbo-vk)
  for r in 1 2 3; do
    for gx in 1 0; do
      timeout 150 stdbuf -oL $B/blockq bench matvec --formats f16,bf16,f32 --shapes 4096x14336,14336x4096 \
        --batch 1 --sweep "gx=$gx" 2>/dev/null | grep -E "^[a-z]" >> "$OUT/gx_$gx.txt"
    done
    [ -x .devrun/anchors/tbo-vk ] && .devrun/anchors/tbo-vk perf -b Vulkan0 -o MUL_MAT \
      -p 'type_a=(f16|bf16),type_b=f32,m=4096,n=1,k=14336' 2>&1 | grep MUL_MAT >> "$OUT/ggml.txt"
  done
  timeout 240 $B/test_k_matvec --gtest_filter='*GlobalX*:*Plan*' > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  for gx in 1 0; do echo "== gx=$gx"; awk '{print $1, $2, $4}' "$OUT/gx_$gx.txt"; done
  [ -f "$OUT/ggml.txt" ] && { echo "== ggml-Vulkan"; sed 's/,bs=.*://' "$OUT/ggml.txt" | awk '{print $1, $(NF-9), $(NF-8)}'; }
fi
if [ "$mode" = pq14 ]; then
  # Session 14: int8 activations at batch 1 with x quantized by a kernel of
  # its own and read from global memory (the plan's default for Q8_0, Q5_0
  # and Q5_1 over k >= 8192; Q4_1 keeps the staging) against gx=0,
  # alternating in two processes each, next to ggml-Vulkan's Q8_0 (if
  # tbo-vk.xz is in .devrun/anchors); then the parity tests
  # (docs/perf/2026-12-02-session14-h200.md).
  [ -f .devrun/anchors/tbo-vk.xz ] && (cd .devrun/anchors && xz -dkf tbo-vk.xz && chmod +x tbo-vk)
  for r in 1 2; do
    for gx in 1 0; do
      sw="i8=1"; [ $gx = 0 ] && sw="i8=1;gx=0"
      timeout 150 stdbuf -oL $B/blockq bench matvec --formats q8_0,q4_1,q5_0,q5_1 --shapes 4096x14336 \
        --batch 1 --sweep "$sw" 2>/dev/null | grep -E "^[a-z]" >> "$OUT/pq_$gx.txt"
    done
    [ -x .devrun/anchors/tbo-vk ] && .devrun/anchors/tbo-vk perf -b Vulkan0 -o MUL_MAT \
      -p 'type_a=q8_0,type_b=f32,m=4096,n=1,k=14336' 2>&1 | grep MUL_MAT >> "$OUT/ggml.txt"
  done
  timeout 400 $B/test_k_matvec --gtest_filter='*GlobalX*:*Plan*:MatvecInt8.*' > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  for gx in 1 0; do echo "== gx=$gx"; awk '{print $1, $2, $4}' "$OUT/pq_$gx.txt"; done
  [ -f "$OUT/ggml.txt" ] && awk '{print "ggml-Vulkan q8_0", $(NF-9), $(NF-8)}' "$OUT/ggml.txt"
fi
if [ "$mode" = st15 ]; then
  # Session 15: the staged int8 kernels at batch 1 with the row store from
  # registers (Q4_0, Q4_K, Q5_K), three processes, next to ggml-Vulkan's
  # Q4_0 and Q4_K (if tbo-vk.xz is in .devrun/anchors); then the matvec
  # tests (docs/perf/2026-12-02-session15-h200.md).
  [ -f .devrun/anchors/tbo-vk.xz ] && (cd .devrun/anchors && xz -dkf tbo-vk.xz && chmod +x tbo-vk)
  for r in 1 2 3; do
    timeout 150 stdbuf -oL $B/blockq bench matvec --formats q4_0,q4_K,q5_K --shapes 4096x14336,14336x4096 \
      --batch 1 --sweep "i8=1" 2>/dev/null | grep -E "^[a-z]" >> "$OUT/st.txt"
    [ -x .devrun/anchors/tbo-vk ] && .devrun/anchors/tbo-vk perf -b Vulkan0 -o MUL_MAT \
      -p 'type_a=(q4_0|q4_K),type_b=f32,m=4096,n=1,k=14336' 2>&1 | grep MUL_MAT >> "$OUT/ggml.txt"
  done
  timeout 400 $B/test_k_matvec > "$OUT/test_matvec.log" 2>&1
  echo "test_k_matvec exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_matvec.log" | tr '\n' ' ')"
  echo "== staged"; awk '{print $1, $2, $4, $7}' "$OUT/st.txt"
  [ -f "$OUT/ggml.txt" ] && { echo "== ggml-Vulkan"; sed 's/,bs=.*://' "$OUT/ggml.txt" | awk '{print $1, $(NF-9), $(NF-8)}'; }
fi
if [ "$mode" = b16 ]; then
  # Session 16: batches of 8 over long rows with x pre-quantized (Q4_0, Q5_0,
  # Q5_1) against the plans before (gx=0), alternating, three processes each,
  # next to ggml-Vulkan's batch-8 figures (if tbo-vk.xz is in
  # .devrun/anchors); then the matvec and model tests
  # (docs/perf/2026-12-02-session16-h200.md).
  [ -f .devrun/anchors/tbo-vk.xz ] && (cd .devrun/anchors && xz -dkf tbo-vk.xz && chmod +x tbo-vk)
  F=q4_0,q5_0,q5_1,q4_1,q8_0,q4_K
  for r in 1 2 3; do
    for gx in "" ";gx=0"; do
      lab=new; bs=1,8; [ -n "$gx" ] && lab=old && bs=8  # gx=0 is the old plan at batch 8 only
      timeout 150 stdbuf -oL $B/blockq bench matvec --formats $F --shapes 4096x14336 --batch $bs --sweep "i8=1$gx" \
        2>/dev/null | grep -E "^[a-z]" | grep -v "^device\|^format" | sed "s/^/r$r $lab /" >> "$OUT/b8.txt"
    done
  done
  [ -x .devrun/anchors/tbo-vk ] && .devrun/anchors/tbo-vk perf -b Vulkan0 -o MUL_MAT \
    -p 'type_a=(q4_0|q5_0|q5_1),type_b=f32,m=4096,n=8,k=14336' 2>&1 | grep MUL_MAT >> "$OUT/ggml.txt"
  mv_tests
  echo "== new: batch 1 and 8; old: batch 8, the plans before"; awk '{print $1, $2, $3, $4, $6}' "$OUT/b8.txt"
  [ -f "$OUT/ggml.txt" ] && { echo "== ggml-Vulkan"; sed 's/,bs=.*://' "$OUT/ggml.txt" | awk '{print $1, $(NF-9), $(NF-8)}'; }
fi
if [ "$mode" = bs17 ]; then
  # Session 17: the biased int8 sum (Q4_0 batches, Q8_0 batches over k <
  # 8192) against the plain sum (bs=0), alternating, three processes each,
  # batches of 2, 4 and 8 on both 8B shapes; then the matvec and model tests
  # (docs/perf/2026-12-02-session17-h200.md).
  for r in 1 2 3; do
    for v in "" ";bs=0"; do
      lab=new; [ -n "$v" ] && lab=old
      timeout 150 stdbuf -oL $B/blockq bench matvec --formats q4_0,q8_0 --shapes 4096x14336,14336x4096 \
        --batch 2,4,8 --sweep "i8=1$v" 2>/dev/null | grep -E "^[a-z]" | grep -v "^device\|^format" \
        | sed "s/^/r$r $lab /" >> "$OUT/bs.txt"
    done
  done
  mv_tests
  echo "== new (biased where planned) and old (bs=0): r, plan, format, shape, batch, us, read us"
  awk '{print $1, $2, $3, $4, $5, $6, $(NF-2)}' "$OUT/bs.txt"
fi
if [ "$mode" = blk18 ]; then
  # Session 18: x staged as one 48-byte block a read (int8) and as
  # xs[unit][vec4] (f32), the butterflies written out, Q4_1's one unit at
  # batch 1. Every integer format, int8 and f32 activations, both 8B shapes;
  # the int8 rows again with Dawn's robustness off; with OLD=path/to/blockq
  # (an earlier build) the same rows of it, alternating; then the matvec and
  # model tests (docs/perf/2026-12-02-session18-h200.md).
  F=q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K
  for r in 1 2; do
    for bin in $B/blockq ${OLD:-}; do
      lab=new; [ "$bin" != "$B/blockq" ] && lab=old
      for v in "i8=1" "i8=0"; do
        timeout 150 stdbuf -oL $bin bench matvec --formats $F --shapes 4096x14336,14336x4096 --batch 1,8 \
          --sweep "$v" 2>/dev/null | grep -E "^[a-z]" | grep -v "^device\|^format" | sed "s/^/r$r $lab $v /" >> "$OUT/blk.txt"
      done
    done
  done
  timeout 150 stdbuf -oL $B/blockq --disable-robustness bench matvec --formats $F --shapes 4096x14336,14336x4096 \
    --batch 1,8 --sweep i8=1 2>/dev/null | grep -E "^[a-z]" | grep -v "^device\|^format" | sed "s/^/r1 norobust i8=1 /" >> "$OUT/blk.txt"
  mv_tests
  echo "== r, build, activations, format, shape, batch, us, read us (a slow read marks a slow row)"
  awk '{print $1, $2, $3, $4, $5, $6, $7, $(NF-2)}' "$OUT/blk.txt"
fi
if [ "$mode" = xq19 ]; then
  # Session 19: the quantize kernel without its atomic slot, Q4_1 batches
  # reading x pre-quantized (8 tokens), Q4_K/Q5_K batches in 8 slices of 4
  # lanes. Every int8 format at both 8B shapes, twice; with OLD=path/to/blockq
  # the changed cases of that build; the batch-8 knobs the changes chose
  # against their old values in one process; then the matvec and model tests
  # (docs/perf/2026-12-02-session19-h200.md).
  F=q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K
  for r in 1 2; do
    timeout 100 stdbuf -oL $B/blockq bench matvec --formats $F --shapes 4096x14336,14336x4096 --batch 1,8 \
      --sweep i8=1 2>/dev/null > "$OUT/final$r.txt"
  done
  [ -n "${OLD:-}" ] && timeout 100 stdbuf -oL $OLD bench matvec --formats q4_1,q4_K,q5_K,q8_0 --shapes 4096x14336 \
    --batch 1,8 --sweep i8=1 2>/dev/null > "$OUT/old.txt"
  for s in "i8=1;gx=1;wg=32;tpr=32;rpl=4;unroll=2;tokens=2,4,8" "i8=1;gx=0;wg=512;tpr=16;rpl=4;unroll=2;tokens=2"; do
    timeout 100 $B/blockq bench matvec --formats q4_1 --shapes 4096x14336 --batch 8 --sweep "$s" 2>/dev/null \
      | grep -E "^q" >> "$OUT/knobs.txt"
  done
  for s in "i8=1;tokens=8;wg=512;tpr=4;rpl=2;splits=8" "i8=1;tokens=8;wg=512;tpr=2;rpl=2;splits=16"; do
    timeout 100 $B/blockq bench matvec --formats q4_K,q5_K --shapes 4096x14336 --batch 8 --sweep "$s" 2>/dev/null \
      | grep -E "^q" >> "$OUT/knobs.txt"
  done
  mv_tests
  for f in final1 final2 old knobs; do
    [ -f "$OUT/$f.txt" ] && { echo "== $f (format, shape, batch, us, % of bw, read us; a slow read marks a slow row)"
      grep -E "^q" "$OUT/$f.txt" | awk '{print $1, $2, $3, $4, $7, $(NF-2)}'; }
  done
fi
if [ "$mode" = regs ]; then
  # Registers, workgroup memory and spills of every int8 plan at the 8B
  # shapes, batch 1 and 8 (session 25): blockq writes each kernel's SPIR-V
  # (--dump-shaders), vkstats (bench/vkstats) asks the driver; needs
  # spirv-tools' deb in .gl/ and vkstats in .devrun/build/bin/.
  rm -rf "$OUT/shaders"
  timeout 300 stdbuf -oL $B/blockq --dump-shaders "$OUT/shaders" bench matvec \
    --formats q8_0,q4_0,q4_1,q5_0,q5_1,q2_K,q3_K,q4_K,q5_K,q6_K --shapes 4096x14336,14336x4096 --batch 1,8 --sweep i8=1 \
    2>/dev/null > "$OUT/regs_bench.txt"
  $B/vkstats "$OUT/shaders" > "$OUT/regs.txt" 2>&1; echo "vkstats exit $?"
  rm -f "$OUT"/shaders/*.spv
  echo "== us a call (format, shape, batch, us, % of bw, kernel)"
  grep -E "^q" "$OUT/regs_bench.txt" | awk '{print $1, $2, $3, $4, $7, $8}'
  echo "== driver statistics (regs a thread, workgroup memory, spilled bytes a thread, binary bytes, kernel)"
  grep -v "^stream_read" "$OUT/regs.txt"
fi
if [ "$mode" = attention ]; then
  # The attention family (session 28): its tests and contract, the kernel by
  # position for three models' heads, its registers, and the end-to-end token
  # time at short and long positions (bench run prints the per-family split).
  timeout 120 $B/test_k_attention > "$OUT/test_attention.log" 2>&1
  echo "test_k_attention exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_attention.log" | tr '\n' ' ')"
  timeout 200 $B/blockq kernels bench blockq.Attention > "$OUT/attention_contract_bench.txt" 2>&1
  echo "kernels bench exit $?"
  rm -rf "$OUT/shaders"
  timeout 200 $B/blockq --dump-shaders "$OUT/shaders" bench attention --heads 32/8x128,32/8x64,15/5x64 \
    --positions 40,256,1024,2048,2049,4095,8191 > "$OUT/attention.txt" 2>&1
  [ -x $B/vkstats ] && $B/vkstats "$OUT/shaders" > "$OUT/attention_regs.txt" 2>&1
  rm -rf "$OUT/shaders"
  for run in "llama-3-8b q4_0 8" "llama-3-8b q4_0 1000" "llama-3-8b q4_0 4000" "smollm2-360m q8_0 8" "smollm2-360m q8_0 2000"; do
    set -- $run
    timeout 250 $B/blockq bench run --preset $1 --type $2 -p $3 -n 32 --crossover 16 --samples 5 > "$OUT/run-$1-$3.txt" 2>&1
    echo "== $1 $2 p=$3: $(grep -E '^(generation|  attention|  total)' "$OUT/run-$1-$3.txt" | tr -s ' ' | tr '\n' '|')"
  done
  echo "== bench attention (heads, position, chunks, us, MB read, GB/s, % of the read)"
  grep -E "^[0-9]" "$OUT/attention.txt" | awk '{print $1, $2, $3, $4, $5, $6, $7}'
  grep -v "^stream_read" "$OUT/attention_regs.txt" 2>/dev/null
fi
if [ "$mode" = host ]; then
  # A generated token's host time (session 29): bench run's StepTimes with the
  # defaults (encoding ahead, submits of 1, 2, 4, ... layers) and as before
  # (one submit, encoded after the id), then blockq run with its default
  # sampling on the same synthetic models.
  timeout 200 $B/test_model --gtest_filter='*EncodeAhead*:SubmitPieces*:Sampler*' > "$OUT/test_host.log" 2>&1
  echo "test_model (host) exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_host.log" | tr '\n' ' ')"
  for m in "smollm2-360m q8_0" "llama-3.2-1b q4_0" "llama-3-8b q4_0"; do
    for v in "" "--no-encode-ahead --submit-pieces 1"; do
      set -- $m
      timeout 150 $B/blockq bench run --preset $1 --type $2 -p 8 -n 64 --crossover 16 --samples 3 $v \
        > "$OUT/run.txt" 2>&1
      echo "== $1 $2 ${v:-(defaults)}: $(grep -E '^(generation|dispatches|  total)' "$OUT/run.txt" | tr -s ' ' | tr '\n' '|')"
      grep -E '^host' "$OUT/run.txt"
      f=$(sed -n 's/^model *\([^ ]*\) .*/\1/p' "$OUT/run.txt")
    done
    timeout 100 $B/blockq run -m "$f" -p "Once upon a time" -n 128 --ignore-eos --seed 3 > /dev/null 2> "$OUT/gen.err"
    echo "blockq run: $(grep -o 'generation.*' "$OUT/gen.err")"
  done
fi
if [ "$mode" = gensample ]; then
  # The GPU sampler (session 30): its tests, its plans timed alone, then bench
  # run with the greedy pick on the GPU (a step queued ahead) against the
  # host's pick, alternating twice (the GPU run checks its tokens against the
  # host sampler's, greedy and with blockq run's defaults, with and without
  # penalties), and blockq run's default sampling on the GPU and on the host,
  # with and without penalties.
  [ -z "${GEN_NO_TESTS:-}" ] && {
  timeout 200 $B/test_k_sample > "$OUT/test_sample.log" 2>&1
  echo "test_k_sample exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_sample.log" | tr '\n' ' ')"
  timeout 300 $B/test_model --gtest_filter='-*Oracle*' > "$OUT/test_model.log" 2>&1
  echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_model.log" | tr '\n' ' ')"
  timeout 200 $B/blockq bench sample --top-k 1,40,256 --chunks ${SAMPLE_CHUNKS:-512,1024,2048} \
    --wgs ${SAMPLE_WGS:-256,512} --greedy-per ${SAMPLE_PER:-4,8,16,32} --windows 0 > "$OUT/bench_sample.txt" 2>&1
  echo "bench sample exit $?"; cat "$OUT/bench_sample.txt"
  # The penalties' dispatch by window (the default plan otherwise).
  timeout 100 $B/blockq bench sample --top-k 1,40 --windows 0,64,256,1024 > "$OUT/bench_sample_pen.txt" 2>&1
  echo "bench sample (penalties) exit $?"; cat "$OUT/bench_sample_pen.txt"
  }
  for m in "smollm2-360m q8_0" "llama-3.2-1b q4_0" "llama-3-8b q4_0"; do
    case "$m" in ${GEN_ONLY:-*}) ;; *) continue ;; esac
    set -- $m
    for rep in 1 2; do
      for v in "--check-sampler" "--host-sampler"; do
        [ $rep = 2 ] && v=${v#--check-sampler}
        timeout 150 $B/blockq bench run --preset $1 --type $2 -p 8 -n 64 --crossover 16 --samples 3 $v \
          > "$OUT/run.txt" 2>&1
        echo "== $1 $2 ${v:-(gpu sampler)}: $(grep -E '^(generation|  sample|  total)' "$OUT/run.txt" | tr -s ' ' | tr '\n' '|')"
        grep -E '^(host|sampler)' "$OUT/run.txt"
        f=$(sed -n 's/^model *\([^ ]*\) .*/\1/p' "$OUT/run.txt")
      done
    done
    for smp in gpu host gpu host; do
      timeout 100 $B/blockq run -m "$f" -p "Once upon a time" -n 128 --ignore-eos --seed 3 --sampler $smp \
        > /dev/null 2> "$OUT/gen.err"
      echo "blockq run --sampler $smp: $(grep -o 'generation.*' "$OUT/gen.err")"
    done
    for smp in gpu host gpu host; do  # with penalties (on the GPU since session 34)
      timeout 100 $B/blockq run -m "$f" -p "Once upon a time" -n 128 --ignore-eos --seed 3 --sampler $smp \
        --repeat-penalty 1.1 --frequency-penalty 0.1 --presence-penalty 0.1 > /dev/null 2> "$OUT/gen.err"
      echo "blockq run --sampler $smp, penalties: $(grep -o 'generation.*' "$OUT/gen.err")"
    done
  done
fi
