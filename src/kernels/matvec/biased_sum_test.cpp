// Parity tests of the biased int8 sum (Options::biased_sum, variant
// kBiasedSum): each scale group's integer sum starts at 0x4B400000, so its
// bits read as the float 12582912 + sum and one subtraction gives f32(sum).
// That is exact, so the kernel matches the twin and gives the plain kernel's
// y bit for bit, for every format of the int8 path, staged or pre-quantized x.
// Also where the plan turns it on by default, and the interleaved token
// chunks (Options::interleave) it goes with for Q8_0 batches.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/test_case.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;

TEST(MatvecInt8, BiasedSumGivesThePlainKernelsY) {
  // Every int8 format (Q6_K's scale groups of 16 too, and 4-bit MatMulNBits),
  // ragged n (45 rows), 5 tokens in chunks of 2 or 4, k of 2 or 3 blocks;
  // per case x staged or pre-quantized, the hooks in turn, and 1 or 2 rows a
  // lane group.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  const char* hooks[] = {"store", "acc", "silu", "bias", "rmsnorm"};
  uint32_t seed = 9800, i = 0;
  for (const Kind& kd : all_kinds()) {
    if (!int8_supported(kd.kind)) continue;
    const bool gx = i % 2 == 1;
    const std::string h = hooks[i % 5];
    const uint32_t k = kd.block * (i % 3 ? 2 : 3);
    std::vector<float> ys[2];
    for (bool biased : {true, false}) {
      Case c{kd, hook(h), 45, k, 5, {}};
      c.twin_ref_tol = 2e-2;  // the int8 quantization of x
      c.opt.int8 = true;
      c.opt.biased_sum = biased;
      c.opt.global_x = gx;
      c.opt.wg = 64;
      c.opt.tpr = 4;
      c.opt.tokens = gx ? 4 : 2;
      c.opt.rpl = i % 4 < 2 ? 1 : 2;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      EXPECT_EQ((spec.variant & kBiasedSum) != 0, biased) << spec.key();
      const std::string src = wgsl(spec);
      EXPECT_EQ(src.find("(0x4B400000 - of0Ar0 * sq0_0) + dot4I8Packed(") != std::string::npos, biased)
          << spec.key();
      EXPECT_EQ(src.find("* f32(iAr00_0)") == std::string::npos, biased) << spec.key();
      auto e = run_case(c, seed, &ys[biased]);
      EXPECT_LT(e.vs_twin, c.hooks.prologue == Prologue::RmsNorm ? 2e-3 : 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, 2e-2) << spec.key();
    }
    EXPECT_EQ(ys[0], ys[1]) << kd.name << " " << h << ": the biased and plain sums differ";
    ++seed;
    ++i;
  }
  EXPECT_GE(i, 9u) << "int8 formats tested";
}

TEST(MatvecInt8, PlanBiasesTheSumWhereItGained) {
  // Limits of the H200 (subgroups of 32, packed dot products): Q4_0 batches
  // on both 8B shapes, Q8_0 batches with interleaved token chunks (14336 x
  // 4096), Q4_1 batches in the pre-quantized plan (4096 x 14336); not at
  // batch 1, not for the other formats, not with f32 activations; asking for
  // it without int8 is an error.
  const Limits lim = h200_limits();
  auto biased = [&](Format f, uint32_t n, uint32_t k, uint32_t m, bool int8 = true) {
    Options o;
    o.int8 = int8;
    WeightKind kind;
    kind.format = f;
    return (plan(lim, kind, n, k, m, {}, o).variant & kBiasedSum) != 0;
  };
  EXPECT_TRUE(biased(Format::Q4_0, 4096, 14336, 8));
  EXPECT_TRUE(biased(Format::Q4_0, 14336, 4096, 8));
  EXPECT_TRUE(biased(Format::Q4_0, 4096, 14336, 2));
  EXPECT_TRUE(biased(Format::Q4_0, 14336, 4096, 4));
  EXPECT_TRUE(biased(Format::Q8_0, 14336, 4096, 8));
  EXPECT_TRUE(biased(Format::Q4_1, 4096, 14336, 8));
  EXPECT_FALSE(biased(Format::Q8_0, 4096, 14336, 8));
  EXPECT_FALSE(biased(Format::Q8_0, 14336, 4096, 2));
  EXPECT_FALSE(biased(Format::Q4_1, 14336, 4096, 8));
  EXPECT_FALSE(biased(Format::Q4_0, 4096, 14336, 1));
  EXPECT_FALSE(biased(Format::Q8_0, 14336, 4096, 1));
  for (Format f : {Format::Q5_0, Format::Q5_1, Format::Q4_K, Format::Q5_K, Format::Q6_K})
    for (auto [n, k] : {std::pair{4096u, 14336u}, std::pair{14336u, 4096u}})
      EXPECT_FALSE(biased(f, n, k, 8)) << static_cast<int>(f) << " " << n;
  EXPECT_FALSE(biased(Format::Q4_0, 4096, 14336, 8, false));
  Options o;
  o.biased_sum = true;
  WeightKind q40;
  q40.format = Format::Q4_0;
  EXPECT_THROW(plan(lim, q40, 64, 1024, 8, {}, o), Error);
}

TEST(MatvecInt8, PlanInterleavesChunksWhereItGained) {
  // H200 limits: the staged int8 batch plans over rows of k < 8192 of Q8_0,
  // Q4_0, Q4_1 and Q5_1 (14336 x 4096 at batch 8: two chunks of 4 tokens);
  // not Q5_0 or the K-quants, not the pre-quantized plans over long rows,
  // not one chunk (batch 4 takes every token in a workgroup), not f32 x,
  // not with the shape forced; asked for, it holds.
  const Limits lim = h200_limits();
  auto spec = [&](const char* f, uint32_t n, uint32_t k, uint32_t m, Options o = {}) {
    if (!o.int8) o.int8 = true;
    return plan(lim, kind_named(f).kind, n, k, m, {}, o);
  };
  auto interleaved = [](const KernelSpec& s) { return (s.variant & kInterleaveChunks) != 0; };
  for (const char* f : {"q8_0", "q4_0", "q4_1", "q5_1"}) {
    const KernelSpec s = spec(f, 14336, 4096, 8);
    EXPECT_TRUE(interleaved(s)) << s.key();
    EXPECT_EQ(s.tokens, 4u) << s.key();
    EXPECT_EQ(grid(s, 14336).z, 1u) << s.key();
  }
  for (const char* f : {"q5_0", "q4_K", "q5_K", "q6_K"}) EXPECT_FALSE(interleaved(spec(f, 14336, 4096, 8))) << f;
  for (const char* f : {"q8_0", "q4_0", "q4_1", "q5_1"}) {
    EXPECT_FALSE(interleaved(spec(f, 4096, 14336, 8))) << f;
    EXPECT_FALSE(interleaved(spec(f, 14336, 4096, 4))) << f;
    EXPECT_FALSE(interleaved(spec(f, 14336, 4096, 1))) << f;
  }
  Options f32;
  f32.int8 = false;
  EXPECT_FALSE(interleaved(plan(lim, kind_named("q8_0").kind, 14336, 4096, 8, {}, f32)));
  Options forced;
  forced.wg = 512;
  EXPECT_FALSE(interleaved(spec("q8_0", 14336, 4096, 8, forced)));
  Options asked;
  asked.interleave = true;
  EXPECT_TRUE(interleaved(spec("q5_0", 14336, 4096, 8, asked)));
}

TEST(MatvecInt8, InterleavedDefaultMatchesTwin) {
  // The default plan of Q8_0 and Q4_1 batches of 7 over 4096 rows of 256 on
  // this adapter: token chunks interleaved (the last one short), Q8_0 with
  // the biased sum; random data, poisoned y, the twin and float64.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  uint32_t seed = 9950;
  for (const char* f : {"q8_0", "q4_1"}) {
    Case c{kind_named(f), hook("store"), 4096, 256, 7, {}};
    c.twin_ref_tol = 2e-2;  // the int8 quantization of x
    c.opt.int8 = true;
    const KernelSpec s = plan(ctx, c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
    ASSERT_TRUE(s.variant & kInterleaveChunks) << s.key();
    ASSERT_GT((c.m + s.tokens - 1) / s.tokens, 1u) << s.key();
    EXPECT_EQ((s.variant & kBiasedSum) != 0, std::string(f) == "q8_0") << s.key();
    const Errors e = run_case(c, seed++);
    EXPECT_LT(e.vs_twin, 1e-4) << s.key();
    EXPECT_LT(e.vs_ref, 2e-2) << s.key();
  }
}
