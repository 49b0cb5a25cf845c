// Parity tests of the quad-lane int8 x staging (Options::quad_stage): four
// lanes quantize each block of 32 x values and exchange its max and code sums
// by subgroup shuffles; y must be the plain staging's bit for bit, 1e-4 of
// the twin (2e-3 with the RMSNorm prologue), 2e-2 of float64. And the plan's
// defaults for it.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/test_case.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "support/gpu.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;

TEST(MatvecInt8, QuadStagingMatchesTwinAndPlainStaging) {
  // Options::quad_stage (subgroups): four lanes stage each block of 32 and
  // exchange its max and code sums by shuffles. The codes, scales and sums
  // are those of the plain staging, so both kernels match the twin and give
  // the same y. Several tiles, 3 tokens in chunks of 2, the prologue (its
  // hook runs in the staging), a k whose last tile is partial, ragged n, and
  // small workgroups whose quad lanes take several passes.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4 || !ctx.features().subgroups) GTEST_SKIP() << "needs packed dot4 and subgroups";
  const auto kinds = all_kinds();
  uint32_t seed = 4800;
  struct V {
    int kind;
    uint32_t blocks, tile;
    const char* hook;
    uint32_t wg;  // 0: the plan's; 64: 8 passes of quad lanes in 2 groups (q8_0) or 2 ragged passes (q4_0)
  };
  const V vs[] = {{7, 16, 128, "store", 0}, {7, 9, 128, "rmsnorm", 0}, {3, 13, 0, "acc", 0},
                  {8, 3, 0, "rmsnorm", 0},  {7, 64, 0, "store", 64},   {3, 13, 0, "rmsnorm", 64},
                  {11, 5, 0, "acc", 0},     {12, 3, 0, "rmsnorm", 64},  // q2_K, q3_K
                  {10, 3, 0, "acc", 0},     {13, 13, 0, "store", 0},    // q6_K, iq4_nl
                  {14, 2, 0, "rmsnorm", 64}};                           // iq4_xs
  for (const V& v : vs) {
    const Kind& kd = kinds[v.kind];
    std::vector<float> ys[2];
    for (bool quad : {true, false}) {
      Case c{kd, hook(v.hook), 45, kd.block * v.blocks, 3, {}};
      c.opt.int8 = true;
      c.opt.subgroups = true;
      c.opt.quad_stage = quad;
      c.opt.tokens = 2;
      if (v.tile) c.opt.max_tile = v.tile;
      if (v.wg) {
        c.opt.wg = v.wg;
        c.opt.tpr = 4;
      }
      c.twin_ref_tol = 2e-2;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      EXPECT_EQ((spec.variant & kQuadStage) != 0, quad) << spec.key();
      EXPECT_EQ(wgsl(spec).find("subgroupShuffleXor(am, 2u)") != std::string::npos, quad) << spec.key();
      auto e = run_case(c, seed, &ys[quad]);
      const double tw = c.hooks.prologue == Prologue::RmsNorm ? 2e-3 : 1e-4;
      EXPECT_LT(e.vs_twin, tw) << spec.key();
      EXPECT_LT(e.vs_ref, 2e-2) << spec.key();
    }
    ++seed;
    EXPECT_EQ(ys[0], ys[1]) << kd.name << " " << v.hook << ": quad and plain staging differ";
  }
  // On by default for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q2_K and
  // Q3_K; for Q6_K, IQ4_NL and IQ4_XS only at batch 1 over k < 8192; never
  // without subgroups.
  Options o;
  o.int8 = true;
  for (int i : {3, 4, 5, 6, 7, 8, 9, 11, 12}) {
    EXPECT_NE(plan(ctx, kinds[i].kind, 45, 256, 1, {}, o).variant & kQuadStage, 0u) << kinds[i].name;
    EXPECT_NE(plan(ctx, kinds[i].kind, 45, 256, 2, {}, o).variant & kQuadStage, 0u) << kinds[i].name;
  }
  ASSERT_EQ(kinds[10].kind.format, Format::Q6_K);
  ASSERT_EQ(kinds[13].kind.format, Format::IQ4_NL);
  ASSERT_EQ(kinds[14].kind.format, Format::IQ4_XS);
  for (int i : {10, 13, 14}) {
    EXPECT_NE(plan(ctx, kinds[i].kind, 45, 7936, 1, {}, o).variant & kQuadStage, 0u) << kinds[i].name;
    EXPECT_EQ(plan(ctx, kinds[i].kind, 45, 8192, 1, {}, o).variant & kQuadStage, 0u) << kinds[i].name;
    EXPECT_EQ(plan(ctx, kinds[i].kind, 45, 256, 2, {}, o).variant & kQuadStage, 0u) << kinds[i].name;
  }
  o.subgroups = false;
  EXPECT_EQ(plan(ctx, kinds[7].kind, 45, 256, 1, {}, o).variant & kQuadStage, 0u);
}
