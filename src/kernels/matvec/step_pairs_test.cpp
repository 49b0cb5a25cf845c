// Parity tests of the lane loop run two steps an iteration (Options::
// step_pairs, variant kStepPairs): the same steps in the same order, so the
// same y bit for bit as the one-step loop, and the twin's.
#include <gtest/gtest.h>

#include <string>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/test_case.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;

TEST(MatvecInt8, StepPairsMatchTwinAndOneStepLoop) {
  // Ragged n (45 rows), 5 tokens in chunks of 2, x [5, k], W [45, k], int8
  // activations with a constant step count. Per case: the formats the plan
  // pairs (Q4_1, Q5_0), Q4_0 with the pipelined loop and biased sums (its
  // prefetch crosses the pair), Q8_0 with the residual epilogue, and Q5_1
  // with the RMSNorm prologue; 4 or 8 steps a lane.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  struct V {
    const char* kind;
    const char* hook;
    uint32_t blocks, unroll, rpl;
    bool pipe;
  };
  const V vs[] = {
      {"q4_1", "store", 16, 2, 2, false}, {"q5_0", "store", 32, 1, 4, false}, {"q4_0", "store", 16, 2, 4, true},
      {"q8_0", "acc", 16, 1, 2, false},   {"q5_1", "rmsnorm", 16, 2, 1, false},
  };
  uint32_t seed = 9300;
  for (const V& v : vs) {
    const Kind& kd = kind_named(v.kind);
    std::vector<float> ys[2];
    for (bool pairs : {true, false}) {
      Case c{kd, hook(v.hook), 45, kd.block * v.blocks, 5, {}};
      c.twin_ref_tol = 2e-2;  // the int8 quantization of x
      c.opt.int8 = true;
      c.opt.const_steps = true;
      c.opt.step_pairs = pairs;
      c.opt.quad_stage = ctx.features().subgroups;
      if (v.pipe) {
        c.opt.pipeline = true;
        c.opt.biased_sum = true;
      }
      c.opt.wg = 64;
      c.opt.tpr = 4;
      c.opt.tokens = 2;
      c.opt.unroll = v.unroll;
      c.opt.rpl = v.rpl;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      EXPECT_EQ((spec.variant & kStepPairs) != 0, pairs) << spec.key();
      EXPECT_EQ((spec.variant & kPipeline) != 0, v.pipe) << spec.key();
      EXPECT_EQ(wgsl(spec).find("for (var st2 = 0u;") != std::string::npos, pairs) << spec.key();
      auto e = run_case(c, seed, &ys[pairs]);
      EXPECT_LT(e.vs_twin, c.hooks.prologue == Prologue::RmsNorm ? 2e-3 : 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, 2e-2) << spec.key();
    }
    EXPECT_EQ(ys[0], ys[1]) << v.kind << ": two-step and one-step loops differ";
    ++seed;
  }
  // Refused where the step count is odd (3 blocks, 1 lane, 1 unit a step:
  // 3 steps), where
  // the steps are not constant, and with a probe.
  Options o;
  o.int8 = true;
  o.const_steps = true;
  o.step_pairs = true;
  o.tpr = 1;
  o.unroll = 1;
  o.wg = 64;
  const Kind& q41 = kind_named("q4_1");
  EXPECT_THROW(plan(ctx, q41.kind, 45, q41.block * 3, 2, {}, o), Error);
  Options loop = o;
  loop.const_steps = false;
  EXPECT_THROW(plan(ctx, q41.kind, 45, q41.block * 4, 2, {}, loop), Error);
  Options probe = o;
  probe.probe = 4;
  EXPECT_THROW(plan(ctx, q41.kind, 45, q41.block * 4, 2, {}, probe), Error);
}

TEST(Matvec, PlanPairsStepsWhereItGained) {
  // H200-like limits, int8 x: on for the staged batch plans of Q4_1 and Q5_0
  // over n >= 4096 rows; off for the other formats, with x pre-quantized
  // (4096 x 14336), at batch 1, for a few tokens, over fewer rows, with f32
  // x, and when asked.
  const Limits lim = h200_limits();
  Options i8;
  i8.int8 = true;
  auto paired = [&](const char* name, uint32_t n, uint32_t k, uint32_t m, const Options& o) {
    return (plan(lim, kind_named(name).kind, n, k, m, {}, o).variant & kStepPairs) != 0;
  };
  EXPECT_TRUE(paired("q4_1", 14336, 4096, 8, i8));
  EXPECT_TRUE(paired("q5_0", 14336, 4096, 8, i8));
  EXPECT_FALSE(paired("q4_0", 14336, 4096, 8, i8));
  EXPECT_FALSE(paired("q8_0", 14336, 4096, 8, i8));
  EXPECT_FALSE(paired("q5_1", 14336, 4096, 8, i8));
  EXPECT_FALSE(paired("q4_1", 4096, 14336, 8, i8));
  EXPECT_FALSE(paired("q4_1", 14336, 4096, 1, i8));
  EXPECT_FALSE(paired("q4_1", 14336, 4096, 3, i8));
  EXPECT_FALSE(paired("q4_1", 2048, 4096, 8, i8));
  EXPECT_FALSE(paired("q4_1", 14336, 4096, 8, {}));
  Options off = i8;
  off.step_pairs = false;
  EXPECT_FALSE(paired("q4_1", 14336, 4096, 8, off));
}
