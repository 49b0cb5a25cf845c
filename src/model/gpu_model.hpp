// The llama/qwen2 decoder on the GPU: every tensor of a GGUF file uploaded
// once, into slices of one weight arena (gpu::Arena: a few large buffers):
// the matrices, token_embd included, in the matvec layout, split by rows past
// the binding limit, which matvec, the prompt gemm and the embedding lookup
// all read (a tied lm_head is token_embd's upload); norms and biases as f32.
// Then an f16 or f32 KV cache, and a forward pass recorded into one command
// buffer per token (decode) or per prompt batch.
// One token:
//   x [n_embd] = token_embd[id]            (matvec::PreparedRows: row gather)
//   per layer: qkv [n_head*hd + 2*n_kv*hd] = Wqkv (rmsnorm(x) * attn_norm) (+b),
//              rows [q | k | v], RoPE on the q and k rows   (one matvec: prologue/epilogue)
//              (Wqkv: the rows of attn_q, attn_k, attn_v stacked at load when
//              they share a format; else three matvecs into q, k, v)
//              k, v -> cache [n_ctx, n_kv, hd] at pos[t]   (the QKV matvec's
//                                 epilogue, fuse_kv_store; else a store kernel)
//              a [n_head*hd] = softmax(q.K[0..pos] / sqrt(hd)) V        (kernels/attention)
//              x += Wo a                                                (matvec Acc)
//              f [n_ff] = silu(Wg h) * (Wu h), h = rmsnorm(x) * ffn_norm (matvec SiluGate)
//              x += Wdown f                                             (matvec Acc)
//   logits [n_vocab] = W_out (rmsnorm(x) * output_norm)   (W_out = token_embd if tied)
// then the logits are copied to a mapped buffer: the one read back per token.
// Or, generating with the GPU sampler (begin_generation), the logits are
// sampled where they lie (kernels/sample) and the token is copied into ids
// for the next step and into a 4-byte mapped buffer for the host.
// A token's dispatches go out in a few submits (submit_pieces), encoded while
// the GPU ran the token before (encode_ahead).
// With rope_freqs.weight (Llama 3.1 scaling) the QKV matvec uses a Store
// epilogue and then GpuRope rotates its q and k heads with the freq factors
// [head_dim / 2] (gpu_rows.hpp).
// A prompt batch of m <= `batch` tokens runs in the smallest prompt pass of
// B rows (batch, batch / 2, ... down to min_batch) that holds it, padded to B
// (padding tokens sit at position 0xffffffff: not stored, not attended); the
// activations have a leading [batch], of which the pass uses [B], and per
// layer:
//   h [B, n_embd] = rmsnorm(x) * attn_norm                         (GpuRmsNorm)
//   qkv [B, n_q + 2 n_kv] = h Wqkvᵀ  (gemm::matmul: gemm above the
//                                 crossover, else matvec; Store; or q, k, v apart)
//   q, k (+bias, RoPE), v (+bias)                  (one GpuRope over qkv's heads)
//   kv store, causal attention over the cache, x += a Woᵀ            (matmul Acc)
//   h = rmsnorm(x) * ffn_norm; f = silu(h Wgᵀ) * (h Wuᵀ)             (matmul SiluGate)
//   x += f Wdownᵀ                                                    (matmul Acc)
// then the last real token's row of x [n_embd] is copied out and only it goes
// through the lm_head (matvec).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "gguf/gguf.hpp"
#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "model/config.hpp"
#include "model/sampler.hpp"
#include "model/tokenizer.hpp"

namespace blockq::model {

struct GpuModelOptions {
  uint32_t n_ctx = 0;     // KV cache positions; 0: min(context_length, 4096)
  bool progress = false;  // loading progress on stderr: a bar on a terminal, else lines
  // Prompt tokens per command buffer (the matmul m, 1..512); 1: token by
  // token; 0: auto, 512 (at most the largest power of two in n_ctx) except
  // on a CPU adapter (SwiftShader), where compiling the batch kernels takes
  // longer than they save on a short prompt: 1. On the H100 and H200
  // (sessions 38-39) 512 against 128 took 1000-token prompts from 453 to
  // 405 ms on the synthetic llama-3-8b, 90 to 71 on llama-3.2-1b and 72 to
  // 47 on smollm2-360m, and prompts of 128 tokens or fewer ran as fast.
  uint32_t batch = 0;
  // Smaller prompt passes: batch / 2, batch / 4, ... down to the smallest of
  // at least min_batch rows, each prepared at load (bind groups; the
  // activations are shared). A step of m tokens runs in the smallest pass
  // that holds them, so a 20-token prompt computes 32 rows, not 512.
  // min_batch >= batch: one prompt pass. 8 rather than 16 took a 5-token
  // prompt from 10.3 to 7.5 ms on the 8B (H100, session 39).
  uint32_t min_batch = 8;
  // The matvec/gemm crossover of the prompt's projections: m <= crossover
  // runs matvec, above it gemm. Unset: measured per adapter and weight
  // format (gemm::crossover, cached on disk).
  std::optional<uint32_t> crossover;
  // Unset crossover: measured on each weight's own shape (once per adapter,
  // format and shape, cached) instead of on 4096 x 4096 for every weight.
  bool crossover_per_weight = false;
  // Prompt gemms (f32 and int8) take the autotuner's tiling for each
  // weight's shape and m class (gemm::tune: timed once per adapter, cached
  // on disk), else the default; for adapters whose defaults were never
  // measured.
  bool gemm_tuned = false;
  // Prompt gemms of Q8_0, Q4_x, Q5_x and K-quant weights with int8 activations (the int8
  // gemm, gemm::plan_int8: x quantized per block of 32, dot4I8Packed), where
  // the adapter has packed dot4 and int8_activations is on, on weights of any
  // size (int8_min_elements is the token matvecs'). On the H200 it took the
  // 8B's 128-row prompt pass (Q4_0) from 105 to 76 ms with its first tiling
  // (docs/perf/2026-12-05-session37-h200.md); false: the f32 gemm.
  bool gemm_int8 = true;
  KvType kv_type = KvType::F16;
  // Q, K and V of a layer as one projection (one dispatch) when the three
  // weights share a format; false: three (for tests and comparisons).
  bool fuse_qkv = true;
  // Token projections and the lm head with int8 activations (matvec
  // features.dot4: x quantized per block of 32, as ggml's q8 activations)
  // where the weight format and the adapter allow and the weight has at least
  // int8_min_elements elements (unset: matvec::int8_min_elements of the
  // format, 2^22 or 2^24; smaller ones ran as fast or faster in f32); false:
  // f32 activations everywhere.
  bool int8_activations = true;
  std::optional<uint64_t> int8_min_elements;
  // While the GPU runs a step, encode the command buffer of a single token
  // at the next position, so that a following eval(token) only writes the
  // token's id and submits (the buffer does not depend on the id: it runs
  // every embedding chunk, each of which skips ids outside its rows).
  bool encode_ahead = true;
  // A single token's fused QKV matvec also stores its k and v rows into the
  // caches (the rope epilogue's KV store, Hooks::kv_n), one dispatch a layer
  // fewer, where the matvec plan allows it: no rope_freqs, an f32 cache or
  // the normal RoPE, and the adapter's storage buffers per stage for two more
  // bindings. false: the separate KV-store kernel (for comparison).
  bool fuse_kv_store = true;
  // A step's dispatches as several submits, so that the GPU starts on the
  // first while Dawn records the backend commands of the next (in
  // wgpuQueueSubmit, about 2 us a dispatch on the H200's host). 0: pieces of
  // 1, 2, 4, ... layers, each submitted while the GPU runs the ones before;
  // n: n pieces of about as many layers (1: one submit).
  uint32_t submit_pieces = 0;
};

// GpuModelOptions::batch's auto value: 1 on a CPU adapter, else the
// largest power of two in n_ctx, at most 512.
uint32_t auto_prompt_batch(bool cpu_adapter, uint32_t n_ctx);

// Where a step's submits end: the layer each piece of the step stops before,
// ascending, the last n_layer (the embedding goes with the first piece, the
// lm_head and the logits' copy with the last). pieces 0: 1, 2, 4, ...
// layers, the last piece taking the rest when it is shorter than twice the
// one before it; n: n pieces of about as many layers (1: one submit).
std::vector<uint32_t> submit_piece_ends(uint32_t n_layer, uint32_t pieces);

// Host time of one eval_step, microseconds of the steady clock, in order.
struct StepTimes {
  double inputs = 0;  // the ids and positions written to the queue
  double encode = 0;  // the dispatches recorded, the command buffer finished (0 when encoded ahead)
  double submit = 0;  // wgpuQueueSubmit (where Dawn records its backend's commands)
  double ahead = 0;   // encoding the next token's buffer, while the GPU runs this step
  double wait = 0;    // then until the logits (or the GPU sampler's token) were mapped: the GPU's work and the wake-up
  double read = 0;    // the mapped logits taken (they are read in place, not copied)
  bool encoded_ahead = false;  // this step's buffer was encoded during the step before
  uint32_t rows = 1;           // the rows its pass computed (1, or a prompt pass's, padding included)
  double total() const { return inputs + encode + submit + ahead + wait + read; }
};

// Kernel families of a token's command buffer (for per-family timing).
// Sample: the GPU sampler's dispatches (only while one was made by begin_generation).
enum class KernelFamily : uint8_t { Embed, Qkv, KvCopy, Attention, AttnOut, Ffn, FfnDown, LmHead, Sample, Readback };
inline constexpr int kKernelFamilies = 10;
std::string_view family_name(KernelFamily f);

// Bytes held on the device.
struct GpuMemory {
  // Every tensor of the file once, in the weight arena's buffers: the
  // projections, the lm_head and token_embd in the matvec layout (which
  // matvec, the prompt gemm and the embedding lookup all read; a tied lm_head
  // is token_embd's upload), norms, biases, freq factors.
  uint64_t weights = 0;
  uint32_t weight_buffers = 0;  // the arena's buffers
  uint64_t kv_cache = 0;      // [n_layer] x k, v [n_ctx, n_kv * head_dim] in f16 or f32
  uint64_t activations = 0;   // x, q, k, v, scores, logits, readback, ...
  uint64_t total() const { return weights + kv_cache + activations; }
};

class GpuModel {
 public:
  // Reads and checks the config and every tensor (blockq::Error naming the
  // file and tensor for an unsupported architecture, tensor type, a missing
  // tensor or a wrong shape), then uploads the weights and prepares every
  // dispatch of a token.
  GpuModel(const gpu::Context& ctx, gguf::GgufFile file, GpuModelOptions opt = {});
  ~GpuModel();
  GpuModel(GpuModel&&) noexcept;
  GpuModel& operator=(GpuModel&&) noexcept;

  const ModelConfig& config() const;
  const GpuMemory& memory() const;
  uint32_t n_ctx() const;
  uint32_t n_past() const;
  uint32_t batch() const;  // prompt tokens per command buffer (options resolved)
  // The rows of each prompt pass, from batch() down (min_batch); empty when
  // batch() is 1.
  std::vector<uint32_t> prompt_passes() const;
  KvType kv_type() const;
  // How many of the prompt pass's projections run the gemm (the rest matvec),
  // of prompt_projection_count() (per layer: qkv, o, gate/up, down when Q, K
  // and V are fused, else q, k, v, o, gate/up, down).
  uint32_t prompt_gemm_count() const;
  uint32_t prompt_projection_count() const;
  // Layers whose Q, K and V run as one projection.
  uint32_t fused_qkv_layers() const;
  // Layers whose single-token QKV matvec also stores k and v (fuse_kv_store).
  uint32_t kv_store_fused_layers() const;
  void reset();  // empties the KV cache (positions restart at 0)
  // Keeps the cache's first n positions and forgets the rest (ends a
  // generation first): the next eval writes position n, so a prompt that
  // shares its first n tokens with the cache evaluates only the others.
  // Throws blockq::Error when n > n_past().
  void truncate(uint32_t n);

  // Evaluates one token at position n_past(): its dispatches submitted (in
  // pieces, see submit_pieces), the logits read back [n_vocab]: the mapped
  // readback buffer, valid until the next eval or a record() that copies the
  // logits.
  // Throws blockq::Error for an id outside the vocabulary or a full cache.
  std::span<const float> eval(TokenId token);
  // Evaluates tokens in order, up to `batch` at a time (one command buffer
  // each, matmuls, causal attention within the batch, the smallest prompt
  // pass that holds them; a single token left over runs alone); the logits
  // after the last.
  std::span<const float> eval(std::span<const TokenId> tokens);
  // One command buffer for 1 to `batch` tokens; the logits after the last.
  std::span<const float> eval_step(std::span<const TokenId> tokens);
  // Evaluates tokens as eval(tokens) does and hands every token's logits
  // [n_vocab] to on_row(i, logits), in order (the span is valid during the
  // call): the logits of each position of a prompt, for its tokens' log
  // probabilities. A batch's lm_head then runs over all its rows (up to
  // all_rows_batch() tokens a step, 64 MiB of logits, on buffers made on
  // the first call); a batch of 1 runs token by token. Returns the last
  // token's logits, as eval does (the GPU sampler starts from them).
  using RowFn = std::function<void(size_t, std::span<const float>)>;
  std::span<const float> eval_all(std::span<const TokenId> tokens, const RowFn& on_row);
  uint32_t all_rows_batch() const;

  // Generation with the sampler on the GPU (kernels/sample). Each step
  // samples its logits where the lm_head left them and copies the token into
  // the next step's input, so the host submits step s + 1 before it reads
  // step s's token and the GPU does not wait for the host between tokens.
  //   begin_generation: the first token comes from the current logits (of
  //     the last eval); at most max_tokens tokens, and no step past the cache.
  //     cfg must pass gpu_sampling_unsupported (greedy, or top-k in 1..256;
  //     penalties over at most 1024 tokens); the draws come from
  //     std::mt19937_64(cfg.seed) as Sampler's do, so the tokens are the
  //     host sampler's except where a draw falls within float rounding of a
  //     boundary (the GPU sums in f32). `history`: the tokens accepted before
  //     (the prompt, as Sampler::accept had them), whose last repeat_last_n
  //     the penalties start from; each generated token joins them on the GPU.
  //     `with_logits`: each step also copies the logits its token was drawn
  //     from (before the penalties) into one of two mappable buffers, for
  //     token_logits() (log probabilities) while the next step runs.
  //   next_token: the next token; the step that evaluates it is queued first.
  //   token_logits: with_logits, the logits [n_vocab] next_token's token was
  //     drawn from, valid until the next next_token or end_generation.
  //   end_generation: waits for the queued steps; then the KV cache holds
  //     every taken token but the last, as a loop of Sampler::sample and
  //     eval(token) leaves it (n_past), and no logits are kept: eval(the last
  //     token) goes on from there.
  // eval() and set_inputs() throw between begin and end; reset() ends it.
  void begin_generation(const SamplerConfig& cfg, uint32_t max_tokens, std::span<const TokenId> history = {},
                        bool with_logits = false);
  // Makes the GPU sampler for cfg (compiles its kernels) before a
  // begin_generation with the same top-k and window, which would otherwise
  // make it.
  void prepare_generation(const SamplerConfig& cfg);
  TokenId next_token();
  std::span<const float> token_logits() const;
  void end_generation();
  bool generating() const;

  // For benchmarks: writes the inputs of `token` at position n_past()
  // without evaluating, and records the token's dispatches (all, or one
  // family's) into rec, the copy of the logits to the mapped buffer only when
  // `readback` (it is a copy, outside compute passes and their timestamps),
  // and, after a generation made a GPU sampler, its dispatches and the
  // copies of its token. The KV cache position does not advance.
  void set_inputs(TokenId token);
  void set_inputs(std::span<const TokenId> tokens);  // 1 to `batch` tokens
  void record(gpu::Recorder& rec, std::optional<KernelFamily> only = std::nullopt, bool readback = true) const;
  uint32_t dispatches_per_token() const;
  uint32_t submits_per_step() const;  // the pieces of submit_piece_ends
  // The host times of the last eval_step (or next_token: encode, submit and wait).
  const StepTimes& last_step() const;

  struct Impl;

 private:
  std::span<const float> step(std::span<const TokenId> tokens, bool all_rows);
  std::unique_ptr<Impl> impl_;
};

}  // namespace blockq::model
