// How a step is submitted (GpuModelOptions::encode_ahead, submit_pieces):
// the tiny synthetic llama (two layers) run with the next token's command
// buffer encoded while the GPU runs the step before, in one submit, one per
// layer or as planned (0), must give the logits of the model that encodes
// each step after its ids are known, in one submit, bit for bit, through
// single tokens, a prompt batch, a reset, the attention's chunk boundary and
// a full cache; StepTimes says which steps were encoded ahead. A truncated
// cache forgets its last positions. Where the submits end, by layer count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "model/gpu_model.hpp"
#include "model/synth.hpp"
#include "oracle.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

namespace blockq::model {
namespace {

using testing::synth_file;

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class EncodeAhead : public ::testing::TestWithParam<uint32_t> {};

TEST_P(EncodeAhead, SameLogitsAsEncodingAfterTheIds) {
  SynthOptions o;
  o.seed = 23;
  const gguf::GgufFile f = gguf::GgufFile::open(synth_file("gpu-step-llama-q8_0", o));
  gpu::Context& ctx = testing_support::test_context();
  const uint32_t n_ctx = 136;
  GpuModel after(ctx, f, {.n_ctx = n_ctx, .batch = 4, .crossover = 8u, .encode_ahead = false, .submit_pieces = 1});
  GpuModel ahead(ctx, f, {.n_ctx = n_ctx, .batch = 4, .crossover = 8u, .encode_ahead = true, .submit_pieces = GetParam()});
  ASSERT_EQ(after.config().n_layer, 2u);
  const uint32_t vocab = after.config().n_vocab;
  int step = 0;
  std::vector<float> la, lb;
  // Evaluates `ids` in both: the logits must agree bit for bit, and `ahead`
  // must say whether its buffer was encoded during the step before.
  auto run = [&](std::span<const TokenId> ids, bool expect_ahead) {
    SCOPED_TRACE(fmt::format("step {} ({} tokens at position {})", step++, ids.size(), ahead.n_past()));
    const auto a = after.eval_step(ids);
    la.assign(a.begin(), a.end());
    const auto b = ahead.eval_step(ids);
    lb.assign(b.begin(), b.end());
    EXPECT_TRUE(same_bits(la, lb)) << "logits differ";
    EXPECT_FALSE(after.last_step().encoded_ahead);
    EXPECT_EQ(ahead.last_step().encoded_ahead, expect_ahead);
    EXPECT_EQ(after.n_past(), ahead.n_past());
    EXPECT_GT(ahead.last_step().wait, 0.0);
  };
  auto tok = [&](uint32_t i) { return TokenId((i * 7919u + 3u) % vocab); };
  // The first token has nothing encoded ahead; the next ones do, whatever
  // their ids (they are chosen after the step before).
  for (uint32_t i = 0; i < 5; ++i) {
    const TokenId t = tok(i);
    run(std::span<const TokenId>(&t, 1), i > 0);
  }
  // A prompt batch is encoded when it comes; the single token after it was
  // encoded ahead.
  const std::vector<TokenId> batch = {tok(10), tok(11), tok(12)};
  run(batch, false);
  for (uint32_t i = 0; i < 4; ++i) {
    const TokenId t = tok(20 + i);
    run(std::span<const TokenId>(&t, 1), true);
  }
  // A reset drops what was encoded for the old position.
  after.reset();
  ahead.reset();
  for (uint32_t i = 0; i < 3; ++i) {
    const TokenId t = tok(30 + i);
    run(std::span<const TokenId>(&t, 1), i > 0);
  }
  // Batches of 4 to position 124, then single tokens over the attention's
  // first chunk boundary (its chunks here are at most 128 positions: the
  // number of chunks dispatched is fixed when the buffer is encoded), up to
  // the last position of the cache; then both refuse the next token.
  while (ahead.n_past() + 4 <= 124) {
    const uint32_t p = ahead.n_past();
    const std::vector<TokenId> b4 = {tok(p), tok(p + 1), tok(p + 2), tok(p + 3)};
    run(b4, false);
  }
  while (ahead.n_past() < n_ctx) {
    const TokenId t = tok(ahead.n_past());
    run(std::span<const TokenId>(&t, 1), true);
  }
  const TokenId t = tok(0);
  EXPECT_THROW(ahead.eval(t), Error);
  EXPECT_THROW(after.eval(t), Error);
  // A bad id is refused before anything is submitted.
  ahead.reset();
  EXPECT_THROW(ahead.eval(TokenId(vocab)), Error);
  EXPECT_NO_THROW(ahead.eval(tok(1)));
  EXPECT_FALSE(ahead.last_step().encoded_ahead);
}

// truncate(n): the positions after n are forgotten, and the next token's
// logits are those of a model that never saw them, bit for bit (the same
// steps, so the same kernels); more than n_past is refused.
TEST(Truncate, ForgetsThePositionsAfterN) {
  SynthOptions o;
  o.seed = 23;
  const gguf::GgufFile f = gguf::GgufFile::open(synth_file("gpu-step-llama-q8_0", o));
  gpu::Context& ctx = testing_support::test_context();
  GpuModel cut(ctx, f, {.n_ctx = 32, .batch = 4, .crossover = 8u});
  GpuModel never(ctx, f, {.n_ctx = 32, .batch = 4, .crossover = 8u});
  const std::vector<TokenId> prompt = {5, 77, 300, 41, 9};  // a batch of 4, then a single token
  cut.eval(prompt);
  never.eval(prompt);
  for (TokenId t : {TokenId(12), TokenId(400), TokenId(7)}) cut.eval(t);
  EXPECT_THROW(cut.truncate(cut.n_past() + 1), Error);
  cut.truncate(uint32_t(prompt.size()));
  EXPECT_EQ(cut.n_past(), prompt.size());
  for (TokenId t : {TokenId(33), TokenId(2)}) {
    const auto a = cut.eval(t);
    const std::vector<float> la(a.begin(), a.end());
    EXPECT_TRUE(same_bits(la, never.eval(t))) << "token " << t;
  }
  cut.truncate(0);
  EXPECT_EQ(cut.n_past(), 0u);
}

TEST(SubmitPieces, EndsCoverTheLayers) {
  using V = std::vector<uint32_t>;
  EXPECT_EQ(submit_piece_ends(32, 0), (V{1, 3, 7, 15, 32}));  // 1, 2, 4, 8, 17 layers
  EXPECT_EQ(submit_piece_ends(16, 0), (V{1, 3, 7, 16}));
  EXPECT_EQ(submit_piece_ends(24, 0), (V{1, 3, 7, 24}));
  EXPECT_EQ(submit_piece_ends(2, 0), (V{2}));
  EXPECT_EQ(submit_piece_ends(3, 0), (V{1, 3}));
  EXPECT_EQ(submit_piece_ends(1, 0), (V{1}));
  EXPECT_EQ(submit_piece_ends(32, 1), (V{32}));
  EXPECT_EQ(submit_piece_ends(32, 4), (V{8, 16, 24, 32}));
  EXPECT_EQ(submit_piece_ends(5, 2), (V{2, 5}));
  EXPECT_EQ(submit_piece_ends(2, 9), (V{1, 2}));  // at most one piece a layer
  for (uint32_t n = 1; n <= 80; ++n)
    for (uint32_t p : {0u, 1u, 3u, 7u, 100u}) {
      const V e = submit_piece_ends(n, p);
      ASSERT_FALSE(e.empty());
      EXPECT_EQ(e.back(), n);
      EXPECT_GT(e.front(), 0u);
      EXPECT_TRUE(std::is_sorted(e.begin(), e.end()) && std::adjacent_find(e.begin(), e.end()) == e.end())
          << n << " layers, " << p << " pieces";
    }
}

INSTANTIATE_TEST_SUITE_P(Tiny, EncodeAhead, ::testing::Values(0u, 1u, 2u, 9u),
                         [](const auto& info) { return fmt::format("pieces_{}", info.param); });

}  // namespace
}  // namespace blockq::model
