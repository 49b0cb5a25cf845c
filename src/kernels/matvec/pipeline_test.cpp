// Parity tests of the pipelined lane loop (Options::pipeline, variant
// kPipeline): each lane fetches its next step's weight words before decoding
// the current step's. The sums and their order are the plain loop's, so both
// kernels match the twin and give the same y (f32 and int8 activations).
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

namespace {

int kind_index(const std::vector<Kind>& kinds, const std::string& name) {
  for (size_t i = 0; i < kinds.size(); ++i)
    if (kinds[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

TEST(Matvec, PipelinedLoopMatchesTwinAndPlainLoop) {
  // Every format with a fetch/decode split; ragged n (45 rows), 3 tokens in
  // chunks of 2, and per case one of: several tiles (the fetch restarts each
  // tile), 2 units a step, 2 rows a lane group, the SiLU gate (two weights),
  // split-k.
  auto& ctx = test_context();
  const auto kinds = all_kinds();
  const bool dot4 = ctx.features().packed_dot4;
  struct V {
    const char* kind;
    uint32_t blocks;
    const char* hook;
    uint32_t tile, unroll, rpl, splits;
    bool i8;
  };
  const V vs[] = {
      {"q8_0", 13, "store", 128, 1, 1, 1, false}, {"q8_0", 16, "acc", 0, 2, 2, 1, true},
      {"q4_0", 13, "silu", 0, 1, 2, 1, false},    {"q4_0", 24, "store", 0, 2, 1, 3, true},
      {"q4_K", 3, "store", 256, 1, 2, 1, true},   {"q4_K", 5, "rmsnorm", 0, 2, 1, 1, false},
      {"q5_K", 3, "silu", 0, 1, 1, 1, true},      {"q5_K", 4, "store", 512, 1, 2, 2, false},
      {"q6_K", 3, "store", 0, 1, 2, 1, true},     {"q6_K", 5, "acc", 256, 2, 1, 1, false},
  };
  uint32_t seed = 9100;
  for (const V& v : vs) {
    if (v.i8 && !dot4) continue;
    const int ki = kind_index(kinds, v.kind);
    ASSERT_GE(ki, 0) << v.kind;
    const Kind& kd = kinds[ki];
    ASSERT_TRUE(pipeline_supported(kd.kind)) << kd.name;
    std::vector<float> ys[2];
    for (bool pipe : {true, false}) {
      Case c{kd, hook(v.hook), 45, kd.block * v.blocks, 3, {}};
      c.opt.pipeline = pipe;
      c.opt.int8 = v.i8;
      c.opt.wg = 64;
      c.opt.tpr = 4;
      c.opt.tokens = 2;
      c.opt.unroll = v.unroll;
      c.opt.rpl = v.rpl;
      if (v.splits > 1) c.opt.splits = v.splits;
      if (v.tile) c.opt.max_tile = v.tile;
      if (v.i8) c.twin_ref_tol = 2e-2;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      EXPECT_EQ((spec.variant & kPipeline) != 0, pipe) << spec.key();
      const std::string src = wgsl(spec);
      EXPECT_EQ(src.find("= fetchA(row0, uu0 + TPR * UNROLL)") != std::string::npos, pipe) << spec.key();
      auto e = run_case(c, seed, &ys[pipe]);
      const double tw = v.i8 && c.hooks.prologue == Prologue::RmsNorm ? 2e-3 : 1e-4;
      EXPECT_LT(e.vs_twin, tw) << spec.key();
      EXPECT_LT(e.vs_ref, v.i8 ? 2e-2 : 5e-4) << spec.key();
    }
    ++seed;
    EXPECT_EQ(ys[0], ys[1]) << kd.name << " " << v.hook << ": pipelined and plain loops differ";
  }
  // Refused for a format without the split and with a probe other than 5.
  const Kind& q8 = kinds[kind_index(kinds, "q8_0")];
  Options o;
  o.pipeline = true;
  EXPECT_THROW(plan(ctx, kinds[kind_index(kinds, "q4_1")].kind, 45, 256, 1, {}, o), Error);
  EXPECT_THROW(plan(ctx, kinds[kind_index(kinds, "f16")].kind, 45, 256, 1, {}, o), Error);
  o.probe = 7;
  EXPECT_THROW(plan(ctx, q8.kind, 45, 256, 1, {}, o), Error);
}

TEST(MatvecInt8, PipelinedLoopInTheQ40BatchPlan) {
  // Q4_0's int8 batch plan pipelined, with the variants that plan combines:
  // biased sums, interleaved token chunks, quad-lane staging, a constant step
  // count, 2 units a step and 2 or 4 rows a lane group. Ragged n (45 rows), 5
  // tokens in chunks of 2, k of 8 blocks; the same y as the plain loop, bit
  // for bit, and the twin's.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  const auto kinds = all_kinds();
  const Kind& kd = kinds[kind_index(kinds, "q4_0")];
  uint32_t seed = 9150;
  for (uint32_t rpl : {2u, 4u}) {
    std::vector<float> ys[2];
    for (bool pipe : {true, false}) {
      Case c{kd, hook("store"), 45, kd.block * 8, 5, {}};
      c.twin_ref_tol = 2e-2;  // the int8 quantization of x
      c.opt.int8 = true;
      c.opt.pipeline = pipe;
      c.opt.biased_sum = true;
      c.opt.interleave = true;
      c.opt.quad_stage = ctx.features().subgroups;
      c.opt.const_steps = true;
      c.opt.wg = 64;
      c.opt.tpr = 4;
      c.opt.tokens = 2;
      c.opt.unroll = 2;
      c.opt.rpl = rpl;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      EXPECT_EQ((spec.variant & kPipeline) != 0, pipe) << spec.key();
      EXPECT_TRUE(spec.variant & kBiasedSum) << spec.key();
      EXPECT_TRUE(spec.variant & kInterleaveChunks) << spec.key();
      EXPECT_TRUE(spec.variant & kConstSteps) << spec.key();
      auto e = run_case(c, seed, &ys[pipe]);
      EXPECT_LT(e.vs_twin, 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, 2e-2) << spec.key();
    }
    EXPECT_EQ(ys[0], ys[1]) << "rpl " << rpl << ": pipelined and plain loops differ";
    ++seed;
  }
}

TEST(Matvec, PlanPipelinesWhereItGained) {
  // H200-like limits with the int8 dot product: on for Q4_K batches split
  // over k, Q8_0 at batch 1 with 2 rows a lane group (n >= 12288), Q4_0's
  // staged batch plans (n >= 4096) and, with
  // f32 x, Q4_0 in the short-batch plan (8 tokens a workgroup over many
  // rows); off elsewhere, with a timing probe other than 5, and when asked.
  const Limits lim = h200_limits();
  const auto kinds = all_kinds();
  auto kind = [&](const char* name) { return kinds[kind_index(kinds, name)].kind; };
  Options i8;
  i8.int8 = true;
  auto piped = [&](const char* name, uint32_t n, uint32_t k, uint32_t m, const Options& o) {
    const KernelSpec s = plan(lim, kind(name), n, k, m, {}, o);
    return (s.variant & kPipeline) != 0;
  };
  EXPECT_TRUE(piped("q4_K", 4096, 14336, 8, i8));
  EXPECT_TRUE(piped("q4_K", 14336, 4096, 8, i8));
  EXPECT_TRUE(piped("q8_0", 14336, 4096, 1, i8));
  EXPECT_FALSE(piped("q8_0", 4096, 14336, 1, i8));
  EXPECT_FALSE(piped("q4_K", 4096, 14336, 1, i8));
  EXPECT_FALSE(piped("q5_K", 4096, 14336, 8, i8));
  EXPECT_FALSE(piped("q8_0", 4096, 14336, 8, i8));
  EXPECT_FALSE(piped("q4_K", 4096, 14336, 8, {}));
  EXPECT_TRUE(piped("q4_0", 14336, 4096, 8, {}));
  EXPECT_FALSE(piped("q4_0", 4096, 14336, 8, {}));
  EXPECT_FALSE(piped("q4_0", 14336, 4096, 1, {}));
  EXPECT_FALSE(piped("q8_0", 14336, 4096, 8, {}));
  // int8 Q4_0 in its staged batch plans (n >= 4096), not with x
  // pre-quantized, for a few tokens or at batch 1.
  EXPECT_TRUE(piped("q4_0", 14336, 4096, 8, i8));
  EXPECT_TRUE(piped("q4_0", 8192, 8192, 8, i8));
  EXPECT_FALSE(piped("q4_0", 4096, 14336, 8, i8));
  EXPECT_FALSE(piped("q4_0", 14336, 4096, 3, i8));
  EXPECT_FALSE(piped("q4_0", 14336, 4096, 1, i8));
  EXPECT_FALSE(piped("q4_0", 2048, 4096, 8, i8));  // fewer rows than measured
  Options probe = i8;
  probe.probe = 7;
  EXPECT_FALSE(piped("q4_K", 4096, 14336, 8, probe));
  Options off = i8;
  off.pipeline = false;
  EXPECT_FALSE(piped("q8_0", 14336, 4096, 1, off));
}
