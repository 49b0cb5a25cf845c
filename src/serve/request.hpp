// OpenAI-style generation requests (/v1/chat/completions, /v1/completions):
// the JSON body checked field by field into a GenerationRequest. A field of
// the wrong type or range, or one whose meaning blockq does not implement
// (n > 1, suffix, tools, ...), is a RequestError naming the field, so a
// client never gets a silently different answer. Unknown fields are ignored.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/chat_template.hpp"
#include "model/sampler.hpp"

namespace blockq::serve {

// A request the client must change: HTTP status 400 (or `status`), with the
// field at fault (OpenAI's error "param"; empty when none).
class RequestError : public std::runtime_error {
 public:
  RequestError(std::string param, const std::string& message, int status = 400)
      : std::runtime_error(message), param_(std::move(param)), status_(status) {}
  const std::string& param() const { return param_; }
  int status() const { return status_; }

 private:
  std::string param_;
  int status_;
};

enum class Endpoint { Chat, Completion };

struct GenerationRequest {
  Endpoint endpoint = Endpoint::Chat;
  std::string model;                          // as sent ("" when absent)
  std::vector<model::ChatMessage> messages;   // Chat: at least one
  std::string prompt;                         // Completion, as text
  std::vector<int64_t> prompt_ids;            // or as token ids (checked against the vocabulary later)
  // Completion: every prompt sent (a list of them gives n choices each, in
  // order); prompt and prompt_ids hold the first. For each, ids empty: text.
  struct Prompt {
    std::string text;
    std::vector<int64_t> ids;
  };
  std::vector<Prompt> prompts;
  std::optional<uint32_t> max_tokens;         // unset: Completion 16, Chat to the context's end
  model::SamplerConfig sampler;               // the server's defaults, overridden by the request
  bool seeded = false;                        // "seed" was given (else a fresh seed per request)
  std::vector<std::string> stop;              // at most kMaxStops, none empty
  bool stream = false;
  bool include_usage = false;                 // stream_options.include_usage
  bool ignore_eos = false;                    // llama.cpp's: end-of-generation tokens do not end it
  // Log probabilities of the generated tokens, with this many most likely
  // alternatives each (chat: "logprobs": true and "top_logprobs"; completion:
  // "logprobs": N); unset: none.
  std::optional<uint32_t> logprobs;
  // Completion: the answer's text starts with the prompt's (its tokens'
  // pieces), and with logprobs the prompt tokens' come first (the first has
  // none); max_tokens may then be 0.
  bool echo = false;
  // Choices, generated one after another (the prompt from the cache after
  // the first); choice i draws with seed + i.
  uint32_t n = 1;
};

inline constexpr uint32_t kMaxTopLogprobs = 20;  // OpenAI's chat limit
inline constexpr uint32_t kMaxChoices = 16;
inline constexpr size_t kMaxPrompts = 64;  // prompts of one completion request

inline constexpr size_t kMaxStops = 16;
inline constexpr uint32_t kCompletionDefaultMaxTokens = 16;  // OpenAI's for /v1/completions

// Throws RequestError. `defaults` supplies the sampler settings the request
// leaves out (temperature, top_p, top_k, min_p, penalties, seed).
GenerationRequest parse_request(Endpoint endpoint, const nlohmann::json& body,
                                const model::SamplerConfig& defaults);

}  // namespace blockq::serve
