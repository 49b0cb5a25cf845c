// llama.cpp as an external oracle for blockq's CPU model (through the pinned
// node-llama-cpp, CPU build, no GPU). Usage: node oracle.mjs REQUEST.json
//
// REQUEST: {
//   "model": "path.gguf",
//   "texts": ["...", ...],          // tokenized twice: parse_special false and true
//   "prompt_tokens": [1, 2, 3],     // or "prompt_text": "..." (tokenized with BOS as the
//                                   //   model says and parse_special on)
//   "n_predict": 32,                // greedy continuation length
//   "top_k": 8,                     // top probabilities reported per step
//   "full_steps": 2                 // steps whose full probability vector is reported
// }
// Prints one JSON object:
// { "n_vocab", "bos", "eos", "add_bos",
//   "tokenize": [{"text", "parse_special", "tokens", "detok"}],
//   "prompt": [...], "greedy": [...],
//   "steps": [{"token", "top": [[id, p], ...], "probs": [p0, p1, ...] (first full_steps)}] }
// The context keeps K and V in f32 and flash attention off, so llama.cpp's
// only roundings of note are its q8 activation blocks (see ForwardMode::Ggml).
import fs from "node:fs";
import { getLlama } from "node-llama-cpp";

const fail = (msg) => {
  process.stderr.write(`oracle: ${msg}\n`);
  process.exit(2);
};

if (process.argv.length < 3) fail("usage: node oracle.mjs REQUEST.json");
let req;
try {
  req = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
} catch (e) {
  fail(`cannot read the request ${process.argv[2]}: ${e.message}`);
}
if (!req.model || !fs.existsSync(req.model)) fail(`model file not found: ${req.model}`);

const llama = await getLlama({ gpu: false, build: "never", logLevel: "error", progressLogs: false });
const model = await llama.loadModel({ modelPath: req.model, gpuLayers: 0 });
const out = {
  n_vocab: null,
  bos: model.tokens.bos,
  eos: model.tokens.eos,
  add_bos: model.tokens.shouldPrependBosToken,
  tokenize: [],
  prompt: [],
  greedy: [],
  steps: [],
};

for (const text of req.texts ?? []) {
  for (const parseSpecial of [false, true]) {
    const tokens = model.tokenize(text, parseSpecial);
    out.tokenize.push({
      text,
      parse_special: parseSpecial,
      tokens: Array.from(tokens),
      detok: model.detokenize(tokens, parseSpecial),
    });
  }
}

const nPredict = req.n_predict ?? 0;
if (nPredict > 0) {
  let prompt = req.prompt_tokens;
  if (!prompt) {
    prompt = Array.from(model.tokenize(req.prompt_text ?? "", true));
    if (model.tokens.shouldPrependBosToken && model.tokens.bos != null) prompt.unshift(model.tokens.bos);
  }
  if (prompt.length === 0) fail("empty prompt");
  out.prompt = prompt;
  const context = await model.createContext({
    contextSize: Math.max(64, prompt.length + nPredict + 8),
    batchSize: 512,
    flashAttention: false,
    experimentalKvCacheKeyType: "F32",
    experimentalKvCacheValueType: "F32",
    threads: 2,
  });
  const seq = context.getSequence();
  const topK = req.top_k ?? 8;
  const fullSteps = req.full_steps ?? 0;
  const wanted = { generateNext: { token: true, probabilities: true } };
  let input = prompt.map((t, i) => (i === prompt.length - 1 ? [t, wanted] : t));
  for (let step = 0; step < nPredict; step++) {
    const res = await seq.controlledEvaluate(input);
    const next = res[input.length - 1]?.next;
    if (!next || next.token == null || !next.probabilities) fail(`no output at step ${step}`);
    const entry = { token: next.token, top: [] };
    for (const [id, p] of next.probabilities) {
      if (entry.top.length >= topK) break;
      entry.top.push([id, p]);
    }
    if (step < fullSteps) {
      const n = next.probabilities.size;  // every token of the vocabulary
      const probs = new Array(n).fill(0);
      for (const [id, p] of next.probabilities) probs[id] = p;
      entry.probs = probs;
    }
    out.n_vocab = next.probabilities.size;
    out.steps.push(entry);
    out.greedy.push(next.token);
    input = [[next.token, wanted]];
  }
  await context.dispose();
}
await model.dispose();
process.stdout.write(JSON.stringify(out) + "\n");
