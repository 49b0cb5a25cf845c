// Next-token sampling: penalties, top-k, top-p, min-p, temperature, draw.
// Over a whole vocabulary (128k logits) nothing sorts more than it keeps:
// top-k selects with a heap of k, top-p sorts growing prefixes, min-p filters
// before it sorts (a full sort of 128k candidates took 11 ms a token).
#include "model/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "kernels/sample/sample.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

void sort_desc(std::vector<Candidate>& c) { std::sort(c.begin(), c.end(), ranks_before); }

// The logit of a token seen `count` times among the recent ones (llama.cpp's rule).
float penalized(float logit, int count, float repeat, float frequency, float presence) {
  logit = logit <= 0.0f ? logit * repeat : logit / repeat;
  return logit - (float(count) * frequency + presence);
}

// The first candidate in rank order (the highest logit, the lowest id on a tie).
size_t best_index(const std::vector<Candidate>& c) {
  size_t best = 0;
  for (size_t i = 1; i < c.size(); ++i)
    if (ranks_before(c[i], c[best])) best = i;
  return best;
}

// The index of the first highest value (NaN never wins; 0 if all are NaN or
// -inf), in one pass: each block of 1024 gets its maximum by 8 running maxima
// the compiler keeps in vector registers, and only a block that raises the
// best is searched again (from the cache) for its first index.
size_t first_max(std::span<const float> v) {
  constexpr size_t kBlock = 1024;
  float best = -INFINITY;
  size_t at = 0;
  for (size_t b0 = 0; b0 < v.size(); b0 += kBlock) {
    const size_t e = std::min(v.size(), b0 + kBlock);
    float m[8];
    std::fill(m, m + 8, -INFINITY);
    size_t i = b0;
    for (; i + 8 <= e; i += 8)
      for (int j = 0; j < 8; ++j) m[j] = v[i + j] > m[j] ? v[i + j] : m[j];
    float bm = -INFINITY;
    for (int j = 0; j < 8; ++j) bm = m[j] > bm ? m[j] : bm;
    for (; i < e; ++i) bm = v[i] > bm ? v[i] : bm;
    if (bm > best) {
      best = bm;
      for (i = b0; v[i] != bm; ++i) {
      }
      at = i;
    }
  }
  return at;
}

}  // namespace

void apply_penalties(std::vector<Candidate>& c, std::span<const TokenId> recent, float repeat,
                     float frequency, float presence) {
  if (recent.empty() || (repeat == 1.0f && frequency == 0.0f && presence == 0.0f)) return;
  std::unordered_map<TokenId, int> count;
  for (TokenId t : recent) ++count[t];
  for (Candidate& x : c) {
    const auto it = count.find(x.id);
    if (it != count.end()) x.logit = penalized(x.logit, it->second, repeat, frequency, presence);
  }
}

void apply_top_k(std::vector<Candidate>& c, int k) {
  if (k <= 0 || size_t(k) >= c.size()) {
    if (k > 0) sort_desc(c);
    return;
  }
  std::nth_element(c.begin(), c.begin() + (k - 1), c.end(), ranks_before);
  c.resize(size_t(k));
  sort_desc(c);
}

void softmax(std::vector<Candidate>& c) {
  sort_desc(c);
  if (c.empty()) return;
  const float mx = c.front().logit;
  double sum = 0.0;
  for (Candidate& x : c) {
    x.p = std::exp(x.logit - mx);
    sum += x.p;
  }
  for (Candidate& x : c) x.p = float(x.p / sum);
}

void apply_top_p(std::vector<Candidate>& c, float p) {
  if (p >= 1.0f || c.size() <= 1) return;
  // The normalizer over every candidate, summed in their order; then the
  // shortest prefix of the rank order whose probabilities reach p, sorting
  // 64, 512, ... candidates until it is found.
  const float mx = c[best_index(c)].logit;
  double sum = 0.0;
  for (const Candidate& x : c) sum += std::exp(x.logit - mx);
  size_t sorted = std::min<size_t>(c.size(), 64);
  while (true) {
    std::partial_sort(c.begin(), c.begin() + sorted, c.end(), ranks_before);
    double cum = 0.0;
    for (size_t i = 0; i < sorted; ++i) {
      c[i].p = float(std::exp(c[i].logit - mx) / sum);
      cum += c[i].p;
      if (cum >= p) {
        c.resize(i + 1);
        return;
      }
    }
    if (sorted == c.size()) return;  // rounding: every candidate stays
    sorted = std::min(c.size(), sorted * 8);
  }
}

void apply_min_p(std::vector<Candidate>& c, float p) {
  if (p <= 0.0f || c.size() <= 1) return;
  // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p); the best always stays.
  const Candidate best = c[best_index(c)];
  const float cut = best.logit + std::log(p);
  std::erase_if(c, [&](const Candidate& x) { return !(x.logit >= cut) && x.id != best.id; });
  sort_desc(c);
}

void apply_temperature(std::vector<Candidate>& c, float t) {
  BQ_CHECK(t > 0.0f, "temperature {} must be positive here (<= 0 means greedy)", t);
  for (Candidate& x : c) x.logit /= t;
}

bool penalties_on(const SamplerConfig& c) {
  return c.repeat_last_n > 0 && (c.repeat_penalty != 1.0f || c.frequency_penalty != 0.0f || c.presence_penalty != 0.0f);
}

std::string gpu_sampling_unsupported(const SamplerConfig& c) {
  if (penalties_on(c) && uint32_t(c.repeat_last_n) > sample::kMaxPenaltyWindow)
    return fmt::format("repeat_last_n {} is above the GPU sampler's window of {}", c.repeat_last_n,
                       sample::kMaxPenaltyWindow);
  if (c.temperature <= 0.0f) return {};
  if (c.top_k <= 0) return "top-k off (the whole vocabulary) runs on the host sampler";
  if (uint32_t(c.top_k) > sample::kMaxTopK)
    return fmt::format("top-k {} is above the GPU sampler's {}", c.top_k, sample::kMaxTopK);
  return {};
}

Sampler::Sampler(SamplerConfig cfg) : cfg_(cfg), rng_(cfg.seed) {
  BQ_CHECK(cfg_.repeat_penalty > 0.0f, "repeat_penalty {} must be positive", cfg_.repeat_penalty);
  BQ_CHECK(cfg_.repeat_last_n >= 0, "repeat_last_n {} must not be negative", cfg_.repeat_last_n);
}

void Sampler::reset() {
  recent_.clear();
  rng_.seed(cfg_.seed);
}

void Sampler::accept(TokenId id) {
  if (cfg_.repeat_last_n == 0) return;
  recent_.push_back(id);
  while (recent_.size() > size_t(cfg_.repeat_last_n)) recent_.pop_front();
}

std::vector<std::pair<TokenId, float>> merge_logit_bias(std::span<const std::pair<TokenId, float>> entries) {
  std::map<TokenId, float> m;
  for (const auto& [id, b] : entries) m[id] += b;
  return {m.begin(), m.end()};
}

TokenId Sampler::sample(std::span<const float> logits) {
  BQ_CHECK(!logits.empty(), "sampling from an empty logits vector");
  // The logits, after the bias and the penalties (then in a buffer kept
  // between calls).
  std::span<const float> v = logits;
  const bool penalize = !recent_.empty() && (cfg_.repeat_penalty != 1.0f || cfg_.frequency_penalty != 0.0f ||
                                             cfg_.presence_penalty != 0.0f);
  if (penalize || !cfg_.logit_bias.empty()) {
    work_.assign(logits.begin(), logits.end());
    for (const auto& [id, b] : cfg_.logit_bias)
      if (id >= 0 && size_t(id) < work_.size()) work_[size_t(id)] += b;
    v = work_;
  }
  if (penalize) {
    std::unordered_map<TokenId, int> count;
    for (TokenId t : recent_) ++count[t];
    for (const auto& [id, n] : count)
      if (id >= 0 && size_t(id) < work_.size())
        work_[size_t(id)] = penalized(work_[size_t(id)], n, cfg_.repeat_penalty, cfg_.frequency_penalty,
                                      cfg_.presence_penalty);
    v = work_;
  }
  if (cfg_.temperature <= 0.0f) return TokenId(first_max(v));
  std::vector<Candidate>& c = cand_;
  c.clear();
  const size_t k = cfg_.top_k > 0 ? size_t(cfg_.top_k) : 0;
  if (k > 0 && k < v.size()) {
    // A heap of the k best so far, the worst on top. Scanning ids upwards, a
    // candidate ranks before the worst when its logit is higher, or when the
    // worst is NaN and it is not (an equal logit comes later and ranks after).
    size_t i = 0;
    for (; c.size() < k; ++i) {
      c.push_back({TokenId(i), v[i]});
      std::push_heap(c.begin(), c.end(), ranks_before);
    }
    for (; i < v.size(); ++i) {
      const float l = v[i], w = c.front().logit;
      if (l > w || (std::isnan(w) && !std::isnan(l))) {
        std::pop_heap(c.begin(), c.end(), ranks_before);
        c.back() = {TokenId(i), l};
        std::push_heap(c.begin(), c.end(), ranks_before);
      }
    }
    sort_desc(c);
  } else {
    c.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) c.push_back({TokenId(i), v[i]});
    apply_top_k(c, cfg_.top_k);
  }
  apply_top_p(c, cfg_.top_p);
  apply_min_p(c, cfg_.min_p);
  apply_temperature(c, cfg_.temperature);
  softmax(c);
  const double u = uniform_draw(rng_);
  double cum = 0.0;
  for (const Candidate& x : c) {
    cum += x.p;
    if (u < cum) return x.id;
  }
  return c.back().id;
}

}  // namespace blockq::model
