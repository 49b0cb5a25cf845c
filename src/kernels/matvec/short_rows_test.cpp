// Short rows of a single token (a small model's projections, k = 960 to
// 4096): the plan's 32 lanes and 256 invocations for f32 x, its cap of 512
// invocations for int8 x over k <= 2048, the lm_head plan of Q4_0 and Q8_0
// with int8 x, and their parity with the twin, including the RMSNorm
// prologue's two-level sum of squares.
#include <gtest/gtest.h>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/test_case.hpp"
#include "support/gpu.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;

namespace {

Hooks rope_heads(uint32_t head_dim) {
  Hooks h;
  h.prologue = Prologue::RmsNorm;
  h.epilogue = Epilogue::Rope;
  h.head_dim = head_dim;
  h.n_rot = head_dim;
  return h;
}

}  // namespace

TEST(MatvecShortRows, PlanTakes32LanesAnd256InvocationsForF32X) {
  const Limits nv = h200_limits();
  WeightKind q8{Format::Q8_0}, q4{Format::Q4_0};
  Hooks acc, silu = hook("rmsnorm");
  acc.epilogue = Epilogue::Acc;
  silu.epilogue = Epilogue::SiluGate;
  // smollm2-360m's layer (k = 960: 30 units, one a lane) and llama-3.2-1b's
  // qkv with f32 x (`--f32-activations`, or a format whose int8 threshold is
  // 2^24 weight elements).
  const struct {
    WeightKind kind;
    uint32_t n, k;
    Hooks hooks;
  } cases[] = {{q8, 960, 960, acc},   {q8, 1600, 960, rope_heads(64)}, {q8, 2560, 960, silu},
               {q8, 960, 2560, acc},  {q4, 3072, 2048, rope_heads(64)}};
  for (const auto& c : cases) {
    const KernelSpec s = plan(nv, c.kind, c.n, c.k, 1, c.hooks, {});
    EXPECT_EQ(s.tpr, 32u) << s.key();
    EXPECT_EQ(s.wg, 256u) << s.key();
    EXPECT_EQ(s.rpl, 1u) << s.key();
  }
  // Not for batches, long rows, int8 x, many rows, or a forced shape.
  EXPECT_EQ(plan(nv, q8, 960, 960, 2, acc, {}).tpr, 16u) << "a batch keeps its plan";
  EXPECT_EQ(plan(nv, q8, 4096, 14336, 1, {}, {}).wg, 1024u);
  Options i8;
  i8.int8 = true;
  EXPECT_EQ(plan(nv, q8, 960, 960, 1, acc, i8).tpr, 16u) << "int8 x keeps its lanes";
  EXPECT_EQ(plan(nv, q8, 49152, 960, 1, {}, {}).tpr, 4u) << "many rows keep their plan";
  Options wg64;
  wg64.wg = 64;
  EXPECT_EQ(plan(nv, q8, 960, 960, 1, acc, wg64).wg, 64u);
  // A subgroup of 4 still caps the lanes (SwiftShader).
  Limits sw{256, 16384, 65535, 4, 4};
  EXPECT_EQ(plan(sw, q8, 960, 960, 1, acc, {}).tpr, 4u);
}

TEST(MatvecShortRows, Int8RowsOfAtMost2048TakeAtMost512Invocations) {
  const Limits nv = h200_limits();
  WeightKind q4{Format::Q4_0};
  Hooks silu = hook("rmsnorm");
  silu.epilogue = Epilogue::SiluGate;
  Options i8;
  i8.int8 = true;
  EXPECT_EQ(plan(nv, q4, 8192, 2048, 1, silu, i8).wg, 512u);   // llama-3.2-1b's gate and up
  EXPECT_EQ(plan(nv, q4, 4096, 4096, 1, {}, i8).wg, 1024u);    // the 8B's o projection keeps 1024
  EXPECT_EQ(plan(nv, q4, 14336, 4096, 1, silu, i8).wg, 512u);  // n >= 12288: its own plan
}

TEST(MatvecShortRows, DefaultPlansMatchTwin) {
  // The portable path (no subgroups, so no cap of 4 lanes on SwiftShader):
  // 30 units over 32 lanes, the RMSNorm sum over 256 invocations in 32 runs
  // of 8, ragged n, random x and weights, poisoned y.
  auto& ctx = test_context();
  Options portable;
  portable.subgroups = false;
  uint32_t seed = 9500;
  for (const char* hk : {"acc", "rmsnorm", "silu", "rope"}) {
    Hooks h = hook(hk);
    if (std::string(hk) == "silu" || std::string(hk) == "rope") h.prologue = Prologue::RmsNorm;
    const uint32_t n = std::string(hk) == "rope" ? 40 : 37;
    const Case c{kind_named("q8_0"), h, n, 960, 1, portable};
    const KernelSpec s = plan(ctx, c.kind.kind, c.n, c.k, 1, c.hooks, c.opt);
    if (ctx.limits().maxComputeInvocationsPerWorkgroup >= 256) {
      EXPECT_EQ(s.tpr, 32u) << s.key();
      EXPECT_EQ(s.wg, 256u) << s.key();
    }
    const Errors e = run_case(c, seed++);
    EXPECT_LT(e.vs_twin, std::string(hk) == "rope" ? 2e-3 : 1e-4) << s.key();
    EXPECT_LT(e.vs_ref, std::string(hk) == "rope" ? 2e-3 : 5e-4) << s.key();
  }
}

TEST(MatvecShortRows, LmHeadsTakeTheirMeasuredPlans) {
  const Limits nv = h200_limits();
  WeightKind q8{Format::Q8_0}, q4{Format::Q4_0}, q6{Format::Q6_K};
  const Hooks rms = hook("rmsnorm");
  Options i8;
  i8.int8 = true;
  const KernelSpec a = plan(nv, q4, 128256, 2048, 1, rms, i8);  // llama-3.2-1b
  EXPECT_EQ(a.tpr, 8u);
  EXPECT_EQ(a.rpl, 4u);
  EXPECT_EQ(a.wg, 512u);
  EXPECT_EQ(a.unroll, 2u);
  const KernelSpec b = plan(nv, q4, 128256, 4096, 1, rms, i8);  // llama-3-8b
  EXPECT_EQ(b.tpr, 8u);
  EXPECT_EQ(b.rpl, 4u);
  EXPECT_EQ(b.wg, 512u);
  const KernelSpec c = plan(nv, q8, 49152, 960, 1, rms, i8);  // smollm2-360m
  EXPECT_EQ(c.tpr, 8u);
  EXPECT_EQ(c.rpl, 4u);
  EXPECT_EQ(c.wg, 256u);
  EXPECT_EQ(c.unroll, 1u);
  // Q6_K: 4 lanes, 1 row, 512 invocations (session 32).
  for (const uint32_t k : {2048u, 4096u}) {
    const KernelSpec q = plan(nv, q6, 128256, k, 1, rms, i8);
    EXPECT_EQ(q.tpr, 4u) << k;
    EXPECT_EQ(q.rpl, 1u) << k;
    EXPECT_EQ(q.wg, 512u) << k;
  }
  // Not measured: f32 x; it keeps its plan.
  EXPECT_EQ(plan(nv, q8, 49152, 960, 1, rms, {}).tpr, 4u);
}

TEST(MatvecShortRows, LmHeadPlanMatchesTwin) {
  // Many rows (n = 16390 >= 16384, ragged), int8 x, the final RMSNorm, random
  // weights and x, poisoned y: Q4_0 (two units a step, 256 invocations at
  // k = 1024), Q8_0 (512 at k = 2048) and Q6_K (4 lanes, 1 row, k = 1024).
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  Options i8;
  i8.int8 = true;
  uint32_t seed = 9600;
  for (const char* kn : {"q4_0", "q8_0", "q6_K"}) {
    const std::string name = kn;
    const uint32_t k = name == "q8_0" ? 2048 : 1024;
    const Case c{kind_named(kn), hook("rmsnorm"), 16390u, k, 1, i8, 0, 2e-2};
    const KernelSpec s = plan(ctx, c.kind.kind, c.n, c.k, 1, c.hooks, c.opt);
    EXPECT_EQ(s.rpl, name == "q6_K" ? 1u : 4u) << s.key();
    const Errors e = run_case(c, seed++);
    EXPECT_LT(e.vs_twin, 2e-3) << s.key();
    EXPECT_LT(e.vs_ref, 2e-2) << s.key();
  }
}
