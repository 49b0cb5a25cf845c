// Next-token sampling: greedy, temperature, top-k, top-p, min-p and llama.cpp's
// repetition penalties, seeded with std::mt19937_64 so that fixed settings
// give the same tokens every run.
//
// Order (as llama.cpp's default chain): penalties over the last
// repeat_last_n accepted tokens, top-k, top-p, min-p, temperature, then a
// draw from the softmax. temperature <= 0 is greedy: the highest logit after
// the penalties (the lowest id on a tie), and the filters are skipped.
#pragma once
#include <cmath>
#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "model/tokenizer.hpp"

namespace blockq::model {

struct SamplerConfig {
  float temperature = 0.0f;      // <= 0: greedy
  int top_k = 0;                 // <= 0: off
  float top_p = 1.0f;            // >= 1: off
  float min_p = 0.0f;            // <= 0: off
  float repeat_penalty = 1.0f;   // 1: off. A seen token's logit is divided by it when
                                 // positive, multiplied when negative (llama.cpp)
  float frequency_penalty = 0.0f;  // subtracted once per occurrence
  float presence_penalty = 0.0f;   // subtracted once if the token occurred
  int repeat_last_n = 64;        // how many recent tokens the penalties look at
  uint64_t seed = 0;
  // Added to the logits before the penalties (llama.cpp's logit_bias; -inf
  // bans a token). Distinct ids (merge_logit_bias); ids outside the
  // vocabulary are skipped.
  std::vector<std::pair<TokenId, float>> logit_bias;
};

// (id, bias) pairs as SamplerConfig::logit_bias takes them: each id once, in
// ascending order, its biases added up in the given order (f32).
std::vector<std::pair<TokenId, float>> merge_logit_bias(std::span<const std::pair<TokenId, float>> entries);

struct Candidate {
  TokenId id;
  float logit;
  float p = 0.0f;  // filled by softmax
};

// Rank order: the higher logit first, the lower id on a tie, NaN last.
inline bool ranks_before(const Candidate& a, const Candidate& b) {
  const bool an = std::isnan(a.logit), bn = std::isnan(b.logit);
  if (an != bn) return bn;
  if (!an && a.logit != b.logit) return a.logit > b.logit;
  return a.id < b.id;
}

// The individual steps, exposed for tests. After top_k (when on), top_p,
// min_p and softmax the candidates are in rank order; top_k off (<= 0 or at
// least the count) and top_p off leave their order alone.
void apply_penalties(std::vector<Candidate>& c, std::span<const TokenId> recent, float repeat,
                     float frequency, float presence);
void apply_top_k(std::vector<Candidate>& c, int k);
void apply_top_p(std::vector<Candidate>& c, float p);
void apply_min_p(std::vector<Candidate>& c, float p);
void apply_temperature(std::vector<Candidate>& c, float t);
void softmax(std::vector<Candidate>& c);  // sorts, sets p

// A draw: a uniform double in [0, 1) from the top 53 bits of the generator
// (the same on every platform). Sampler::sample takes one per non-greedy
// token, and so does the GPU sampler (GpuModel::begin_generation).
inline double uniform_draw(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

// Whether the penalties change anything: a window (repeat_last_n > 0) and
// a penalty that is not neutral.
bool penalties_on(const SamplerConfig& cfg);

// Why `cfg` cannot be sampled on the GPU (kernels/sample), or empty when it
// can: greedy, or top-k in 1..sample::kMaxTopK; penalties over a window of
// at most sample::kMaxPenaltyWindow tokens.
std::string gpu_sampling_unsupported(const SamplerConfig& cfg);

class Sampler {
 public:
  explicit Sampler(SamplerConfig cfg = {});

  // Chooses the next token from the logits of the whole vocabulary.
  TokenId sample(std::span<const float> logits);
  // Records a token (prompt or generated) for the penalties.
  void accept(TokenId id);
  void accept(std::span<const TokenId> ids) {
    for (TokenId t : ids) accept(t);
  }
  // Forgets the history and reseeds.
  void reset();
  const SamplerConfig& config() const { return cfg_; }

 private:
  SamplerConfig cfg_;
  std::mt19937_64 rng_;
  std::deque<TokenId> recent_;
  std::vector<float> work_;       // [n_vocab] the logits after the penalties
  std::vector<Candidate> cand_;   // the candidates the filters keep
};

}  // namespace blockq::model
