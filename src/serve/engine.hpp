// One loaded model serving generation requests, one at a time: the prompt
// (a chat rendered with the model's template, or plain text) is tokenized
// and checked against the context, then evaluated after its longest prefix
// that the KV cache already holds from the previous request, and tokens
// are sampled (on the GPU where the settings allow it) until an
// end-of-generation token, a stop string, max_tokens or the context's end.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.hpp"
#include "gpu/context.hpp"
#include "model/chat_template.hpp"
#include "model/gpu_model.hpp"
#include "model/tokenizer.hpp"
#include "serve/request.hpp"

namespace blockq::serve {

struct EngineOptions {
  std::string model_id;                 // the name /v1/models lists
  model::GpuModelOptions model;         // n_ctx, batch, ...
  bool gpu_sampler = true;              // false: every token sampled on the host
};

// A request tokenized and checked, ready to generate.
struct Prepared {
  GenerationRequest request;
  std::vector<model::TokenId> tokens;   // the prompt
  uint32_t max_tokens = 0;              // after the defaults and the context's end
};

enum class Finish { Stop, Length, Cancelled };

// A generated token's log probability: log softmax of the model's logits
// over the whole vocabulary, before penalties and temperature (as
// llama.cpp's server reports them), with the most likely alternatives.
struct TokenLogprob {
  struct Alt {
    model::TokenId id;
    std::string piece;
    float logprob;
  };
  model::TokenId id = 0;
  std::string piece;   // its text (bytes; may cut a UTF-8 sequence)
  float logprob = 0;
  bool none = false;   // no logprob: an echoed prompt's first token
  size_t offset = 0;   // where its text starts in the answer's text (the echoed prompt's included)
  std::vector<Alt> top;  // the `top` best in rank order (higher logit first, lower id on a tie)
};

// logits [n_vocab]: the log probability of `id` and the `top` best tokens
// (log-sum-exp in double). `piece`, `offset` and the alternatives' pieces
// are left empty.
TokenLogprob token_logprob(std::span<const float> logits, model::TokenId id, uint32_t top);

struct Outcome {
  std::string text;                     // everything sent (with echo, the prompt's text first)
  Finish finish = Finish::Stop;
  uint32_t prompt_tokens = 0;
  uint32_t cached_tokens = 0;           // of the prompt, already in the KV cache
  uint32_t completion_tokens = 0;       // sampled, an end-of-generation token included
  bool gpu_sampled = false;
  // With request.logprobs: one per token whose text was sent, in order (an
  // ending end-of-generation token and the tokens of a stop string have none;
  // with echo, the prompt's tokens first).
  std::vector<TokenLogprob> logprobs;
  // Host times, as `blockq run` reports them: the prompt's evaluation
  // (what the cache did not hold), then from the first token to the end.
  double prompt_ms = 0;
  double generation_ms = 0;
  // Tokens a second after the first (the first comes with the prompt).
  double tokens_per_second() const {
    return completion_tokens > 1 && generation_ms > 0 ? (completion_tokens - 1) * 1e3 / generation_ms : 0.0;
  }
};

class Engine {
 public:
  Engine(const gpu::Context& ctx, gguf::GgufFile file, EngineOptions opt);

  const std::string& model_id() const { return opt_.model_id; }
  uint32_t n_ctx() const { return model_.n_ctx(); }
  uint32_t n_vocab() const { return model_.config().n_vocab; }
  const model::Tokenizer& tokenizer() const { return tok_; }
  const model::ChatFormat& chat_format() const { return chat_; }

  // Throws RequestError: an empty prompt, or one the context cannot hold
  // with at least one token to generate.
  Prepared prepare(GenerationRequest r) const;
  // Generates. on_text gets each piece of text as it becomes safe to send
  // (UTF-8 complete, not part of a stop string), with the log probabilities
  // of the tokens whose text starts in it (request.logprobs; a token with
  // empty text goes with the next piece, or the last); returning false
  // cancels. With logprobs and the GPU sampler, each step's logits come back
  // beside its token (GpuModel::token_logits).
  // Requests wait for each other. A failure (e.g. a lost device) throws
  // blockq::Error and leaves the cache empty.
  using OnText = std::function<bool(std::string_view text, std::span<const TokenLogprob> logprobs)>;
  Outcome generate(const Prepared& p, const OnText& on_text);

 private:
  Outcome generate_locked(const Prepared& p, const OnText& on_text);

  EngineOptions opt_;
  model::Tokenizer tok_;
  model::ChatFormat chat_;
  model::GpuModel model_;
  std::mutex mu_;
  std::vector<model::TokenId> cached_;  // the tokens whose k and v the cache holds, in order
};

}  // namespace blockq::serve
