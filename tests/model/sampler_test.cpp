// Sampler tests: greedy, penalties with llama.cpp's sign rule, top-k, top-p,
// min-p, and determinism under a seed.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "model/sampler.hpp"
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

TEST(Sampler, RejectsBadConfig) {
  SamplerConfig cfg;
  cfg.repeat_penalty = 0.0f;
  EXPECT_THROW(Sampler{cfg}, Error);
  EXPECT_THROW(Sampler{}.sample({}), Error);
}

}  // namespace
}  // namespace blockq::model
