// Sampler tests: greedy, penalties with llama.cpp's sign rule, top-k, top-p,
// min-p, determinism under a seed, the same tokens as a chain that sorts
// everything, and NaN logits.
#include "model/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <random>

#include "util/error.hpp"

namespace blockq::model {
namespace {

std::vector<float> random_logits(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(Sampler, GreedyIsArgmax) {
  const auto lg = random_logits(500, 1);
  Sampler s;
  const TokenId best = TokenId(std::max_element(lg.begin(), lg.end()) - lg.begin());
  EXPECT_EQ(s.sample(lg), best);
  const std::vector<float> tie = {1.0f, 3.0f, 3.0f};
  EXPECT_EQ(s.sample(tie), 1);  // lowest id on a tie
}

TEST(Sampler, PenaltiesFollowLlamaCpp) {
  std::vector<Candidate> c = {{0, 2.0f}, {1, -2.0f}, {2, 1.0f}};
  const std::vector<TokenId> recent = {0, 1, 1};
  apply_penalties(c, recent, 2.0f, 0.5f, 0.25f);
  EXPECT_FLOAT_EQ(c[0].logit, 2.0f / 2.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(c[1].logit, -2.0f * 2.0f - 2 * 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(c[2].logit, 1.0f);
  // Greedy with a repeat penalty avoids the repeated token.
  SamplerConfig cfg;
  cfg.repeat_penalty = 10.0f;
  Sampler s(cfg);
  s.accept(0);
  EXPECT_EQ(s.sample(std::vector<float>{2.0f, 1.0f}), 1);
}

// The logit bias is added before the penalties (llama.cpp's chain): a ban
// (-inf) removes the best token, a large bias makes another win, ids outside
// the vocabulary are skipped; merge_logit_bias adds repeats up.
TEST(Sampler, LogitBiasComesBeforeThePenalties) {
  const auto lg = random_logits(500, 4);
  const TokenId best = TokenId(std::max_element(lg.begin(), lg.end()) - lg.begin());
  SamplerConfig cfg;
  cfg.logit_bias = {{best, -INFINITY}, {600, 50.0f}};
  Sampler ban(cfg);
  const TokenId second = ban.sample(lg);
  EXPECT_NE(second, best);
  std::vector<float> without = lg;
  without[size_t(best)] = -INFINITY;
  EXPECT_EQ(second, TokenId(std::max_element(without.begin(), without.end()) - without.begin()));
  cfg.logit_bias = {{7, 30.0f}};
  EXPECT_EQ(Sampler(cfg).sample(lg), 7);
  // Bias then penalty: (2 + 1) / 2 = 1.5; the other order would give
  // 2 / 2 + 1 = 2, which beats 1.6.
  cfg = {};
  cfg.repeat_penalty = 2.0f;
  cfg.logit_bias = {{0, 1.0f}};
  Sampler s(cfg);
  s.accept(0);
  EXPECT_EQ(s.sample(std::vector<float>{2.0f, 1.6f}), 1);  // (2 + 1) / 2 = 1.5 < 1.6
  Sampler s2(cfg);
  s2.accept(0);
  EXPECT_EQ(s2.sample(std::vector<float>{2.0f, 1.4f}), 0);  // 1.5 > 1.4
  const std::vector<std::pair<TokenId, float>> raw = {{9, 1.0f}, {3, -2.0f}, {9, 0.5f}};
  EXPECT_EQ(merge_logit_bias(raw), (std::vector<std::pair<TokenId, float>>{{3, -2.0f}, {9, 1.5f}}));
}

TEST(Sampler, Filters) {
  std::vector<Candidate> c;
  for (int i = 0; i < 10; ++i) c.push_back({i, float(i)});
  auto k = c;
  apply_top_k(k, 3);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].id, 9);
  auto p = c;
  apply_top_p(p, 0.7f);  // softmax of 0..9: p9 = 0.632, p9 + p8 = 0.865
  EXPECT_EQ(p.size(), 2u);
  auto m = c;
  apply_min_p(m, 0.3f);  // keeps logits >= 9 + ln 0.3 = 7.8
  EXPECT_EQ(m.size(), 2u);
}

TEST(Sampler, SeededAndDeterministic) {
  const auto lg = random_logits(300, 2);
  SamplerConfig cfg;
  cfg.temperature = 0.9f;
  cfg.top_k = 40;
  cfg.top_p = 0.95f;
  cfg.min_p = 0.02f;
  cfg.repeat_penalty = 1.1f;
  cfg.seed = 1234;
  const auto run = [&] {
    Sampler s(cfg);
    std::vector<TokenId> out;
    for (int i = 0; i < 64; ++i) {
      out.push_back(s.sample(lg));
      s.accept(out.back());
    }
    return out;
  };
  const auto a = run(), b = run();
  EXPECT_EQ(a, b);
  std::map<TokenId, int> distinct;
  for (TokenId t : a) ++distinct[t];
  EXPECT_GT(distinct.size(), 3u);  // it samples, not argmax
  cfg.seed = 99;
  EXPECT_NE(run(), a);
}

TEST(Sampler, FrequenciesFollowTheSoftmax) {
  const std::vector<float> lg = {0.0f, std::log(3.0f)};  // p = 1/4, 3/4
  SamplerConfig cfg;
  cfg.temperature = 1.0f;
  cfg.repeat_last_n = 0;
  Sampler s(cfg);
  int ones = 0;
  for (int i = 0; i < 20000; ++i) ones += s.sample(lg) == 1;
  EXPECT_NEAR(ones / 20000.0, 0.75, 0.015);
}

// The chain as documented, written plainly: every step sorts all of its
// candidates (stable, by logit; ties keep the id order), as the sampler did
// before it learnt to select. The sampler must draw the same tokens.
struct ReferenceSampler {
  SamplerConfig cfg;
  std::mt19937_64 rng;
  std::deque<TokenId> recent;
  explicit ReferenceSampler(SamplerConfig c) : cfg(c), rng(c.seed) {}
  static void sort_all(std::vector<Candidate>& c) {
    std::stable_sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) { return a.logit > b.logit; });
  }
  TokenId sample(std::span<const float> logits) {
    std::vector<Candidate> c;
    for (size_t i = 0; i < logits.size(); ++i) c.push_back({TokenId(i), logits[i]});
    const std::vector<TokenId> r(recent.begin(), recent.end());
    apply_penalties(c, r, cfg.repeat_penalty, cfg.frequency_penalty, cfg.presence_penalty);
    if (cfg.temperature <= 0.0f) {
      size_t best = 0;
      for (size_t i = 1; i < c.size(); ++i)
        if (c[i].logit > c[best].logit) best = i;
      return c[best].id;
    }
    if (cfg.top_k > 0) {
      sort_all(c);
      if (size_t(cfg.top_k) < c.size()) c.resize(size_t(cfg.top_k));
    }
    if (cfg.top_p < 1.0f && c.size() > 1) {
      float mx = c[0].logit;
      for (const Candidate& x : c) mx = std::max(mx, x.logit);
      double sum = 0.0;
      for (const Candidate& x : c) sum += std::exp(x.logit - mx);  // in their order
      sort_all(c);
      double cum = 0.0;
      for (size_t i = 0; i < c.size(); ++i) {
        cum += float(std::exp(c[i].logit - mx) / sum);
        if (cum >= cfg.top_p) {
          c.resize(i + 1);
          break;
        }
      }
    }
    if (cfg.min_p > 0.0f && c.size() > 1) {
      sort_all(c);
      const float cut = c[0].logit + std::log(cfg.min_p);
      size_t keep = 1;
      while (keep < c.size() && c[keep].logit >= cut) ++keep;
      c.resize(keep);
    }
    for (Candidate& x : c) x.logit /= cfg.temperature;
    sort_all(c);
    const float mx = c[0].logit;
    double sum = 0.0;
    for (Candidate& x : c) sum += (x.p = std::exp(x.logit - mx));
    const double u = double(rng() >> 11) * 0x1.0p-53;
    double cum = 0.0;
    for (const Candidate& x : c)
      if (u < (cum += float(x.p / sum))) return x.id;
    return c.back().id;
  }
  void accept(TokenId t) {
    if (cfg.repeat_last_n == 0) return;
    recent.push_back(t);
    while (recent.size() > size_t(cfg.repeat_last_n)) recent.pop_front();
  }
};

TEST(Sampler, SameTokensAsSortingEverything) {
  // 5000 logits on a grid of 1/8, so many tie; a second set on a grid of 1/2,
  // where the k-th best ties with many others.
  auto lg = random_logits(5000, 7), coarse = lg;
  for (float& x : lg) x = std::round(x * 8.0f) / 8.0f;
  for (float& x : coarse) x = std::round(x * 2.0f) / 2.0f;
  // And a plateau: every 7th id at 4, three at 5, the rest below 3, so the
  // k-th best is one of hundreds of equals.
  std::vector<float> plateau = lg;
  for (size_t i = 0; i < plateau.size(); ++i) plateau[i] = i % 7 == 0 ? 4.0f : std::min(plateau[i], 3.0f);
  plateau[100] = plateau[2500] = plateau[4999] = 5.0f;
  struct Cfg {
    float t;
    int k;
    float p, min_p, repeat, freq, presence;
  };
  const Cfg cfgs[] = {{0.8f, 40, 0.95f, 0.05f, 1.0f, 0.0f, 0.0f}, {1.0f, 0, 0.9f, 0.0f, 1.0f, 0.0f, 0.0f},
                      {0.7f, 0, 1.0f, 0.1f, 1.0f, 0.0f, 0.0f},    {1.3f, 6000, 0.5f, 0.0f, 1.0f, 0.0f, 0.0f},
                      {1.0f, 1, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f},    {1.5f, 0, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f},
                      {0.9f, 100, 0.8f, 0.02f, 1.3f, 0.1f, 0.2f}, {0.0f, 0, 1.0f, 0.0f, 1.3f, 0.1f, 0.2f},
                      {2.0f, 64, 0.999f, 0.0f, 1.0f, 0.0f, 0.0f}, {3.0f, 10, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f},
                      {3.0f, 50, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f}};
  for (const Cfg& f : cfgs) {
    for (const std::vector<float>* data : {&lg, &coarse, &plateau}) {
      const SamplerConfig cfg{.temperature = f.t,
                              .top_k = f.k,
                              .top_p = f.p,
                              .min_p = f.min_p,
                              .repeat_penalty = f.repeat,
                              .frequency_penalty = f.freq,
                              .presence_penalty = f.presence,
                              .seed = 42};
      Sampler s(cfg);
      ReferenceSampler r(cfg);
      std::map<TokenId, int> distinct;
      for (int i = 0; i < 120; ++i) {
        const TokenId a = s.sample(*data), b = r.sample(*data);
        ASSERT_EQ(a, b) << "draw " << i << " of t " << f.t << " k " << f.k << " p " << f.p << " min_p " << f.min_p
                        << " repeat " << f.repeat
                        << (data == &coarse    ? " (grid of 1/2)"
                            : data == &plateau ? " (plateau)"
                                               : "");
        s.accept(a);
        r.accept(b);
        ++distinct[a];
      }
      if (f.t > 0.0f && f.k != 1) {
        EXPECT_GT(distinct.size(), 2u) << "t " << f.t << " k " << f.k;
      }
    }
  }
}

TEST(Sampler, GreedyFindsTheFirstMaximumAcrossBlocks) {
  std::vector<float> lg = random_logits(5000, 9);
  lg[4500] = lg[3000] = lg[3001] = 50.0f;  // ties in later blocks of 1024
  lg[10] = 49.0f;
  EXPECT_EQ(Sampler{}.sample(lg), 3000);
  lg[1023] = 50.0f;  // the last element of the first block
  EXPECT_EQ(Sampler{}.sample(lg), 1023);
  EXPECT_EQ(Sampler{}.sample(std::vector<float>(3000, -INFINITY)), 0);
  std::vector<float> tail(2051, 1.0f);
  tail[2050] = 2.0f;  // in the short last block
  EXPECT_EQ(Sampler{}.sample(tail), 2050);
}

TEST(Sampler, NanLogitsNeverWin) {
  const float nan = std::nanf("");
  const std::vector<float> lg = {nan, 1.0f, nan, 2.0f, -1.0f};
  EXPECT_EQ(Sampler{}.sample(lg), 3);
  SamplerConfig cfg;
  cfg.temperature = 1.0f;
  cfg.top_k = 2;
  Sampler s(cfg);
  for (int i = 0; i < 50; ++i) {
    const TokenId t = s.sample(lg);
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

TEST(Sampler, RejectsBadConfig) {
  SamplerConfig cfg;
  cfg.repeat_penalty = 0.0f;
  EXPECT_THROW(Sampler{cfg}, Error);
  EXPECT_THROW(Sampler{}.sample({}), Error);
}

}  // namespace
}  // namespace blockq::model
