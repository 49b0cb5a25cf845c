// The GPU sampler's twin (twin.hpp): penalty.wgsl's slots, and pick.wgsl's
// f32 arithmetic statement for statement on the K best candidates in rank
// order.
#include "kernels/sample/twin.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "util/error.hpp"

namespace blockq::sample::twin {

namespace {

constexpr uint32_t kNegInfKey = 0x007fffffu;

float logit_of(uint32_t key) {
  return std::bit_cast<float>((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

}  // namespace

Pick pick(std::span<const float> logits, uint32_t top_k, const Params& prm) {
  BQ_CHECK(top_k >= 1 && top_k <= std::min<size_t>(kMaxTopK, logits.size()), "sampler twin: top-k {} of {} logits",
           top_k, logits.size());
  std::vector<uint32_t> idx(logits.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::vector<uint32_t> key(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) key[i] = rank_key(logits[i]);
  auto before = [&](uint32_t a, uint32_t b) { return key[a] > key[b] || (key[a] == key[b] && a < b); };
  std::partial_sort(idx.begin(), idx.begin() + top_k, idx.end(), before);
  idx.resize(top_k);
  Pick out;
  out.top = idx;
  std::vector<uint32_t> sk(top_k);
  for (uint32_t i = 0; i < top_k; ++i) sk[i] = key[idx[i]];
  auto l = [&](uint32_t i) { return logit_of(sk[i]); };
  auto gap = [&](double a, double b) { out.margin = std::min(out.margin, std::abs(a - b)); };

  uint32_t n = top_k;
  while (n > 1 && sk[n - 1] <= kNegInfKey) --n;
  uint32_t at = 0;
  float p = 1.0f;
  const float t = prm.temperature;
  if (t > 0.0f) {
    const float mx = l(0);
    if (prm.top_p < 1.0f && n > 1) {
      float sum = 0.0f;
      for (uint32_t i = 0; i < n; ++i) sum = sum + std::exp(l(i) - mx);
      float cum = 0.0f;
      for (uint32_t i = 0; i < n; ++i) {
        cum = cum + std::exp(l(i) - mx) / sum;
        gap(cum, prm.top_p);
        if (cum >= prm.top_p) {
          n = i + 1;
          break;
        }
      }
    }
    if (prm.min_p > 0.0f && n > 1) {
      const float cut = mx + std::log(prm.min_p);
      uint32_t keep = 1;
      while (keep < n && l(keep) >= cut) gap(l(keep), cut), ++keep;
      if (keep < n) gap(l(keep), cut);
      n = keep;
    }
    const float m = mx / t;
    float sum = 0.0f;
    for (uint32_t i = 0; i < n; ++i) sum = sum + std::exp(l(i) / t - m);
    float cum = 0.0f;
    at = n - 1;
    for (uint32_t i = 0; i < n; ++i) {
      const float q = std::exp(l(i) / t - m) / sum;
      cum = cum + q;
      gap(cum, prm.u);
      if (prm.u < cum) {
        at = i;
        break;
      }
    }
    p = std::exp(l(at) / t - m) / sum;
    double sd = 0;
    for (uint32_t i = 0; i < n; ++i) sd += std::exp(double(l(i)) / t - double(m));
    out.p_ref = std::exp(double(l(at)) / t - double(m)) / sd;
  }
  out.token = idx[at];
  out.p = p;
  return out;
}

void penalize(std::span<float> logits, std::span<const uint32_t> recent, const Penalties& p) {
  const size_t w = recent.size();
  for (size_t i = 0; i < w; ++i) {
    const uint32_t id = recent[i];
    uint32_t count = 0;
    bool first = id < logits.size();
    for (size_t j = 0; j < w && first; ++j)
      if (recent[j] == id) {
        first = j >= i;
        ++count;
      }
    if (!first) continue;
    float l = logits[id];
    l = l <= 0.0f ? l * p.repeat : l / p.repeat;
    logits[id] = l - (float(count) * p.frequency + p.presence);
  }
}

void add_bias(std::span<float> logits, std::span<const uint32_t> ids, std::span<const float> bias) {
  for (size_t i = 0; i < ids.size() && i < bias.size(); ++i)
    if (ids[i] < logits.size()) logits[ids[i]] += bias[i];
}

}  // namespace blockq::sample::twin
