// The GPU prompt pass and its pieces: prompts in batches through
// gemm::matmul (the crossover forced low so the gemm runs; the f32 gemm,
// whose bound is the f32 reference's, but for GpuPromptSplitK's int8 run:
// the int8 gemm's 8-bit x has gpu_int8_test.cpp's bound) against the CPU
// reference on the tiny synthetic model (llama at q8_0, q4_0, q4_K, q5_K, q2_K, bf16; qwen2
// with biases; llama with rope_freqs), with f16 and f32 KV caches; rope_freqs
// on single tokens; the row kernels (GpuRmsNorm, GpuRope with bias and freq
// factors) against their twins; the f16 KV store against f32_to_f16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "kernels/attention/attention.hpp"
#include "kernels/gemm/generator.hpp"
#include "kernels/norm/twin.hpp"
#include "kernels/rope/twin.hpp"
#include "model/cpu_forward.hpp"
#include "model/gpu_kv_store.hpp"
#include "model/gpu_model.hpp"
#include "model/gpu_rows.hpp"
#include "model/synth.hpp"
#include "oracle.hpp"
#include "quant/half.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace blockq::model {
namespace {

using testing::argmax;
using testing::synth_file;
using blockq::testing_support::max_rel_err;  // max |got - ref| / max |ref|, +inf on NaN

// The bound of gpu_forward_test.cpp: max |gpu - cpu| <= kRelBound * max |cpu|.
constexpr double kRelBound = 1e-3;
// With int8 x in the gemm (8-bit activations): gpu_int8_test.cpp's bound.
constexpr double kInt8Bound = 5e-2;

const char* kLongText =
    "The lighthouse keeper woke before the sun, climbed the tower and looked at the sea. Boats came "
    "back with the tide, and the gulls followed them into the harbour while the town slept.";

std::string tiny(Arch arch, Format type, bool rope_freqs) {
  SynthOptions o;
  o.arch = arch;
  o.type = type;
  o.seed = 11;
  o.rope_freqs = rope_freqs;
  return synth_file(fmt::format("prompt-{}-{}{}", arch == Arch::Llama ? "llama" : "qwen2", traits(type).name,
                                rope_freqs ? "-ropefreqs" : ""),
                    o);
}

struct Case {
  Arch arch;
  Format type;
  bool rope_freqs;
  KvType kv;
};

class GpuPrompt : public ::testing::TestWithParam<Case> {};

// Batches of 16 (the crossover forced to 4, so every projection of the tiny
// model runs the gemm): two full batches and a padded last one, each batch's
// last logits against the CPU's; then 8 greedy tokens one at a time (matvec,
// reading the cache the batches wrote); the weights' memory equals a batch-1
// model's (one upload serves matvec and the gemm).
TEST_P(GpuPrompt, GemmBatchesMatchCpuReference) {
  const Case c = GetParam();
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(c.arch, c.type, c.rope_freqs));
  GpuModel g(testing_support::test_context(), f,
             {.n_ctx = 96, .batch = 16, .crossover = 4u, .gemm_int8 = false, .kv_type = c.kv});
  EXPECT_EQ(g.prompt_gemm_count(), g.prompt_projection_count()) << "every prompt projection should run the gemm";
  EXPECT_EQ(g.prompt_projection_count(), 4 * g.config().n_layer) << "Q, K and V should run as one projection";
  CpuModel cpu(f, {ForwardMode::F32, 96, 1, c.kv});
  const Tokenizer tok(from_gguf(f));
  std::vector<TokenId> prompt = tok.tokenize(kLongText, true);
  if (prompt.size() % 16 == 0) prompt.pop_back();  // the last batch is padded
  ASSERT_GT(prompt.size(), 32u);
  double worst = 0;
  std::vector<float> gl;
  std::span<const float> cl;
  for (size_t i = 0; i < prompt.size(); i += 16) {
    const auto chunk = std::span<const TokenId>(prompt).subspan(i, std::min<size_t>(16, prompt.size() - i));
    const auto a = g.eval_step(chunk);
    cl = cpu.eval(chunk);
    const double e = max_rel_err(a, cl);
    worst = std::max(worst, e);
    EXPECT_LT(e, kRelBound) << "batch at " << i;
    gl.assign(a.begin(), a.end());
  }
  EXPECT_EQ(g.n_past(), prompt.size());
  for (int i = 0; i < 8; ++i) {
    const TokenId t = argmax(cl);
    ASSERT_EQ(argmax(gl), t) << "greedy token " << i;
    const auto a = g.eval(t);
    cl = cpu.eval(t);
    const double e = max_rel_err(a, cl);
    worst = std::max(worst, e);
    EXPECT_LT(e, kRelBound) << "generated position " << i;
    gl.assign(a.begin(), a.end());
  }
  // Every weight lives on the GPU once: the prompt gemm reads the matvec
  // upload, so the batched model holds the weights a token-by-token one does.
  GpuModel one(testing_support::test_context(), f, {.n_ctx = 96, .batch = 1, .kv_type = c.kv});
  EXPECT_EQ(g.memory().weights, one.memory().weights) << "a second copy of the weights for the gemm?";
  std::printf("[ %s %s%s kv %s ] %zu prompt tokens in gemm batches of 16 + 8 greedy: max rel err %.3g, "
              "GPU memory %.2f MiB (weights %.2f, as token by token)\n",
              g.config().arch_name.c_str(), std::string(traits(c.type).name).c_str(),
              c.rope_freqs ? " rope_freqs" : "", kv_type_name(c.kv), prompt.size(), worst,
              double(g.memory().total()) / (1 << 20), double(g.memory().weights) / (1 << 20));
}

INSTANTIATE_TEST_SUITE_P(Tiny, GpuPrompt,
                         ::testing::Values(Case{Arch::Llama, Format::Q8_0, false, KvType::F16},
                                           Case{Arch::Llama, Format::Q4_0, false, KvType::F32},
                                           Case{Arch::Llama, Format::Q4_K, false, KvType::F16},
                                           Case{Arch::Llama, Format::Q5_K, false, KvType::F16},
                                           Case{Arch::Llama, Format::Q2_K, false, KvType::F32},
                                           Case{Arch::Llama, Format::BF16, false, KvType::F16},
                                           Case{Arch::Qwen2, Format::Q8_0, false, KvType::F32},
                                           Case{Arch::Llama, Format::Q8_0, true, KvType::F16}),
                         [](const auto& info) {
                           return fmt::format("{}_{}{}_kv_{}", info.param.arch == Arch::Llama ? "llama" : "qwen2",
                                              traits(info.param.type).name, info.param.rope_freqs ? "_ropefreqs" : "",
                                              kv_type_name(info.param.kv));
                         });

// A prompt batch of more than 128 tokens: the gemm's default for it splits k
// in two (few output tiles), so projections write split-k partials into the
// model's one shared scratch and split_sum runs the epilogues. The whole
// prompt in one padded batch against the CPU, through the f32 gemm (every
// projection split: Store, Acc, SiLU gate) and, where the adapter has packed
// dot4, the int8 gemm (the down projection split: k = n_ff of 512, two
// slices of 256; Acc). The pass's attention is the prompt kernel (160 rows,
// attention::RowsOptions::min_rows 64).
TEST(GpuPromptSplitK, LargeBatchMatchesCpuReference) {
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(Arch::Llama, Format::Q8_0, false));
  const uint32_t batch = 160;
  const auto& ctx = testing_support::test_context();
  const auto lim = gemm::limits_of(ctx);
  WeightKind q8;
  q8.format = Format::Q8_0;
  CpuModel cpu(f, {ForwardMode::F32, 192, 1, KvType::F16});
  const Tokenizer tok(from_gguf(f));
  std::vector<TokenId> prompt = tok.tokenize(kLongText, true);
  ASSERT_GT(prompt.size(), 32u);
  if (prompt.size() > batch) prompt.resize(batch);
  const auto c = cpu.eval(prompt);
  for (const bool int8 : {false, true}) {
    if (int8 && !ctx.features().packed_dot4) continue;
    GpuModelOptions o{.n_ctx = 192, .batch = batch, .min_batch = batch, .crossover = 4u};  // one pass of 160 rows
    o.gemm_int8 = int8;
    GpuModel g(ctx, f, o);
    ASSERT_EQ(g.prompt_passes(), std::vector<uint32_t>{batch});
    ASSERT_GE(batch, attention::RowsOptions{}.min_rows) << "the pass should run the prompt attention kernel";
    EXPECT_EQ(g.prompt_gemm_count(), g.prompt_projection_count());
    const auto& cfg = g.config();
    if (int8)
      EXPECT_EQ(gemm::plan_int8(lim, q8, cfg.n_embd, cfg.n_ff, batch, {}).splits, 2u)
          << "the tiny model's int8 down projection should split k at m = " << batch;
    else
      EXPECT_EQ(gemm::plan(lim, q8, cfg.n_ff, cfg.n_embd, batch, {}).splits, 2u)
          << "the tiny model's ffn gemm should split k at m = " << batch;
    const auto a = g.eval_step(prompt);
    const double e = max_rel_err(a, c);
    EXPECT_LT(e, int8 ? kInt8Bound : kRelBound) << (int8 ? "int8" : "f32") << " gemm";
    EXPECT_EQ(argmax(a), argmax(c)) << (int8 ? "int8" : "f32") << " gemm";
    std::printf("[ llama q8_0 ] %zu prompt tokens in one %s gemm batch of %u (split k): max rel err %.3g\n",
                prompt.size(), int8 ? "int8" : "f32", batch, e);
  }
}

// eval_all: every position's logits, from batches of 16 whose lm_head runs
// over all their rows (two full batches, then a last token alone), each
// against the CPU's logits at that position. It returns the last row's
// logits, and the cache then holds the prompt. A second, shorter call from
// position 0 (a padded batch) must hand over its own rows, not the stale
// rows the first left in the buffers.
TEST(GpuPromptAllRows, EveryRowMatchesCpuReference) {
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(Arch::Llama, Format::Q4_0, false));
  GpuModel g(testing_support::test_context(), f, {.n_ctx = 96, .batch = 16, .crossover = 4u, .gemm_int8 = false});
  ASSERT_EQ(g.all_rows_batch(), 16u);
  const Tokenizer tok(from_gguf(f));
  std::vector<TokenId> prompt = tok.tokenize(kLongText, true);
  ASSERT_GT(prompt.size(), 33u);
  prompt.resize(33);
  double worst = 0;
  auto run = [&](std::span<const TokenId> p) {
    CpuModel cpu(f, {ForwardMode::F32, 96, 1, KvType::F16});
    size_t seen = 0;
    std::vector<float> last_row;
    const auto last = g.eval_all(p, [&](size_t i, std::span<const float> row) {
      EXPECT_EQ(i, seen++);
      const double e = max_rel_err(row, cpu.eval(p[i]));
      worst = std::max(worst, e);
      EXPECT_LT(e, kRelBound) << "row " << i << " of " << p.size();
      last_row.assign(row.begin(), row.end());
    });
    EXPECT_EQ(seen, p.size());
    EXPECT_EQ(g.n_past(), p.size());
    // The last row's logits (the single-token pass's, or a batch's from its
    // x_last matvec beside the rows' lm_head).
    EXPECT_LT(max_rel_err(last, last_row), 1e-4) << "the returned logits are not the last row's";
  };
  run(prompt);
  g.truncate(0);
  run(std::span<const TokenId>(prompt).subspan(3, 5));
  std::printf("[ llama q4_0 ] eval_all over 33 and 5 tokens in batches of 16: max rel err %.3g\n", worst);
}

// The auto batch: 512 rows on a GPU, at most the largest power of two in
// the context; token by token on a CPU adapter. With the default min_batch
// (8) a model's passes then go 512, 256, ..., 8.
TEST(GpuPromptPasses, AutoBatchFollowsTheContext) {
  EXPECT_EQ(auto_prompt_batch(false, 4096), 512u);
  EXPECT_EQ(auto_prompt_batch(false, 512), 512u);
  EXPECT_EQ(auto_prompt_batch(false, 300), 256u);
  EXPECT_EQ(auto_prompt_batch(false, 96), 64u);
  EXPECT_EQ(auto_prompt_batch(false, 1), 1u);
  EXPECT_EQ(auto_prompt_batch(true, 4096), 1u);
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(Arch::Llama, Format::Q8_0, false));
  GpuModel g(testing_support::test_context(), f, {.n_ctx = 96, .batch = 64});
  EXPECT_EQ(g.prompt_passes(), (std::vector<uint32_t>{64, 32, 16, 8})) << "the default min_batch";
}

// Prompt passes of 16, 8, 4 and 2 rows (min_batch 2; the crossover at 4, so
// the passes of 2 and 4 run the matvec, those of 8 and 16 the gemm): steps of
// 16, 5, 2, 3 and 7 tokens take the passes of 16, 8, 2, 4 and 8 rows, and
// each step's last logits must be the CPU's, as must the greedy tokens after
// them. A padded row of a smaller pass must not reach the cache or a real
// row: every step reads the cache the steps before it wrote. Then eval_all
// over 7 tokens from position 0 (the pass of 8, its lm_head over 7 rows) and
// over 3 (the pass of 4) hands over every row.
TEST(GpuPromptPasses, EveryPassMatchesCpuReference) {
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(Arch::Llama, Format::Q8_0, false));
  GpuModel g(testing_support::test_context(), f,
             {.n_ctx = 96, .batch = 16, .min_batch = 2, .crossover = 4u, .gemm_int8 = false});
  ASSERT_EQ(g.prompt_passes(), (std::vector<uint32_t>{16, 8, 4, 2}));
  GpuModel one(testing_support::test_context(), f,
               {.n_ctx = 96, .batch = 16, .min_batch = 16, .crossover = 4u, .gemm_int8 = false});
  EXPECT_EQ(one.prompt_passes(), std::vector<uint32_t>{16}) << "min_batch 16 keeps one pass of 16";
  EXPECT_EQ(g.memory().activations, one.memory().activations) << "the passes should share the activations";
  const Tokenizer tok(from_gguf(f));
  std::vector<TokenId> prompt = tok.tokenize(kLongText, true);
  ASSERT_GE(prompt.size(), 33u);
  prompt.resize(33);
  CpuModel cpu(f, {ForwardMode::F32, 96, 1, KvType::F16});
  double worst = 0;
  std::vector<float> gl;
  std::span<const float> cl;
  size_t at = 0;
  for (const auto& [n, rows] : {std::pair<size_t, uint32_t>{16, 16}, {5, 8}, {2, 2}, {3, 4}, {7, 8}}) {
    const auto chunk = std::span<const TokenId>(prompt).subspan(at, n);
    const auto a = g.eval_step(chunk);
    EXPECT_EQ(g.last_step().rows, rows) << "the pass of a step of " << n << " tokens";
    cl = cpu.eval(chunk);
    const double e = max_rel_err(a, cl);
    worst = std::max(worst, e);
    EXPECT_LT(e, kRelBound) << "a step of " << n << " tokens at " << at;
    gl.assign(a.begin(), a.end());
    at += n;
  }
  ASSERT_EQ(g.n_past(), 33u);
  for (int i = 0; i < 4; ++i) {
    const TokenId t = argmax(cl);
    ASSERT_EQ(argmax(gl), t) << "greedy token " << i;
    const auto a = g.eval(t);
    EXPECT_EQ(g.last_step().rows, 1u);
    cl = cpu.eval(t);
    const double e = max_rel_err(a, cl);
    worst = std::max(worst, e);
    EXPECT_LT(e, kRelBound) << "generated position " << i;
    gl.assign(a.begin(), a.end());
  }
  for (const size_t n : {7, 3}) {
    g.truncate(0);
    CpuModel rows_cpu(f, {ForwardMode::F32, 96, 1, KvType::F16});
    size_t seen = 0;
    g.eval_all(std::span<const TokenId>(prompt).first(n), [&](size_t i, std::span<const float> row) {
      EXPECT_EQ(i, seen++);
      const double e = max_rel_err(row, rows_cpu.eval(prompt[i]));
      worst = std::max(worst, e);
      EXPECT_LT(e, kRelBound) << "row " << i << " of " << n;
    });
    EXPECT_EQ(seen, n);
    EXPECT_EQ(g.last_step().rows, n == 7 ? 8u : 4u);
  }
  std::printf("[ llama q8_0 ] steps of 16, 5, 2, 3, 7 tokens in passes of 16/8/4/2 rows, eval_all over 7 and 3: "
              "max rel err %.3g\n",
              worst);
}

// rope_freqs one token at a time (matvec Store, then GpuRope with the
// factors). The factors must matter at these positions: the CPU's logits
// without them differ by far more than the bound.
TEST(GpuRopeFreqs, SingleTokensMatchCpuReference) {
  const std::string path = tiny(Arch::Llama, Format::Q8_0, true);
  const gguf::GgufFile f = gguf::GgufFile::open(path);
  ASSERT_TRUE(config_from_gguf(f).rope_freqs);
  gguf::GgufWriter w;
  w.copy_metadata(f);
  for (const auto& t : f.tensors())
    if (t.name != "rope_freqs.weight") w.add_tensor_view(t.name, t.shape, t.format, f.tensor_data(t));
  const std::string plain = (testing::temp_dir() / "prompt-no-ropefreqs.gguf").string();
  w.write(plain);
  const gguf::GgufFile fp = gguf::GgufFile::open(plain);

  GpuModel g(testing_support::test_context(), f, {.n_ctx = 64, .batch = 1, .kv_type = KvType::F32});
  CpuModel cpu(f, {ForwardMode::F32, 64, 1});
  CpuModel cpu_plain(fp, {ForwardMode::F32, 64, 1});
  const std::vector<TokenId> prompt = Tokenizer(from_gguf(f)).tokenize(kLongText, true);
  double worst = 0, effect = 0;
  for (size_t i = 0; i < 40 && i < prompt.size(); ++i) {
    const auto a = g.eval(prompt[i]);
    const auto b = cpu.eval(prompt[i]);
    const double e = max_rel_err(a, b);
    worst = std::max(worst, e);
    EXPECT_LT(e, kRelBound) << "position " << i;
    effect = std::max(effect, max_rel_err(cpu_plain.eval(prompt[i]), b));
  }
  EXPECT_GT(effect, 5 * kRelBound) << "the freq factors barely change the logits: the test could not fail";
  std::printf("[ rope_freqs ] single tokens: max rel err %.3g; without the factors the CPU differs by %.3g\n", worst,
              effect);
}

// Synth writes llama3 factors: 1 for short wavelengths, 8 for long ones, a
// blend between, never outside [1, 8].
TEST(GpuRopeFreqs, Llama3Factors) {
  const auto ff = llama3_rope_factors(64, 10000.0f);
  ASSERT_EQ(ff.size(), 32u);
  EXPECT_EQ(ff.front(), 1.0f);
  EXPECT_EQ(ff.back(), 8.0f);
  int blended = 0;
  for (size_t i = 0; i < ff.size(); ++i) {
    EXPECT_GE(ff[i], 1.0f);
    EXPECT_LE(ff[i], 8.0f);
    if (i) {
      EXPECT_GE(ff[i], ff[i - 1]);
    }
    blended += ff[i] > 1.0f && ff[i] < 8.0f;
  }
  EXPECT_GT(blended, 0);
}

// GpuRmsNorm against twin::rmsnorm (same order) and the float64 reference.
TEST(GpuRows, RmsNormMatchesTwin) {
  gpu::Context& ctx = testing_support::test_context();
  const uint32_t m = 7, n = 320;
  const auto x = testing_support::random_floats(size_t{m} * n, 3, -2.0f, 2.0f);
  const auto w = testing_support::random_floats(n, 4, 0.5f, 1.5f);
  const gpu::Buffer bx = ctx.storage<float>(x, "x"), bw = ctx.storage<float>(w, "w");
  const std::vector<float> poison(x.size(), std::nanf(""));
  const gpu::Buffer by = ctx.storage<float>(poison, "y");
  const GpuRmsNorm norm(ctx, n, m, 1e-5f, bx, &bw, by);
  gpu::Recorder r(ctx);
  norm.record(r);
  r.submit();
  const auto got = ctx.download<float>(by);
  std::vector<float> twin(x.size());
  twin::rmsnorm(x, w, twin, m, n, {norm.spec().wg, 1e-5f});
  std::vector<double> ref(x.size());
  twin::rmsnorm_ref(x, w, ref, m, n, 1e-5f);
  double e_twin = 0, e_ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    e_twin = std::max(e_twin, std::fabs(double(got[i]) - twin[i]));
    e_ref = std::max(e_ref, std::fabs(double(got[i]) - ref[i]));
  }
  EXPECT_LT(e_twin, 1e-5);  // sqrt and the division may differ by an ulp on a GPU
  EXPECT_LT(e_ref, 2e-5);
}

// GpuRope (bias, then RoPE with or without freq factors; a padding token at
// position 0xffffffff gets the bias only) against twin::rope on x + bias.
// Bound: WGSL's cos and sin may err by 2^-11 absolute on [-pi, pi] (the
// spec; SwiftShader uses it: up to ~6e-4 here), and pow and the range
// reduction add ~4 theta 2^-23: (|a| + |b|) (2^-11 + 4 theta 2^-23), with
// |a| + |b| <= 7 and theta <= pos * freq_scale (inv <= 1, factors >= 1).
TEST(GpuRows, RopeMatchesTwin) {
  gpu::Context& ctx = testing_support::test_context();
  uint32_t seed = 21;
  for (int variant = 0; variant < 8; ++variant) {
    const bool neox = variant & 1, bias = variant & 2, freq = variant & 4;
    const uint32_t m = 5, heads = 3, hd = 64, n_rot = neox ? 32 : 64, row = heads * hd;
    const auto y0 = testing_support::random_floats(size_t{m} * row, seed++, -3.0f, 3.0f);
    const auto b = testing_support::random_floats(row, seed++, -0.5f, 0.5f);
    const auto ff = testing_support::random_floats(n_rot / 2, seed++, 1.0f, 8.0f);
    const uint32_t pos[m] = {0, 3, 17, 0xffffffffu, 1000};
    const gpu::Buffer by = ctx.storage<float>(y0, "y"), bp = ctx.storage<uint32_t>(pos, "pos");
    const gpu::Buffer bb = ctx.storage<float>(b, "bias"), bf = ctx.storage<float>(ff, "ff");
    const GpuRopeShape s{m, heads, hd, n_rot, 10000.0f, 0.5f, neox ? blockq::RopeMode::Neox : blockq::RopeMode::Normal};
    const GpuRope rope(ctx, s, {&by, &bp, bias ? &bb : nullptr, freq ? &bf : nullptr});
    gpu::Recorder r(ctx);
    rope.record(r);
    r.submit();
    const auto got = ctx.download<float>(by);
    std::vector<float> want = y0;
    for (uint32_t t = 0; t < m; ++t)
      for (uint32_t i = 0; i < row && bias; ++i) want[t * row + i] += b[i];
    const std::vector<float> biased = want;
    std::vector<int32_t> ipos = {0, 3, 17, 0, 1000};
    const twin::RopeSpec spec{n_rot, 10000.0f, 0.5f, s.mode, freq ? std::span<const float>(ff) : std::span<const float>()};
    twin::rope(want, ipos, {m, heads, hd}, spec);
    double worst = 0;  // NOLINT: kept for a debugger
    for (uint32_t t = 0; t < m; ++t)
      for (uint32_t i = 0; i < row; ++i) {
        const size_t e = size_t{t} * row + i;
        const float expect = t == 3 ? biased[e] : want[e];  // padding: bias only
        const double d = std::fabs(double(got[e]) - expect);
        const double theta = t == 3 ? 0.0 : double(pos[t]) * 0.5;
        worst = std::max(worst, d);
        EXPECT_LE(d, 7.0 * (0x1p-11 + 4 * theta * 0x1p-23)) << "variant " << variant << " t " << t << " i " << i;
      }
    if (freq) {  // the factors change the result (a twin without them differs)
      std::vector<float> plain = biased;
      twin::rope(plain, ipos, {m, heads, hd}, {n_rot, 10000.0f, 0.5f, s.mode});
      double diff = 0;
      for (size_t e = 0; e < plain.size(); ++e) diff = std::max(diff, std::fabs(double(plain[e]) - want[e]));
      EXPECT_GT(diff, 1e-2);
    }
  }
}

// The f16 KV store: each stored value is f32_to_f16 of the input (WGSL lets a
// conversion round either way: at most one f16 ulp apart, and most exact);
// a padding token (position 0xffffffff) writes nothing.
TEST(GpuRows, KvStoreF16) {
  gpu::Context& ctx = testing_support::test_context();
  const uint32_t row = 128, n_ctx = 8, m = 3;
  const auto k = testing_support::random_floats(size_t{m} * row, 31, -4.0f, 4.0f);
  const auto v = testing_support::random_floats(size_t{m} * row, 32, -4.0f, 4.0f);
  const uint32_t pos[m] = {5, 0xffffffffu, 2};
  const gpu::Buffer bk = ctx.storage<float>(k, "k"), bv = ctx.storage<float>(v, "v"), bp = ctx.storage<uint32_t>(pos, "pos");
  const std::vector<uint16_t> poison(size_t{n_ctx} * row, 0x7e00);  // f16 NaN
  const gpu::Buffer kc = ctx.storage<uint16_t>(poison, "kc"), vc = ctx.storage<uint16_t>(poison, "vc");
  const GpuKvStore store(ctx, row, n_ctx, m, bk, bv, bp, kc, vc, Format::F16);
  gpu::Recorder r(ctx);
  store.record(r);
  r.submit();
  const auto gk = ctx.download<uint16_t>(kc), gv = ctx.download<uint16_t>(vc);
  size_t exact = 0, total = 0;
  for (uint32_t p = 0; p < n_ctx; ++p) {
    const int t = p == 5 ? 0 : p == 2 ? 2 : -1;
    for (uint32_t i = 0; i < row; ++i) {
      for (int which = 0; which < 2; ++which) {
        const uint16_t got = (which ? gv : gk)[size_t{p} * row + i];
        if (t < 0) {
          EXPECT_EQ(got, 0x7e00) << "position " << p << " was written";
          continue;
        }
        const uint16_t want = f32_to_f16((which ? v : k)[size_t(t) * row + i]);
        EXPECT_LE(std::abs(int(got) - int(want)), 1) << "position " << p << " i " << i;
        exact += got == want;
        ++total;
      }
    }
  }
  EXPECT_GT(exact, total * 9 / 10);
}

}  // namespace
}  // namespace blockq::model
