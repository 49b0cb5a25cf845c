// Token decoding with int8 activations (GpuModelOptions::int8_activations,
// here on every projection: the token matvecs quantize x per block of 32 and
// sum with dot4I8Packed)
// against the same model with f32 activations, on the tiny synthetic llama in
// Q8_0, Q4_0 and Q4_K: the logits of every prompt position and of a few
// tokens after it agree within the quantization error of x, the greedy token
// mostly agrees, and the dispatch count is unchanged. Prompt passes with
// int8 x, through the gemm and through the matvec, likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/gpu_model.hpp"
#include "model/synth.hpp"
#include "oracle.hpp"
#include "quant/format.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace blockq::model {
namespace {

using testing::synth_file;
using blockq::testing_support::max_rel_err;  // max |got - ref| / max |ref|, +inf on NaN

// One matvec with int8 x is within about 1e-2 of f32 (matvec_test.cpp);
// two layers and the lm head compound it.
constexpr double kLogitBound = 5e-2;

const char* kText = "The keeper climbed the tower and looked at the sea while the boats came back.";

class Int8Decode : public ::testing::TestWithParam<Format> {};

TEST_P(Int8Decode, AgreesWithF32Activations) {
  gpu::Context& ctx = testing_support::test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product on this instance";
  SynthOptions o;
  o.type = GetParam();
  o.seed = 5;
  const gguf::GgufFile f = gguf::GgufFile::open(synth_file(fmt::format("int8-{}", traits(o.type).name), o));
  const GpuModelOptions base{.n_ctx = 128, .batch = 1, .int8_activations = false};
  GpuModelOptions i8 = base;
  i8.int8_activations = true;
  i8.int8_min_elements = 0;  // every projection of the tiny model
  GpuModel ref(ctx, f, base), q(ctx, f, i8);
  EXPECT_EQ(q.dispatches_per_token(), ref.dispatches_per_token());
  std::vector<TokenId> ids = Tokenizer(from_gguf(f)).tokenize(kText, true);
  for (TokenId t : {TokenId(7), TokenId(300), TokenId(42)}) ids.push_back(t);
  double worst = 0;
  size_t same_top = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto a = q.eval(ids[i]);
    std::vector<float> qa(a.begin(), a.end());
    const auto b = ref.eval(ids[i]);
    const double e = max_rel_err(qa, b);
    worst = std::max(worst, e);
    EXPECT_LT(e, kLogitBound) << "position " << i;
    same_top += std::max_element(qa.begin(), qa.end()) - qa.begin() == std::max_element(b.begin(), b.end()) - b.begin();
  }
  EXPECT_GE(same_top * 10, ids.size() * 8) << "greedy tokens agree at " << same_top << " of " << ids.size();
  // The default options (int8 on, the 2^22- or 2^24-element threshold): no projection
  // of the tiny model is large enough, so the logits are those of f32
  // activations.
  const GpuModelOptions defaults{.n_ctx = 128, .batch = 1};
  ASSERT_TRUE(defaults.int8_activations);
  GpuModel dflt(ctx, f, defaults), plain(ctx, f, base);
  const auto d = dflt.eval(ids[0]);
  std::vector<float> dv(d.begin(), d.end());
  const auto p = plain.eval(ids[0]);
  EXPECT_EQ(dv, std::vector<float>(p.begin(), p.end()));
  std::printf("[ %s ] int8 vs f32 activations: max rel diff %.3g, same greedy token at %zu of %zu positions\n",
              traits(o.type).name.data(), worst, same_top, ids.size());
}

INSTANTIATE_TEST_SUITE_P(Tiny, Int8Decode, ::testing::Values(Format::Q8_0, Format::Q4_0, Format::Q4_K),
                         [](const auto& info) { return std::string(traits(info.param).name); });

// Prompt batches through the int8 gemm (gemm_int8, on weights of any size;
// batches of 16, the crossover at 4, so every projection runs a gemm)
// against the f32 gemm: each
// step's logits within the decode bound, and not the same bits (the int8
// path ran). Then greedy steps from either cache on the same tokens: the
// picks agree but for near ties.
class Int8Gemm : public ::testing::TestWithParam<Format> {};

gguf::GgufFile prompt_model(Format type) {
  SynthOptions o;
  o.type = type;
  o.seed = 6;
  return gguf::GgufFile::open(synth_file(fmt::format("int8gemm-{}", traits(type).name), o));
}

TEST_P(Int8Gemm, PromptAgreesWithF32Gemm) {
  gpu::Context& ctx = testing_support::test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product on this instance";
  const gguf::GgufFile f = prompt_model(GetParam());
  GpuModelOptions base{.n_ctx = 96, .batch = 16, .crossover = 4u};
  base.gemm_int8 = false;
  GpuModelOptions i8 = base;
  i8.gemm_int8 = true;  // int8_min_elements unset: the gemm takes int8 x on weights of
                        // any size (the tiny model's are far below 2^24 elements)
  GpuModel ref(ctx, f, base), q(ctx, f, i8);
  ASSERT_EQ(q.prompt_gemm_count(), q.prompt_projection_count());
  std::vector<TokenId> ids = Tokenizer(from_gguf(f)).tokenize(kText, true);
  ASSERT_GT(ids.size(), 16u);
  double worst = 0;
  std::vector<float> qa, ra;
  for (size_t i = 0; i < ids.size(); i += 16) {
    const auto chunk = std::span<const TokenId>(ids).subspan(i, std::min<size_t>(16, ids.size() - i));
    const auto a = q.eval_step(chunk);
    qa.assign(a.begin(), a.end());
    const auto b = ref.eval_step(chunk);
    ra.assign(b.begin(), b.end());
    const double e = max_rel_err(qa, ra);
    worst = std::max(worst, e);
    EXPECT_LT(e, kLogitBound) << "step at " << i;
    EXPECT_NE(qa, ra) << "the int8 gemm should change the sums";
  }
  // Six greedy steps, both models fed the f32 path's token: where the
  // picks differ, the f32 logits of the two tokens are within twice the
  // logit bound (a near tie that 8-bit x may flip).
  size_t same = 0;
  for (int i = 0; i < 6; ++i) {
    const TokenId tq = TokenId(std::max_element(qa.begin(), qa.end()) - qa.begin());
    const TokenId tr = TokenId(std::max_element(ra.begin(), ra.end()) - ra.begin());
    double scale = 0;
    for (const float v : ra) scale = std::max(scale, double(std::abs(v)));
    if (tq == tr) ++same;
    else EXPECT_LE(ra[size_t(tr)] - ra[size_t(tq)], 2 * kLogitBound * scale) << "step " << i << ": not a near tie";
    const auto a = q.eval(tr);
    qa.assign(a.begin(), a.end());
    const auto b = ref.eval(tr);
    ra.assign(b.begin(), b.end());
  }
  EXPECT_GE(same, 4u) << "greedy tokens after the prompt";
  std::printf("[ %s ] prompt through the int8 gemm vs the f32 gemm: max rel diff %.3g, same greedy token %zu of 6\n",
              traits(GetParam()).name.data(), worst, same);
}

INSTANTIATE_TEST_SUITE_P(Tiny, Int8Gemm, ::testing::Values(Format::Q8_0, Format::Q4_0, Format::Q4_K, Format::Q5_K, Format::Q6_K,
                                                                    Format::Q2_K, Format::Q3_K, Format::IQ4_XS),
                         [](const auto& info) { return std::string(traits(info.param).name); });

// Prompt batches of 16 at or below the crossover (32): every projection runs
// the matvec over the pass's rows, with int8 x where the token matvec takes
// it (here every projection) against f32 x: each step's logits within the
// decode bound, and not the same bits.
TEST_P(Int8Gemm, PromptMatvecTakesInt8) {
  gpu::Context& ctx = testing_support::test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product on this instance";
  const gguf::GgufFile f = prompt_model(GetParam());
  GpuModelOptions base{.n_ctx = 96, .batch = 16, .crossover = 32u};
  GpuModelOptions i8 = base;
  i8.int8_min_elements = 0;  // the tiny model's weights are below 2^24 elements
  GpuModel ref(ctx, f, base), q(ctx, f, i8);
  ASSERT_EQ(q.prompt_gemm_count(), 0u);
  std::vector<TokenId> ids = Tokenizer(from_gguf(f)).tokenize(kText, true);
  double worst = 0;
  for (size_t i = 0; i < ids.size(); i += 16) {
    const auto chunk = std::span<const TokenId>(ids).subspan(i, std::min<size_t>(16, ids.size() - i));
    const auto a = q.eval_step(chunk);
    const std::vector<float> qa(a.begin(), a.end());
    const auto b = ref.eval_step(chunk);
    const std::vector<float> ra(b.begin(), b.end());
    const double e = max_rel_err(qa, ra);
    worst = std::max(worst, e);
    EXPECT_LT(e, kLogitBound) << "step at " << i;
    EXPECT_NE(qa, ra) << "int8 x should change the sums";
  }
  std::printf("[ %s ] prompt through the int8 matvec vs f32 x: max rel diff %.3g\n", traits(GetParam()).name.data(),
              worst);
}

}  // namespace
}  // namespace blockq::model
