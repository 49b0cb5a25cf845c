#!/usr/bin/env bash
# Runs on the lent H200 (device tool): two builds side by side, blockq and
# OLD (default blockq_old), both under .devrun/build/bin. The sampler and
# serve tests (test_k_sample, test_serve, test_model's prompt, generation
# and sampler tests); `bench sample` with penalty windows 0..1024, each
# build twice; the sampler contract's bench cases; then, for each synthetic
# model, each build's server twice in turn answering an echoed prompt's
# logprobs (lm-eval's loglikelihood request) at two prompt lengths, a chat
# with logprobs, a plain chat and a plain prompt: one line per server with
# the prompt's ms and tokens/s read off the answers (session 35).
# Expects the carried folders that bench/h200.sh does. Usage: OUT=... bench/h200_serve_ab.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
OLD=${OLD:-blockq_old}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export LD_LIBRARY_PATH=$PWD/.devrun/third_party/dawn/node_modules/bun-webgpu-linux-x64:$PWD/.devrun/lib BLOCKQ_MODEL_DIR=/tmp/bqmodels
mkdir -p /tmp/o $BLOCKQ_MODEL_DIR
B=.devrun/build/bin
timeout 120 $B/test_k_sample > /tmp/o/test_sample.log 2>&1; echo "test_k_sample exit $?: $(grep -E '^\[  (PASSED|FAILED)' /tmp/o/test_sample.log | tr '\n' ' ')"
timeout 120 $B/test_serve > /tmp/o/test_serve.log 2>&1; echo "test_serve exit $?: $(grep -E '^\[  (PASSED|FAILED)' /tmp/o/test_serve.log | tr '\n' ' ')"
timeout 120 $B/test_model --gtest_filter='GpuPrompt*:*Penalt*:GpuGeneration*:Sampler*' > /tmp/o/test_model.log 2>&1; echo "test_model exit $?: $(grep -E '^\[  (PASSED|FAILED)' /tmp/o/test_model.log | tr '\n' ' ')"
grep -E "eval_all|window" /tmp/o/test_*.log | head -12
for rep in 1 2; do for b in $OLD blockq; do
  timeout 60 $B/$b bench sample --top-k 1,40 --windows 0,64,256,1024 > /tmp/o/bs_$b.txt 2>&1
  echo "== bench sample $b round $rep"; grep -E '^ 128256' /tmp/o/bs_$b.txt
done; done
timeout 100 $B/blockq kernels bench blockq.Sample 2>&1 | tail -8
PORT=18090
P="The history of the lighthouse keepers of the northern coast begins with a storm"
P4="$P, and $P, and then $P, until $P."
BIAS="{$(seq 100 399 | sed 's/.*/"&": -1/' | paste -sd, -)}"
post() {
  exec 3<>"/dev/tcp/127.0.0.1/$PORT" || return 1
  printf 'POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "$1" "${#2}" "$2" >&3
  timeout 120 cat <&3; exec 3<&-
}
num() { grep -o "\"$1\":[0-9.e+-]*" | tail -1 | cut -d: -f2; }
for m in "smollm2-360m q8_0" "llama-3.2-1b q4_0" "llama-3-8b q4_0"; do
  set -- $m
  M=$BLOCKQ_MODEL_DIR/synth-llama-$1-$2.gguf
  timeout 300 $B/blockq synth --arch llama --preset $1 --type $2 -o "$M" > /dev/null 2>&1
  for b in $OLD blockq $OLD blockq; do
    $B/$b serve -m "$M" --port $PORT --ctx 2048 2> /tmp/o/serve.log &
    pid=$!
    for _ in $(seq 1 600); do grep -q '^serving' /tmp/o/serve.log && break; sleep 0.2; done
    line="$1 $b:"
    for pr in "$P" "$P4"; do for rep in 1 2; do
      r=$(post /v1/completions "{\"prompt\": \"$pr\", \"echo\": true, \"max_tokens\": 0, \"logprobs\": 5}")
      line="$line n=$(echo "$r" | num prompt_n) $(echo "$r" | num prompt_ms | cut -c1-6)ms"
      echo "$r" | grep -o '"token_logprobs":\[[^]]*' | cut -c1-200 > /tmp/o/lp_${1}_${b}_${rep}.txt
    done; done
    r=$(post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"$P\"}], \"max_tokens\": 128, \"ignore_eos\": true, \"seed\": 3, \"logprobs\": true, \"top_logprobs\": 5}")
    line="$line | chat logprobs $(echo "$r" | num predicted_per_second | cut -c1-6) tok/s"
    r=$(post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"$P\"}], \"max_tokens\": 128, \"ignore_eos\": true, \"seed\": 3}")
    line="$line | chat $(echo "$r" | num predicted_per_second | cut -c1-6) tok/s"
    # A chat with a logit bias on 300 ids (an old build may refuse it: no figure).
    r=$(post /v1/chat/completions "{\"messages\": [{\"role\": \"user\", \"content\": \"$P\"}], \"max_tokens\": 128, \"ignore_eos\": true, \"seed\": 3, \"logit_bias\": $BIAS}")
    line="$line | chat bias $(echo "$r" | num predicted_per_second | cut -c1-6) tok/s"
    r=$(post /v1/completions "{\"prompt\": \"$P4\", \"max_tokens\": 1, \"temperature\": 0}")
    line="$line | plain prompt $(echo "$r" | num prompt_n) tokens $(echo "$r" | num prompt_ms | cut -c1-6)ms"
    kill $pid; wait $pid 2>/dev/null
    echo "$line"
  done
  echo "first logprobs ($OLD, blockq):"; head -c 200 /tmp/o/lp_${1}_${OLD}_1.txt 2>/dev/null; echo; head -c 200 /tmp/o/lp_${1}_blockq_1.txt; echo
done
tar czf "$OUT/serve_ab.tgz" -C /tmp/o --exclude='*.gguf' .
