// Next-token sampling: penalties, top-k, top-p, min-p, temperature, draw.
#include "model/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "util/error.hpp"

namespace blockq::model {

namespace {

void sort_desc(std::vector<Candidate>& c) {
  std::stable_sort(c.begin(), c.end(),
                   [](const Candidate& a, const Candidate& b) { return a.logit > b.logit; });
}

}  // namespace

void apply_penalties(std::vector<Candidate>& c, std::span<const TokenId> recent, float repeat,
                     float frequency, float presence) {
  if (recent.empty() || (repeat == 1.0f && frequency == 0.0f && presence == 0.0f)) return;
  std::unordered_map<TokenId, int> count;
  for (TokenId t : recent) ++count[t];
  for (Candidate& x : c) {
    const auto it = count.find(x.id);
    if (it == count.end()) continue;
    if (x.logit <= 0.0f)
      x.logit *= repeat;
    else
      x.logit /= repeat;
    x.logit -= float(it->second) * frequency + presence;
  }
}

void apply_top_k(std::vector<Candidate>& c, int k) {
  sort_desc(c);
  if (k > 0 && size_t(k) < c.size()) c.resize(size_t(k));
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
  softmax(c);
  double cum = 0.0;
  size_t keep = c.size();
  for (size_t i = 0; i < c.size(); ++i) {
    cum += c[i].p;
    if (cum >= p) {
      keep = i + 1;
      break;
    }
  }
  c.resize(keep);
}

void apply_min_p(std::vector<Candidate>& c, float p) {
  if (p <= 0.0f || c.size() <= 1) return;
  sort_desc(c);
  // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p)
  const float cut = c.front().logit + std::log(p);
  size_t keep = 1;
  while (keep < c.size() && c[keep].logit >= cut) ++keep;
  c.resize(keep);
}

void apply_temperature(std::vector<Candidate>& c, float t) {
  BQ_CHECK(t > 0.0f, "temperature {} must be positive here (<= 0 means greedy)", t);
  for (Candidate& x : c) x.logit /= t;
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

TokenId Sampler::sample(std::span<const float> logits) {
  BQ_CHECK(!logits.empty(), "sampling from an empty logits vector");
  std::vector<Candidate> c(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) c[i] = {TokenId(i), logits[i]};
  const std::vector<TokenId> recent(recent_.begin(), recent_.end());
  apply_penalties(c, recent, cfg_.repeat_penalty, cfg_.frequency_penalty, cfg_.presence_penalty);
  if (cfg_.temperature <= 0.0f) {
    size_t best = 0;
    for (size_t i = 1; i < c.size(); ++i)
      if (c[i].logit > c[best].logit) best = i;
    return c[best].id;
  }
  apply_top_k(c, cfg_.top_k);
  apply_top_p(c, cfg_.top_p);
  apply_min_p(c, cfg_.min_p);
  apply_temperature(c, cfg_.temperature);
  softmax(c);
  // A uniform double in [0, 1) from the top 53 bits: the same on every platform.
  const double u = double(rng_() >> 11) * 0x1.0p-53;
  double cum = 0.0;
  for (const Candidate& x : c) {
    cum += x.p;
    if (u < cum) return x.id;
  }
  return c.back().id;
}

}  // namespace blockq::model
