#!/usr/bin/env bash
# Runs on the lent H200 (device tool): `blockq serve` against `blockq run` on
# the synthetic models of MODELS ("preset type" lines). Runs test_serve and
# test_model's Truncate test first. For each model: `blockq run` (greedy,
# N tokens, --ignore-eos), then a server on the same model answering a
# completion REPS times (the first evaluates the prompt, the others find it
# in the KV cache), the same request streamed, a chat (plain, with penalties,
# with logprobs), and an echoed prompt's logprobs; each answer's
# llama.cpp-style timings are read off the response. A table last.
# Expects the carried folders that bench/h200.sh does. Usage: OUT=... bench/h200_serve.sh
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B=.devrun/build/bin
N=${N:-128}
REPS=${REPS:-3}
PORT=${PORT:-18080}
MODELS=${MODELS:-"smollm2-360m q8_0
llama-3.2-1b q4_0
llama-3-8b q4_0"}
PROMPT="The history of the lighthouse keepers of the northern coast begins with a storm"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
timeout 120 $B/test_serve > "$OUT/test_serve.log" 2>&1
echo "test_serve exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_serve.log" | tr '\n' ' ')"
timeout 60 $B/test_model --gtest_filter='Truncate*' > "$OUT/test_truncate.log" 2>&1
echo "test_model Truncate exit $?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/test_truncate.log" | tr '\n' ' ')"

# POST PATH BODY: the response (headers and body) on stdout, over bash's /dev/tcp.
post() {
  exec 3<>"/dev/tcp/127.0.0.1/$PORT" || return 1
  printf 'POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
    "$1" "${#2}" "$2" >&3
  timeout 120 cat <&3
  exec 3<&-
}
num() { grep -o "\"$1\":[0-9.e+-]*" | tail -1 | cut -d: -f2; }

: > "$OUT/serve_table.txt"
echo "$MODELS" | while read -r preset type; do
  [ -z "$preset" ] && continue
  M=${BLOCKQ_MODEL_DIR:-/tmp/bqmodels}/synth-llama-$preset-$type.gguf
  [ -f "$M" ] || timeout 300 $B/blockq synth --arch llama --preset "$preset" --type "$type" -o "$M" > /dev/null 2>&1
  timeout 120 $B/blockq run -m "$M" -p "$PROMPT" -n "$N" --temp 0 --ignore-eos --ctx 2048 \
    > "$OUT/run-$preset.txt" 2> "$OUT/run-$preset.err"
  run_tps=$(grep -o 'generation: [0-9]* tokens in [0-9.]* s ([0-9.]* tokens/s' "$OUT/run-$preset.err" | grep -o '([0-9.]*' | tr -d '(')
  echo "== $preset $type: blockq run $run_tps tokens/s ($(grep -o 'time to first token [0-9.]* ms' "$OUT/run-$preset.err"))"
  $B/blockq serve -m "$M" --port "$PORT" --ctx 2048 2> "$OUT/serve-$preset.log" &
  pid=$!
  for _ in $(seq 1 600); do grep -q '^serving' "$OUT/serve-$preset.log" && break; sleep 0.2; done
  body="{\"prompt\": \"$PROMPT\", \"max_tokens\": $N, \"temperature\": 0, \"ignore_eos\": true"
  row="$preset $type | run $run_tps"
  for rep in $(seq "$REPS"); do
    r=$(post /v1/completions "$body}")
    echo "  completion $rep: prompt_n $(echo "$r" | num prompt_n) prompt_ms $(echo "$r" | num prompt_ms) predicted_n $(echo "$r" | num predicted_n) tokens/s $(echo "$r" | num predicted_per_second)"
    row="$row | serve $(echo "$r" | num predicted_per_second | cut -c1-6) (prompt $(echo "$r" | num prompt_ms | cut -c1-5) ms)"
  done
  r=$(post /v1/completions "$body, \"stream\": true, \"stream_options\": {\"include_usage\": true}}")
  echo "  streamed: $(echo "$r" | grep -c '^data: {"choices":\[{') text events, tokens/s $(echo "$r" | num predicted_per_second), ends with [DONE]: $(echo "$r" | grep -c '^data: \[DONE\]')"
  row="$row | stream $(echo "$r" | num predicted_per_second | cut -c1-6)"
  r=$(post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"$PROMPT\"}], \"max_tokens\": $N, \"ignore_eos\": true, \"seed\": 3}")
  echo "  chat (top-k 40, GPU sampler): prompt_n $(echo "$r" | num prompt_n) tokens/s $(echo "$r" | num predicted_per_second)"
  row="$row | chat $(echo "$r" | num predicted_per_second | cut -c1-6)"
  # With penalties (GPU sampler since session 34) and with logprobs (GPU sampler
  # with each step's logits read back, since session 35).
  r=$(post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"$PROMPT\"}], \"max_tokens\": $N, \"ignore_eos\": true, \"seed\": 3, \"frequency_penalty\": 0.2, \"presence_penalty\": 0.2}")
  echo "  chat, penalties: tokens/s $(echo "$r" | num predicted_per_second)"
  row="$row | penalties $(echo "$r" | num predicted_per_second | cut -c1-6)"
  r=$(post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"$PROMPT\"}], \"max_tokens\": $N, \"ignore_eos\": true, \"seed\": 3, \"logprobs\": true, \"top_logprobs\": 5}")
  echo "  chat, logprobs: tokens/s $(echo "$r" | num predicted_per_second), $(echo "$r" | grep -o '"top_logprobs":\[' | wc -l) entries"
  row="$row | logprobs $(echo "$r" | num predicted_per_second | cut -c1-6)"
  # lm-eval's loglikelihood request: the prompt's logprobs by echo, max_tokens 0.
  r=$(post /v1/completions "{\"prompt\": \"$PROMPT $PROMPT\", \"echo\": true, \"max_tokens\": 0, \"logprobs\": 1}")
  echo "  echo logprobs: prompt_n $(echo "$r" | num prompt_n) prompt_ms $(echo "$r" | num prompt_ms)"
  row="$row | echo $(echo "$r" | num prompt_ms | cut -c1-6) ms"
  kill $pid; wait $pid 2>/dev/null
  grep -E '^/v1' "$OUT/serve-$preset.log" | sed 's/^/  log: /'
  echo "$row" >> "$OUT/serve_table.txt"
done
echo "== table: model | blockq run tokens/s | serve completions (REPS, the prompt's ms) | streamed | chat | chat with penalties | chat with logprobs | an echoed prompt's logprobs (ms)"
cat "$OUT/serve_table.txt"
