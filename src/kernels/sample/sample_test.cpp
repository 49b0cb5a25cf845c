// Parity of the GPU sampler (topk.wgsl rounds, pick.wgsl) with its twin: the
// top-K ids in rank order exactly, the greedy token exactly, and draws equal
// except within the twin's margin of a boundary; the picked probability
// against the twin and float64. Logits are random with ties, -0 and +0, NaN
// and -inf among them; the result is poisoned first. The penalties against
// the twin's on such logits, for windows with repeats, empty slots and ids
// past the vocabulary. Also rank_key's order,
// the plan's rounds and its errors, and the contract's cases run and
// replayed as exported Programs.
#include "kernels/sample/sample.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/sample/register.hpp"
#include "kernels/sample/twin.hpp"
#include "support/contract.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

namespace blockq::sample {
namespace {

// n logits from N(0, 3), then ties, signed zeros, NaN and -inf planted
// among them (`specials`: NaN and -inf too, else only ties and zeros).
std::vector<float> logits_for(uint32_t n, uint32_t seed, bool specials) {
  std::vector<float> v = testing_support::random_normal(n, seed, 0.0f, 3.0f);
  std::mt19937 rng(seed + 1);
  auto at = [&] { return size_t(rng() % n); };
  const float top = *std::max_element(v.begin(), v.end());
  for (int i = 0; i < 3; ++i) v[at()] = top;  // ties for the first place (lower id first)
  for (uint32_t i = 0; i < n / 50; ++i) v[at()] = v[at()];  // ties elsewhere
  v[at()] = 0.0f;
  v[at()] = -0.0f;
  if (specials) {
    for (int i = 0; i < 4; ++i) v[at()] = std::nanf("");
    for (int i = 0; i < 4; ++i) v[at()] = -INFINITY;
  }
  return v;
}

struct Got {
  uint32_t token;
  std::vector<uint32_t> top;
  float p;
};

// Runs the sampler once on a poisoned result; checks every word was written.
Got run(gpu::Context& ctx, const GpuSampler& s, const Params& prm, uint32_t k) {
  const std::vector<uint32_t> poison(k + 2, testing_support::kPoisonBits);
  ctx.upload<uint32_t>(s.result(), poison);
  s.set(ctx, prm);
  gpu::Recorder r(ctx);
  s.record(r);
  r.submit();
  const auto w = ctx.download<uint32_t>(s.result());
  for (uint32_t i = 0; i < k + 2; ++i) EXPECT_NE(w[i], testing_support::kPoisonBits) << "result word " << i << " never written";
  return {w[0], std::vector<uint32_t>(w.begin() + 1, w.begin() + 1 + k), std::bit_cast<float>(w[k + 1])};
}

TEST(SampleRankKey, OrdersAsTheHostSampler) {
  const std::vector<float> asc = {-INFINITY, -3e38f, -1.0f, -1e-40f, 0.0f, 1e-40f, 1.0f, 2.5f, 3e38f, INFINITY};
  for (size_t i = 1; i < asc.size(); ++i) EXPECT_LT(rank_key(asc[i - 1]), rank_key(asc[i])) << asc[i];
  EXPECT_EQ(rank_key(-0.0f), rank_key(0.0f));
  EXPECT_EQ(rank_key(std::nanf("")), 0u);
  EXPECT_EQ(rank_key(-std::nanf("")), 0u);
  EXPECT_LT(rank_key(std::nanf("")), rank_key(-INFINITY));
}

TEST(SamplePlan, RoundsShrinkToOneChunk) {
  gpu::Context& ctx = testing_support::test_context();
  const Plan p = plan(ctx, 128256, 40);
  ASSERT_FALSE(p.rounds.empty());
  EXPECT_EQ(p.rounds[0].n, 128256u);
  EXPECT_EQ(p.rounds[0].variant, 0u);
  for (size_t r = 1; r < p.rounds.size(); ++r) EXPECT_EQ(p.rounds[r].n, p.groups(r - 1) * 40);
  for (const KernelSpec& r : p.rounds) {
    EXPECT_GE(r.tile, 4u * 40);
    EXPECT_LE(uint64_t{r.tile} * 8, ctx.limits().maxComputeWorkgroupStorageSize);
    EXPECT_LE(r.wg, ctx.limits().maxComputeInvocationsPerWorkgroup);
  }
  // The pick selects from the power of two at or above its candidates.
  EXPECT_LE(p.pick.n, p.pick.tile);
  EXPECT_LT(p.pick.tile / 2, p.pick.n);
  EXPECT_EQ(p.pick.tile & (p.pick.tile - 1), 0u);
  EXPECT_LE(p.pick.wg, p.pick.tile / 2);
  EXPECT_LE(uint64_t{p.pick.tile} * 8 + std::bit_ceil(40u) * 8, ctx.limits().maxComputeWorkgroupStorageSize);
  const Plan greedy = plan(ctx, 128256, 1);  // a pair per invocation in workgroup memory
  ASSERT_FALSE(greedy.rounds.empty());
  EXPECT_EQ(greedy.rounds[0].tile, greedy.rounds[0].wg * Options{}.greedy_per_invocation);
  EXPECT_LE(uint64_t{greedy.rounds[0].wg} * 8, ctx.limits().maxComputeWorkgroupStorageSize);
  EXPECT_LE(uint64_t{greedy.pick.tile} * 8, ctx.limits().maxComputeWorkgroupStorageSize);
  const Plan small = plan(ctx, 300, 1);  // one chunk: the pick reads the logits
  EXPECT_TRUE(small.rounds.empty());
  EXPECT_EQ(small.pick.variant, 0u);
  EXPECT_EQ(small.pick.n, 300u);
  for (uint32_t bad : {0u, kMaxTopK + 1}) {
    try {
      plan(ctx, 128256, bad);
      ADD_FAILURE() << "top-k " << bad << " planned";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("top-k"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(plan(ctx, 10, 11), Error);  // more than the vocabulary
}

struct SelCase {
  uint32_t n, k, chunk;
};

class SampleTopK : public ::testing::TestWithParam<SelCase> {};

// The K best in rank order, the greedy token, and the probability at t = 1.
TEST_P(SampleTopK, SameAsTwin) {
  const SelCase c = GetParam();
  gpu::Context& ctx = testing_support::test_context();
  const std::vector<float> v = logits_for(c.n, c.n + c.k, true);
  const gpu::Buffer lb = ctx.storage<float>(v, "logits");
  const GpuSampler s(ctx, c.n, c.k, lb, {c.chunk});
  const Plan& pl = s.plan();
  const Got g = run(ctx, s, {}, c.k);
  const twin::Pick want = twin::pick(v, c.k, {});
  EXPECT_EQ(g.top, want.top) << c.n << " logits, top-" << c.k;
  EXPECT_EQ(g.token, want.token);
  EXPECT_EQ(g.token, want.top[0]);
  EXPECT_EQ(g.p, 1.0f);
  // Without NaN and -inf, at t = 1: the first candidate's probability.
  const std::vector<float> w = logits_for(c.n, c.n + c.k + 7, false);
  const gpu::Buffer lw = ctx.storage<float>(w, "logits2");
  const GpuSampler s2(ctx, c.n, c.k, lw, {c.chunk});
  const Params prm{1.0f, 1.0f, 0.0f, 0.0f};
  const Got g2 = run(ctx, s2, prm, c.k);
  const twin::Pick w2 = twin::pick(w, c.k, prm);
  EXPECT_EQ(g2.top, w2.top);
  EXPECT_EQ(g2.token, w2.token);
  const double e_twin = std::abs(g2.p - w2.p) / w2.p, e_ref = std::abs(g2.p - w2.p_ref) / w2.p_ref;
  fmt::print("{} logits, top-{}, chunk {} (wg {}), {} rounds, pick of {}: ids exact; p {:.6g}, rel err vs twin "
             "{:.3g}, vs float64 {:.3g}\n",
             c.n, c.k, pl.rounds.empty() ? 0 : pl.rounds[0].tile, pl.rounds.empty() ? 0 : pl.rounds[0].wg,
             pl.rounds.size(), pl.pick.n, g2.p, e_twin, e_ref);
  EXPECT_LT(e_twin, 1e-5);
  EXPECT_LT(e_ref, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SampleTopK,
                         ::testing::Values(SelCase{700, 1, 1024}, SelCase{700, 40, 1024}, SelCase{5000, 1, 1024},
                                           SelCase{20000, 1, 64},  // two greedy rounds (79 chunks of 256, then one)
                                           SelCase{5000, 40, 1024}, SelCase{5000, 256, 1024},
                                           SelCase{3001, 16, 64},  // three rounds of small chunks
                                           SelCase{49152, 40, 1024}));

// Draws: top-p, min-p and temperature as the twin, for many u.
TEST(SampleDraw, SameTokensAsTwinExceptAtBoundaries) {
  gpu::Context& ctx = testing_support::test_context();
  const uint32_t n = 3000;
  const std::vector<float> v = logits_for(n, 77, false);
  const gpu::Buffer lb = ctx.storage<float>(v, "logits");
  struct Cfg {
    uint32_t k;
    Params p;
  };
  const std::vector<Cfg> cfgs = {{40, {0.8f, 0.95f, 0.05f, 0}}, {40, {1.5f, 1.0f, 0.0f, 0}},
                                 {100, {1.0f, 0.5f, 0.0f, 0}}, {10, {0.3f, 1.0f, 0.2f, 0}}};
  std::mt19937_64 rng(5);
  int draws = 0, differ = 0;
  double worst_twin = 0, worst_ref = 0;
  for (const Cfg& cf : cfgs) {
    const GpuSampler s(ctx, n, cf.k, lb);
    for (int i = 0; i < 25; ++i) {
      Params prm = cf.p;
      prm.u = float(double(rng() >> 11) * 0x1.0p-53);
      const Got g = run(ctx, s, prm, cf.k);
      const twin::Pick w = twin::pick(v, cf.k, prm);
      EXPECT_EQ(g.top, w.top);
      ++draws;
      if (g.token != w.token) {
        ++differ;
        EXPECT_LT(w.margin, 1e-5) << "token " << g.token << " against the twin's " << w.token << " at u " << prm.u;
        continue;
      }
      worst_twin = std::max(worst_twin, std::abs(double(g.p) - w.p) / w.p);
      worst_ref = std::max(worst_ref, std::abs(g.p - w.p_ref) / w.p_ref);
    }
  }
  fmt::print("{} draws, {} differ from the twin (within its margin); p rel err vs twin {:.3g}, vs float64 {:.3g}\n",
             draws, differ, worst_twin, worst_ref);
  EXPECT_LE(differ, 1);
  EXPECT_LT(worst_twin, 1e-5);
  EXPECT_LT(worst_ref, 1e-5);
}

// A penalised logit's error against the twin's, relative to the larger of
// the result and the logit it came from: the GPU may round the division
// (2.5 ulp in WGSL) and contract a multiply-add, so where l / repeat and
// c * frequency + presence nearly cancel, only the operands' scale bounds
// the error (on the H200, up to 1.7e-5 relative to such a result).
double penalty_err(float got, float want, float before) {
  const double scale = std::max({std::abs(double(want)), std::abs(double(before)), 1e-30});
  return double(std::abs(got - want)) / scale;
}

struct PenCase {
  uint32_t n, k, window, chunk;
  float temperature;
  // The window: 0 mixed (below), 1 one id in every slot but the first 3,
  // 2 distinct ids (the hash table's fullest case).
  int ids = 0;
};

class SamplePenalty : public ::testing::TestWithParam<PenCase> {};

// The penalties (penalty.wgsl) on random logits with NaN, -inf and signed
// zeros, for a window holding repeats, empty slots, ids past the vocabulary
// and the best logits' ids: logits outside the window untouched bit for bit,
// the others the twin's within rounding; then the top-K ids and the token of
// the twin's penalised logits.
TEST_P(SamplePenalty, SameAsTwin) {
  const PenCase c = GetParam();
  gpu::Context& ctx = testing_support::test_context();
  const std::vector<float> v = logits_for(c.n, c.n + c.window, true);
  std::mt19937 rng(c.window);
  std::vector<uint32_t> recent(c.window);
  // Ids from a small range (so they repeat) and from the whole vocabulary,
  // empty slots, ids past it; the 3 best logits' ids in the first slots.
  for (uint32_t& id : recent) {
    const uint32_t r = rng() % 10;
    id = r < 5 ? rng() % std::min(c.n, 50u) : r < 8 ? rng() % c.n : r < 9 ? kNoToken : c.n + rng() % 7;
  }
  std::vector<uint32_t> order(c.n);
  for (uint32_t i = 0; i < c.n; ++i) order[i] = i;
  std::partial_sort(order.begin(), order.begin() + 3, order.end(),
                    [&](uint32_t a, uint32_t b) { return rank_key(v[a]) > rank_key(v[b]); });
  if (c.ids == 1) std::fill(recent.begin(), recent.end(), order[3]);
  if (c.ids == 2) {  // the best 3, then distinct others in random order
    ASSERT_LE(c.window, c.n);
    std::shuffle(order.begin() + 3, order.end(), rng);
    std::copy_n(order.begin(), c.window, recent.begin());
  }
  for (uint32_t i = 0; i < std::min(3u, c.window); ++i) recent[i] = order[i];
  const Penalties pen{1.5f, 0.25f, 0.5f};
  std::vector<float> want_l = v;
  twin::penalize(want_l, recent, pen);

  const gpu::Buffer lb = ctx.storage<float>(v, "logits");
  Options o{c.chunk};
  o.penalty_window = c.window;
  const GpuSampler s(ctx, c.n, c.k, lb, o);
  ASSERT_EQ(s.plan().penalty.k, c.window);
  s.set_recent(ctx, recent);
  s.set_penalties(ctx, pen);
  const Params prm{c.temperature, 0.95f, 0.02f, 0.43f};
  const Got g = run(ctx, s, prm, c.k);
  const std::vector<float> got_l = ctx.download<float>(lb);
  std::vector<bool> in_window(c.n, false);
  for (uint32_t id : recent)
    if (id < c.n) in_window[id] = true;
  int changed = 0, untouched_bad = 0;
  double worst = 0;
  for (uint32_t i = 0; i < c.n; ++i) {
    const float a = got_l[i], b = want_l[i];
    if (!in_window[i]) {
      untouched_bad += std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(v[i]);
      continue;
    }
    changed += std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(v[i]);
    if (std::isnan(b) || std::isinf(b)) {
      EXPECT_TRUE(std::isnan(b) ? std::isnan(a) : a == b) << "logit " << i << ": " << a << " against " << b;
      continue;
    }
    worst = std::max(worst, penalty_err(a, b, v[i]));
  }
  EXPECT_EQ(untouched_bad, 0) << "logits outside the window changed";
  EXPECT_GT(changed, 0);
  EXPECT_LT(worst, 1e-6) << "penalised logits against the twin";
  const twin::Pick want = twin::pick(want_l, c.k, prm);
  EXPECT_EQ(g.top, want.top);
  if (g.token != want.token) {
    EXPECT_LT(want.margin, 1e-5) << "token " << g.token << " against " << want.token;
  }
  // The best logits' ids were penalised: greedy, the token is another.
  const twin::Pick plain = twin::pick(v, c.k, prm);
  if (c.temperature <= 0.0f) {
    EXPECT_NE(g.token, plain.token);
  }
  fmt::print("{} logits, window {} (wg {}), top-{}: {} logits penalised, rel err vs twin {:.2g}; token {} "
             "(twin {}, {} without penalties)\n",
             c.n, c.window, s.plan().penalty.wg, c.k, changed, worst, g.token, want.token, plain.token);
}

INSTANTIATE_TEST_SUITE_P(Windows, SamplePenalty,
                         ::testing::Values(PenCase{3000, 1, 64, 1024, 0.0f},    // greedy, one chunk
                                           PenCase{20000, 1, 5, 64, 0.0f},      // greedy, two rounds
                                           PenCase{5000, 40, 1024, 1024, 0.8f},  // the largest window
                                           PenCase{3001, 16, 300, 64, 1.3f},    // three rounds
                                           PenCase{700, 40, 1, 1024, 1.0f},     // a window of one
                                           PenCase{3000, 1, 1024, 1024, 0.0f, 1},  // one id 1021 times
                                           PenCase{5000, 40, 1024, 1024, 0.8f, 2},  // 1024 distinct ids
                                           PenCase{2000, 8, 777, 1024, 0.0f, 2}));  // 777 distinct ids

TEST(SamplePenaltyPlan, FromTheLimits) {
  gpu::Context& ctx = testing_support::test_context();
  Options o;
  o.penalty_window = 64;
  const Plan p = plan(ctx, 128256, 40, o);
  EXPECT_EQ(p.penalty.op, Op::SamplePenalty);
  EXPECT_EQ(p.penalty.n, 128256u);
  EXPECT_EQ(p.penalty.k, 64u);
  EXPECT_LE(p.penalty.wg, 64u);
  EXPECT_LE(p.penalty.wg, ctx.limits().maxComputeInvocationsPerWorkgroup);
  for (uint32_t w : {1u, 64u, 300u, kMaxPenaltyWindow}) {  // the hash table: a power of two >= W that fits
    o.penalty_window = w;
    const KernelSpec t = plan(ctx, 128256, 40, o).penalty;
    EXPECT_TRUE(std::has_single_bit(t.tile)) << t.tile;
    EXPECT_GE(t.tile, std::max(2u, w));
    EXPECT_LE(uint64_t{t.tile} * 8, ctx.limits().maxComputeWorkgroupStorageSize);
  }
  EXPECT_EQ(plan(ctx, 128256, 40).penalty.k, 0u);  // no window: no dispatch
  o.penalty_window = kMaxPenaltyWindow + 1;
  try {
    plan(ctx, 128256, 40, o);
    ADD_FAILURE() << "a window of " << o.penalty_window << " planned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("penalty window"), std::string::npos) << e.what();
  }
}

struct BiasCase {
  uint32_t n, k, slots, used, window;
  float temperature;
};

class SampleBias : public ::testing::TestWithParam<BiasCase> {};

// The logit bias (bias.wgsl), then the penalties over a window (when one is
// planned), on random logits with NaN, -inf and signed zeros. The table
// holds `used` distinct ids: the best logit's with -inf (banned), a random
// one with +40 (it wins greedy), ids past the vocabulary, random biases;
// the slots after them are empty. The logits must be the twin's (bias then
// penalties): bit for bit outside the window, within 1e-6 inside it; then
// the top-K ids and the token.
TEST_P(SampleBias, SameAsTwin) {
  const BiasCase c = GetParam();
  gpu::Context& ctx = testing_support::test_context();
  const std::vector<float> v = logits_for(c.n, c.n + c.slots, true);
  std::mt19937 rng(c.slots);
  const uint32_t best = uint32_t(std::max_element(v.begin(), v.end(), [](float a, float b) {
                                   return rank_key(a) < rank_key(b);
                                 }) - v.begin());
  std::vector<uint32_t> order(c.n);
  for (uint32_t i = 0; i < c.n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<uint32_t> ids = {best};  // banned; then distinct others
  for (size_t i = 0; ids.size() < c.used; ++i)
    if (order[i] != best) ids.push_back(order[i]);
  std::vector<float> bias(c.used);
  std::uniform_real_distribution<float> d(-5.0f, 5.0f);
  for (float& b : bias) b = d(rng);
  bias[0] = -INFINITY;
  const uint32_t lifted = c.used < 2 ? kNoToken : ids[c.used / 2];  // gets +40 (none in a table of one)
  if (c.used >= 2) bias[c.used / 2] = 40.0f;
  if (c.used > 3) ids[c.used - 1] = c.n + 5;  // past the vocabulary: skipped
  std::vector<uint32_t> recent(c.window);
  for (uint32_t& id : recent) id = rng() % 10 < 5 ? ids[rng() % c.used] : rng() % c.n;
  const Penalties pen{1.5f, 0.25f, 0.5f};
  std::vector<float> biased = v;
  twin::add_bias(biased, ids, bias);
  std::vector<float> want_l = biased;
  if (c.window) twin::penalize(want_l, recent, pen);

  const gpu::Buffer lb = ctx.storage<float>(v, "logits");
  Options o;
  o.bias_slots = c.slots;
  o.penalty_window = c.window;
  const GpuSampler s(ctx, c.n, c.k, lb, o);
  ASSERT_EQ(s.plan().bias.k, c.slots);
  s.set_bias(ctx, ids, bias);
  if (c.window) {
    s.set_recent(ctx, recent);
    s.set_penalties(ctx, pen);
  }
  const Params prm{c.temperature, 0.95f, 0.02f, 0.43f};
  const Got g = run(ctx, s, prm, c.k);
  const std::vector<float> got_l = ctx.download<float>(lb);
  std::vector<bool> in_window(c.n, false);
  for (uint32_t id : recent)
    if (id < c.n) in_window[id] = true;
  int bad_bits = 0, changed = 0;
  double worst = 0;
  for (uint32_t i = 0; i < c.n; ++i) {
    const float a = got_l[i], b = want_l[i];
    changed += std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(v[i]);
    if (!in_window[i] || std::isnan(b) || std::isinf(b)) {
      bad_bits += std::bit_cast<uint32_t>(a) != std::bit_cast<uint32_t>(b) && !(std::isnan(a) && std::isnan(b));
      continue;
    }
    worst = std::max(worst, penalty_err(a, b, biased[i]));
  }
  EXPECT_EQ(bad_bits, 0) << "logits differ from the twin's bias";
  EXPECT_LT(worst, 1e-6) << "penalised logits against the twin";
  EXPECT_GT(changed, int(c.used) / 2);
  const twin::Pick want = twin::pick(want_l, c.k, prm);
  EXPECT_EQ(g.top, want.top);
  if (g.token != want.token) {
    EXPECT_LT(want.margin, 1e-5) << "token " << g.token << " against " << want.token;
  }
  EXPECT_NE(g.top[0], best) << "the banned id still ranks first";
  if (c.temperature <= 0.0f && lifted < c.n && !in_window[lifted]) {
    EXPECT_EQ(g.token, lifted) << "the id biased by +40";
  }
  fmt::print("{} logits, {} bias slots ({} used, wg {}), window {}, top-{}: {} logits changed; token {} (twin {})\n",
             c.n, c.slots, c.used, s.plan().bias.wg, c.window, c.k, changed, g.token, want.token);
}

INSTANTIATE_TEST_SUITE_P(Tables, SampleBias,
                         ::testing::Values(BiasCase{3000, 1, 16, 10, 0, 0.0f},      // greedy, a small table
                                           BiasCase{20000, 40, 300, 257, 64, 0.8f},  // with penalties after
                                           BiasCase{700, 8, 700, 700, 5, 1.0f},     // every id biased
                                           BiasCase{5000, 1, 64, 1, 0, 0.0f}));     // one slot: the ban only

TEST(SampleBiasPlan, FromTheLimits) {
  gpu::Context& ctx = testing_support::test_context();
  Options o;
  o.bias_slots = 300;
  const Plan p = plan(ctx, 128256, 40, o);
  EXPECT_EQ(p.bias.op, Op::SampleBias);
  EXPECT_EQ(p.bias.k, 300u);
  EXPECT_LE(p.bias.wg, ctx.limits().maxComputeInvocationsPerWorkgroup);
  EXPECT_EQ(plan(ctx, 128256, 40).bias.k, 0u);  // no table: no dispatch
  o.bias_slots = 128257;
  EXPECT_THROW(plan(ctx, 128256, 40, o), Error);
  o.bias_slots = 4;
  const gpu::Buffer lb = ctx.storage<float>(std::vector<float>(100, 1.0f), "logits");
  const GpuSampler s(ctx, 100, 1, lb, o);
  const std::vector<uint32_t> twice = {3, 9, 3};
  EXPECT_THROW(s.set_bias(ctx, twice, std::vector<float>(3, 1.0f)), Error);  // repeated id
  EXPECT_THROW(s.set_bias(ctx, std::vector<uint32_t>(5, 1), std::vector<float>(5, 1.0f)), Error);  // > B
}

// Every case of the blockq.Sample contract passes natively (under this
// binary's limits profile), and each exported Program, replayed natively,
// gives the twin's token and ids.
TEST(SampleContract, EveryTestCasePassesAndReplays) {
  register_kernels();
  testing_support::expect_contract_passes("blockq.Sample");
}

}  // namespace
}  // namespace blockq::sample
