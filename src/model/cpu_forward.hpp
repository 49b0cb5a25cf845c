// A readable CPU reference of the llama/qwen2 decoder (llm.c style), run one
// token at a time against a KV cache:
//   x = token_embd[token]                                   [n_embd]
//   per layer:  h = rmsnorm(x) * attn_norm
//               q = Wq h (+bq) [n_head, head_dim], k, v = Wk h, Wv h (+b) [n_head_kv, head_dim]
//               rope(q, k) at position pos (llama: pairs (2i, 2i+1); qwen2: (i, i + head_dim/2))
//               cache k, v (f32, or rounded to f16); a = softmax(q . K / sqrt(head_dim)) V  (GQA: head h reads kv head
//               h / (n_head / n_head_kv)), causal because the cache holds positions <= pos
//               x += Wo a
//               h = rmsnorm(x) * ffn_norm;  x += Wdown (silu(Wgate h) * Wup h)
//   logits = W_out (rmsnorm(x) * output_norm)               [n_vocab]  (W_out = token_embd if tied)
// Weights stay in their GGUF format and are dequantized a row at a time with
// the format traits.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gguf/gguf.hpp"
#include "model/config.hpp"
#include "model/tokenizer.hpp"

namespace blockq::model {

enum class ForwardMode {
  F32,   // every value and sum in f32, sums in index order: the plain reference
  F64,   // activations and sums in double: the accurate reference
  Ggml,  // f32 like F32, but the input of each weight product rounded as ggml's CPU
         // backend does (q8_0 blocks for 32-element formats, q8_K for K-quants, f16/bf16
         // for 16-bit weights), and ggml's f32 RoPE angles: logits comparable to
         // llama.cpp's (its q8 roundings depend on the exact f32 inputs, so this mode
         // stays in f32: double activations flip a few roundings and move
         // probabilities by up to 1e-2)
};

struct ForwardOptions {
  ForwardMode mode = ForwardMode::F32;
  uint32_t n_ctx = 0;    // KV cache positions; 0: min(context_length, 4096)
  unsigned threads = 0;  // for the weight products; 0: hardware concurrency
  // F16: cached k and v are rounded to f16 (nearest even, like the GPU's
  // pack2x16float); in Ggml mode also q before q.K and the softmax weights
  // before the sum over V, as ggml's f16 matrix products round their f32 input.
  KvType kv = KvType::F32;
};

class CpuModel {
 public:
  // Reads the config, checks every tensor's shape and keeps the file mapped.
  explicit CpuModel(gguf::GgufFile file, ForwardOptions opt = {});
  ~CpuModel();
  CpuModel(CpuModel&&) noexcept;
  CpuModel& operator=(CpuModel&&) noexcept;

  const ModelConfig& config() const;
  const ForwardOptions& options() const;

  // Evaluates one token at position n_past() and returns its next-token
  // logits [n_vocab] (valid until the next call). Throws blockq::Error for an
  // id outside the vocabulary or a full cache.
  std::span<const float> eval(TokenId token);
  // Evaluates tokens in order; the logits after the last one.
  std::span<const float> eval(std::span<const TokenId> tokens);
  // The same logits before rounding to float (F64 and Ggml modes; F32 widened).
  std::span<const double> logits_f64() const;
  uint32_t n_past() const;
  // Empties the KV cache.
  void reset();

  struct Impl;  // implementation (cpu_forward.cpp)

 private:
  std::unique_ptr<Impl> impl_;
};

// Greedy continuation: evaluates the prompt, then n tokens, each the argmax
// (lowest id on a tie) of the previous logits. Does not stop at EOS.
std::vector<TokenId> generate_greedy(CpuModel& model, std::span<const TokenId> prompt, size_t n);

// Softmax of logits in double.
std::vector<double> softmax(std::span<const double> logits);

}  // namespace blockq::model
