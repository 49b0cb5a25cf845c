// The fused QKV projection (one matvec or matmul per layer over the stacked
// rows of attn_q, attn_k, attn_v, writing [q | k | v] rows that the KV store
// and attention read at element offsets): its logits against the unfused
// path (three projections) on the tiny synthetic model with GQA (4 heads, 2
// kv heads), llama and qwen2 (biases), rope_freqs, single tokens and a
// batched prompt; the dispatch counts of both; the KV store inside the
// fused matvec against the store kernel; and the fallback when the three
// weights' formats differ (that layer runs unfused) against the CPU
// reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "kernels/matvec/generator.hpp"
#include "model/cpu_forward.hpp"
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

// Fused and unfused rows are the same dot products with the same hooks; only
// the plan (and so the summation order) may differ with n, so they agree far
// below the GPU-vs-CPU bound of gpu_forward_test.cpp (1e-3).
constexpr double kSameBound = 1e-4;
constexpr double kRelBound = 1e-3;

const char* kText = "The keeper climbed the tower and looked at the sea while the boats came back.";

std::string tiny(Arch arch, bool rope_freqs) {
  SynthOptions o;
  o.arch = arch;
  o.type = Format::Q8_0;
  o.seed = 11;
  o.rope_freqs = rope_freqs;
  return synth_file(fmt::format("fused-{}{}", arch == Arch::Llama ? "llama" : "qwen2", rope_freqs ? "-ropefreqs" : ""),
                    o);
}

struct Case {
  Arch arch;
  bool rope_freqs;
  uint32_t batch;  // 1: token by token; 8: the prompt in batches (matvec, the crossover forced to 8)
};

class FusedQkv : public ::testing::TestWithParam<Case> {};

TEST_P(FusedQkv, MatchesUnfused) {
  const Case c = GetParam();
  const gguf::GgufFile f = gguf::GgufFile::open(tiny(c.arch, c.rope_freqs));
  gpu::Context& ctx = testing_support::test_context();
  const GpuModelOptions base{.n_ctx = 64, .batch = c.batch, .crossover = 8u};
  GpuModelOptions apart = base;
  apart.fuse_qkv = false;
  GpuModel fused(ctx, f, base), unfused(ctx, f, apart);
  const ModelConfig& cfg = fused.config();
  ASSERT_LT(cfg.n_head_kv, cfg.n_head) << "the case should have GQA";
  ASSERT_EQ(cfg.qkv_bias, c.arch == Arch::Qwen2);
  EXPECT_EQ(fused.fused_qkv_layers(), cfg.n_layer);
  EXPECT_EQ(unfused.fused_qkv_layers(), 0u);
  // Per layer: three matvecs become one; with rope_freqs also the two
  // GpuRope dispatches (q, k) become one; where the fused matvec stores k and
  // v (llama, f16 cache: every layer), the KV store goes too.
  EXPECT_EQ(fused.kv_store_fused_layers(), c.arch == Arch::Llama && !c.rope_freqs ? cfg.n_layer : 0u);
  EXPECT_EQ(unfused.kv_store_fused_layers(), 0u);
  EXPECT_EQ(unfused.dispatches_per_token() - fused.dispatches_per_token(),
            (c.rope_freqs ? 3 : 2) * cfg.n_layer + fused.kv_store_fused_layers());

  const std::vector<TokenId> prompt = Tokenizer(from_gguf(f)).tokenize(kText, true);
  ASSERT_GT(prompt.size(), 2u * c.batch);
  double worst = 0;
  if (c.batch > 1) {
    const auto a = fused.eval(std::span<const TokenId>(prompt));
    std::vector<float> fa(a.begin(), a.end());
    const double e = max_rel_err(fa, unfused.eval(std::span<const TokenId>(prompt)));
    worst = std::max(worst, e);
    EXPECT_LT(e, kSameBound) << "batched prompt";
  } else {
    for (size_t i = 0; i < prompt.size(); ++i) {
      const auto a = fused.eval(prompt[i]);
      std::vector<float> fa(a.begin(), a.end());
      const double e = max_rel_err(fa, unfused.eval(prompt[i]));
      worst = std::max(worst, e);
      EXPECT_LT(e, kSameBound) << "position " << i;
    }
  }
  // A few single tokens after the prompt (reading the cache the prompt wrote).
  for (TokenId t : {TokenId(7), TokenId(300), TokenId(42)}) {
    const auto a = fused.eval(t);
    std::vector<float> fa(a.begin(), a.end());
    const double e = max_rel_err(fa, unfused.eval(t));
    worst = std::max(worst, e);
    EXPECT_LT(e, kSameBound) << "token " << t << " after the prompt";
  }
  std::printf("[ %s%s batch %u ] fused vs unfused QKV: max rel diff %.3g; dispatches per token %u vs %u\n",
              cfg.arch_name.c_str(), c.rope_freqs ? " rope_freqs" : "", c.batch, worst, fused.dispatches_per_token(),
              unfused.dispatches_per_token());
}

INSTANTIATE_TEST_SUITE_P(Tiny, FusedQkv,
                         ::testing::Values(Case{Arch::Llama, false, 1}, Case{Arch::Qwen2, false, 1},
                                           Case{Arch::Llama, true, 1}, Case{Arch::Qwen2, false, 8}),
                         [](const auto& info) {
                           return fmt::format("{}{}_batch{}", info.param.arch == Arch::Llama ? "llama" : "qwen2",
                                              info.param.rope_freqs ? "_ropefreqs" : "", info.param.batch);
                         });

// The KV store in the fused QKV matvec (fuse_kv_store) against the store
// kernel: the same k and v values reach the cache (f32 bits, or the same
// pack2x16float pairs), so single tokens give the same logits bit for bit,
// with one dispatch a layer fewer. The f16 cache with NeoX RoPE (qwen2) keeps
// the store kernel, as does qwen2 (its bias) under the low-end profile.
TEST(FusedKvStore, SameLogitsAsTheStoreKernel) {
  gpu::Context& ctx = testing_support::test_context();
  for (Arch arch : {Arch::Llama, Arch::Qwen2})
    for (KvType kv : {KvType::F16, KvType::F32}) {
      SCOPED_TRACE(fmt::format("{} kv {}", arch == Arch::Llama ? "llama" : "qwen2", kv_type_name(kv)));
      const gguf::GgufFile f = gguf::GgufFile::open(tiny(arch, false));
      const GpuModelOptions on{.n_ctx = 40, .batch = 1, .kv_type = kv};
      GpuModelOptions off = on;
      off.fuse_kv_store = false;
      GpuModel a(ctx, f, on), b(ctx, f, off);
      const uint32_t layers = a.config().n_layer;
      // qwen2's f16 cache with NeoX RoPE keeps the store kernel, and so does
      // its bias where it makes 9 storage buffers, past the adapter's limit
      // (the low-end profile allows 8).
      const bool fits = arch == Arch::Llama || matvec::limits_of(ctx).storage_buffers >= 9;
      const bool fusable = (arch == Arch::Llama || kv == KvType::F32) && fits;
      EXPECT_EQ(a.kv_store_fused_layers(), fusable ? layers : 0u);
      EXPECT_EQ(b.kv_store_fused_layers(), 0u);
      EXPECT_EQ(b.dispatches_per_token() - a.dispatches_per_token(), a.kv_store_fused_layers());
      const std::vector<TokenId> prompt = Tokenizer(from_gguf(f)).tokenize(kText, true);
      for (size_t i = 0; i < prompt.size(); ++i) {
        const auto la = a.eval(prompt[i]);
        const std::vector<float> va(la.begin(), la.end());
        const auto lb = b.eval(prompt[i]);
        ASSERT_EQ(va.size(), lb.size());
        EXPECT_TRUE(std::equal(va.begin(), va.end(), lb.begin(), [](float x, float y) {
          return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y);
        })) << "position " << i;
      }
    }
}

// Layer 0's attn_v requantized to q4_0 (the others stay q8_0): that layer
// cannot stack its rows and falls back to three projections, the other is
// fused, and the logits still match the CPU reference (which reads the same
// mixed file), one token at a time and in a batch of 8.
TEST(FusedQkvFallback, MixedFormatsRunUnfused) {
  const gguf::GgufFile src = gguf::GgufFile::open(tiny(Arch::Qwen2, false));
  const std::string mixed_name = "blk.0.attn_v.weight";
  gguf::GgufWriter w;
  w.copy_metadata(src);
  std::vector<uint8_t> requant;
  for (const auto& t : src.tensors()) {
    if (t.name != mixed_name) {
      w.add_tensor_view(t.name, t.shape, t.format, src.tensor_data(t));
      continue;
    }
    ASSERT_EQ(t.format, Format::Q8_0);
    requant = quantize(Format::Q4_0, dequantize(t.format, src.tensor_data(t), t.n_elems()));
    w.add_tensor(t.name, t.shape, Format::Q4_0, requant);
  }
  const std::string path = (testing::temp_dir() / "fused-mixed-qwen2.gguf").string();
  w.write(path);
  const gguf::GgufFile f = gguf::GgufFile::open(path);
  ASSERT_EQ(f.tensor(mixed_name).format, Format::Q4_0);

  gpu::Context& ctx = testing_support::test_context();
  GpuModel g(ctx, f, {.n_ctx = 64, .batch = 8, .crossover = 8u});
  ASSERT_EQ(g.config().n_layer, 2u);
  EXPECT_EQ(g.fused_qkv_layers(), 1u);
  EXPECT_EQ(g.prompt_projection_count(), 6u + 4u);
  CpuModel cpu(f, {ForwardMode::F32, 64, 1});
  const std::vector<TokenId> prompt = Tokenizer(from_gguf(f)).tokenize(kText, true);
  double worst = 0;
  const double e0 = max_rel_err(g.eval(std::span<const TokenId>(prompt)), cpu.eval(std::span<const TokenId>(prompt)));
  worst = std::max(worst, e0);
  EXPECT_LT(e0, kRelBound) << "batched prompt";
  for (TokenId t : {TokenId(7), TokenId(300), TokenId(42), TokenId(5)}) {
    const double e = max_rel_err(g.eval(t), cpu.eval(t));
    worst = std::max(worst, e);
    EXPECT_LT(e, kRelBound) << "token " << t;
  }
  std::printf("[ mixed attn_v q4_0 ] 1 of 2 layers fused: max rel err against the CPU %.3g\n", worst);
}

}  // namespace
}  // namespace blockq::model
