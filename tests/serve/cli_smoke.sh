#!/usr/bin/env bash
# `blockq serve` as a user starts it: on a free port with the tiny synthetic
# model; /v1/models names it, a chat completion answers with text and usage,
# a bad request is a 400 naming the field; then the server is stopped.
# Usage: cli_smoke.sh BLOCKQ
set -euo pipefail
blockq=$1
log=$(mktemp)
"$blockq" serve --port 0 --ctx 128 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1 600); do
  grep -q '^serving' "$log" && break
  kill -0 $pid 2>/dev/null || { cat "$log"; echo "serve exited before it served"; exit 1; }
  sleep 0.2
done
port=$(sed -n 's|^serving .* on http://127\.0\.0\.1:\([0-9]*\)/v1 .*|\1|p' "$log")
[ -n "$port" ] || { cat "$log"; echo "no port in the serving line"; exit 1; }
node - "$port" <<'JS'
const base = `http://127.0.0.1:${process.argv[2]}`;
const post = (path, body) => fetch(base + path, {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                 body: JSON.stringify(body)});
const fail = (msg) => { console.error(msg); process.exit(1); };
(async () => {
  const models = await (await fetch(base + '/v1/models')).json();
  if (!models.data || models.data[0].id !== 'synth-llama-tiny-q8_0') fail('models: ' + JSON.stringify(models));
  const r = await post('/v1/chat/completions', {messages: [{role: 'user', content: 'Hi'}], max_tokens: 4, seed: 1});
  const j = await r.json();
  if (r.status !== 200 || j.object !== 'chat.completion' || typeof j.choices[0].message.content !== 'string' ||
      j.usage.completion_tokens < 1 || j.usage.completion_tokens > 4)
    fail('chat: ' + r.status + ' ' + JSON.stringify(j));
  const bad = await post('/v1/completions', {prompt: 'x', top_p: 7});
  const e = await bad.json();
  if (bad.status !== 400 || e.error.param !== 'top_p') fail('bad request: ' + bad.status + ' ' + JSON.stringify(e));
  console.log('serve: models, chat and a bad request answered as expected');
})().catch((err) => fail(String(err)));
JS
