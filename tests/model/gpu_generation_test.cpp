// Generation with the GPU sampler (GpuModel::begin_generation): the tiny
// synthetic llama generates the host sampler's tokens, greedy and with
// blockq run's default sampling, with and without repetition penalties, from
// the same seed (also when the prompt
// ends with a full batch, whose logits the first token is sampled from); after end_generation
// the KV cache is the host loop's (the next eval's logits bit for bit), also
// when the host stops early; with_logits hands over the host loop's logits
// of each token; a full cache, eval during generation and unsupported
// settings are errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "model/gpu_model.hpp"
#include "model/sampler.hpp"
#include "model/synth.hpp"
#include "oracle.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

namespace blockq::model {
namespace {

using testing::synth_file;

const gguf::GgufFile& file() {
  static const gguf::GgufFile f = [] {
    SynthOptions o;
    o.seed = 31;
    return gguf::GgufFile::open(synth_file("gpu-gen-llama-q8_0", o));
  }();
  return f;
}

const std::vector<TokenId> kPrompt = {5, 77, 300, 41, 9};  // a batch of 4, then a single token
const std::vector<TokenId> kPrompt8 = {5, 77, 300, 41, 9, 512, 3, 1000};  // two batches of 4

// The host loop: sample, accept (the prompt first), eval(token) but after
// the last; the tokens.
std::vector<TokenId> host_tokens(GpuModel& m, const SamplerConfig& sc, uint32_t n,
                                 const std::vector<TokenId>& prompt) {
  Sampler s(sc);
  s.accept(prompt);
  std::span<const float> logits = m.eval(prompt);
  std::vector<TokenId> out;
  for (uint32_t i = 0; i < n; ++i) {
    out.push_back(s.sample(logits));
    s.accept(out.back());
    if (i + 1 < n) logits = m.eval(out.back());
  }
  return out;
}

std::vector<TokenId> gpu_tokens(GpuModel& m, const SamplerConfig& sc, uint32_t n, uint32_t max_tokens,
                                const std::vector<TokenId>& prompt) {
  m.eval(prompt);
  m.begin_generation(sc, max_tokens, prompt);
  EXPECT_TRUE(m.generating());
  std::vector<TokenId> out;
  for (uint32_t i = 0; i < n; ++i) out.push_back(m.next_token());
  m.end_generation();
  EXPECT_FALSE(m.generating());
  return out;
}

// The host loop's tokens, which the GPU's equal.
std::vector<TokenId> same_as_host(const SamplerConfig& sc, uint32_t n, uint32_t max_tokens,
                                  const std::vector<TokenId>& prompt = kPrompt) {
  gpu::Context& ctx = testing_support::test_context();
  GpuModel host(ctx, file(), {.n_ctx = 64, .batch = 4, .crossover = 8u});
  GpuModel gpu(ctx, file(), {.n_ctx = 64, .batch = 4, .crossover = 8u});
  const std::vector<TokenId> want = host_tokens(host, sc, n, prompt);
  const std::vector<TokenId> got = gpu_tokens(gpu, sc, n, max_tokens, prompt);
  EXPECT_EQ(got, want) << "temperature " << sc.temperature;
  if (gpu.n_past() != host.n_past()) {
    ADD_FAILURE() << "n_past " << gpu.n_past() << " against the host loop's " << host.n_past();
    return want;
  }
  EXPECT_EQ(gpu.n_past(), prompt.size() + n - 1);
  // The caches agree: the last token's logits, bit for bit.
  const auto a = host.eval(want.back());
  const std::vector<float> la(a.begin(), a.end());
  const auto b = gpu.eval(got.back());
  EXPECT_EQ(std::memcmp(la.data(), b.data(), la.size() * 4), 0) << "logits after the generation differ";
  return want;
}

TEST(GpuGeneration, GreedyTokensAreTheHostSamplers) {
  same_as_host({}, 12, 12);
  same_as_host({}, 6, 6, kPrompt8);  // the first token from a prompt batch's logits
}

// blockq run's default sampling (temperature 0.8, top-k 40, top-p 0.95,
// min-p 0.05), with penalties `pen` (repeat, frequency, presence).
SamplerConfig run_defaults(uint64_t seed, std::array<float, 3> pen = {1.0f, 0.0f, 0.0f}) {
  SamplerConfig sc;
  sc.temperature = 0.8f;
  sc.top_k = 40;
  sc.top_p = 0.95f;
  sc.min_p = 0.05f;
  sc.seed = seed;
  sc.repeat_penalty = pen[0];
  sc.frequency_penalty = pen[1];
  sc.presence_penalty = pen[2];
  return sc;
}

TEST(GpuGeneration, DefaultSamplingTokensAreTheHostSamplers) {
  // The GPU sums in f32 where the host sums in double, so a draw within
  // ~1e-7 of a boundary could go the other way; these 12 draws lie far from
  // one on both SwiftShader and the H200.
  SamplerConfig sc = run_defaults(7);
  same_as_host(sc, 12, 12);
  sc.temperature = 1.5f;  // flatter: more candidates survive top-p
  sc.min_p = 0.0f;
  sc.seed = 8;
  same_as_host(sc, 12, 12);
}

TEST(GpuGeneration, PenaltiesTokensAreTheHostSamplers) {
  // Windows shorter than the prompt (the prompt's last tokens in the GPU's
  // ring, then the generated ones over the oldest) and longer; greedy and
  // sampled. The penalties change the greedy tokens of this model.
  SamplerConfig sc;
  sc.repeat_penalty = 1.5f;
  sc.frequency_penalty = 0.5f;
  sc.presence_penalty = 0.25f;
  sc.repeat_last_n = 4;
  const std::vector<TokenId> plain = same_as_host({}, 12, 12);
  EXPECT_NE(same_as_host(sc, 12, 12), plain);
  sc.repeat_last_n = 7;
  same_as_host(sc, 10, 10, kPrompt8);
  // A prompt that ends where the plain greedy tokens repeat one of its own:
  // the first token already depends on the prompt's share of the window.
  std::vector<TokenId> rep = kPrompt;
  size_t i = 0;
  while (i < plain.size() && std::find(rep.begin(), rep.end(), plain[i]) == rep.end()) rep.push_back(plain[i++]);
  ASSERT_LT(i, plain.size()) << "the plain greedy tokens repeat none of the prompt's or their own";
  EXPECT_NE(same_as_host(sc, 6, 6, rep)[0], plain[i]) << "the penalties left the repeated token first";
  sc.repeat_last_n = 64;
  sc.frequency_penalty = 0.0f;
  EXPECT_NE(same_as_host(sc, 12, 12), plain);
  sc = run_defaults(9, {1.1f, 0.2f, 0.2f});
  same_as_host(sc, 12, 12);
  sc.repeat_last_n = 3;
  sc.seed = 10;
  same_as_host(sc, 12, 20);  // stops early: the queued step's copy into the window is discarded
}

// A logit bias (before the penalties): greedy with the plain greedy tokens
// banned, and sampled with 17 then 40 biased ids (tables of 32 and 64
// slots) and penalties; the GPU's tokens are the host loop's.
TEST(GpuGeneration, LogitBiasTokensAreTheHostSamplers) {
  const std::vector<TokenId> plain = same_as_host({}, 8, 8);
  SamplerConfig sc;
  for (size_t i = 0; i < 3; ++i) sc.logit_bias.push_back({plain[i], -INFINITY});
  sc.logit_bias = merge_logit_bias(sc.logit_bias);
  const std::vector<TokenId> banned = same_as_host(sc, 8, 8);
  for (const TokenId t : banned)
    for (size_t i = 0; i < 3; ++i) EXPECT_NE(t, plain[i]) << "a banned token was drawn";
  sc = run_defaults(12, {1.2f, 0.1f, 0.1f});
  std::mt19937 rng(5);
  std::vector<std::pair<TokenId, float>> b;
  for (int i = 0; i < 17; ++i) b.push_back({TokenId(rng() % 512), float(int(rng() % 13) - 6)});
  sc.logit_bias = merge_logit_bias(b);
  same_as_host(sc, 10, 10);
  for (int i = 0; i < 23; ++i) b.push_back({TokenId(rng() % 512), float(int(rng() % 13) - 6)});
  sc.logit_bias = merge_logit_bias(b);
  same_as_host(sc, 10, 10, kPrompt8);
}

// with_logits: each token_logits() is the host loop's logits for that token,
// bit for bit, before the penalties (which rewrite the GPU's logits in place
// after the copy); the first comes from the prompt's eval.
TEST(GpuGeneration, TokenLogitsAreTheHostLoops) {
  gpu::Context& ctx = testing_support::test_context();
  GpuModel host(ctx, file(), {.n_ctx = 64, .batch = 4, .crossover = 8u});
  GpuModel gpu(ctx, file(), {.n_ctx = 64, .batch = 4, .crossover = 8u});
  const SamplerConfig sc = run_defaults(11, {1.3f, 0.3f, 0.2f});
  Sampler s(sc);
  s.accept(kPrompt);
  std::span<const float> hl = host.eval(kPrompt);
  gpu.eval(kPrompt);
  gpu.begin_generation(sc, 10, kPrompt, true);
  for (int i = 0; i < 10; ++i) {
    const TokenId t = s.sample(hl);
    s.accept(t);
    ASSERT_EQ(gpu.next_token(), t) << "token " << i;
    const std::span<const float> gl = gpu.token_logits();
    ASSERT_EQ(gl.size(), hl.size());
    EXPECT_EQ(std::memcmp(gl.data(), hl.data(), hl.size() * 4), 0) << "token " << i << "'s logits";
    if (i + 1 < 10) hl = host.eval(t);
  }
  gpu.end_generation();
  EXPECT_THROW(gpu.token_logits(), Error);
  // Without with_logits there are none.
  gpu.reset();
  gpu.eval(kPrompt);
  gpu.begin_generation(sc, 2, kPrompt);
  gpu.next_token();
  EXPECT_THROW(gpu.token_logits(), Error);
  gpu.end_generation();
}

TEST(GpuGeneration, StoppingEarlyLeavesTheHostLoopsCache) {
  // 3 of at most 20 tokens taken: the step after the third was already queued.
  same_as_host({}, 3, 20);
}

TEST(GpuGeneration, Errors) {
  gpu::Context& ctx = testing_support::test_context();
  GpuModel m(ctx, file(), {.n_ctx = 12, .batch = 4, .crossover = 8u});
  SamplerConfig pen;
  pen.repeat_penalty = 1.1f;
  pen.repeat_last_n = 1025;  // above the GPU's window
  EXPECT_THROW(m.begin_generation({}, 4), Error);  // no logits yet
  m.eval(kPrompt);
  EXPECT_THROW(m.begin_generation(pen, 4), Error);
  pen.repeat_last_n = 64;
  pen.repeat_penalty = 0.0f;  // not positive
  EXPECT_THROW(m.begin_generation(pen, 4), Error);
  SamplerConfig all;
  all.temperature = 1.0f;  // top-k off: the whole vocabulary
  EXPECT_THROW(m.begin_generation(all, 4), Error);
  EXPECT_FALSE(m.generating());
  m.begin_generation({}, 100);
  EXPECT_THROW(m.eval(TokenId(1)), Error);
  EXPECT_THROW(m.begin_generation({}, 4), Error);
  // 12 positions, 5 of them the prompt: steps evaluate positions 5..11, so 8
  // tokens come (the last one not evaluated), then the cache is full.
  for (int i = 0; i < 8; ++i) m.next_token();
  try {
    m.next_token();
    ADD_FAILURE() << "a ninth token with the cache full";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("full"), std::string::npos) << e.what();
  }
  m.end_generation();
  EXPECT_EQ(m.n_past(), 12u);
  m.reset();
  m.eval(kPrompt);
  m.begin_generation({}, 2);
  m.next_token();
  m.next_token();
  EXPECT_THROW(m.next_token(), Error);  // max_tokens taken
  m.reset();  // ends it
  EXPECT_FALSE(m.generating());
  EXPECT_EQ(m.n_past(), 0u);
}

}  // namespace
}  // namespace blockq::model
