// A few tokens (batches of 2 to 4): the plan gives them batch 1's lane
// shapes with every token in each workgroup (plan.cpp), and those default
// plans match the twin on the test adapter at shapes where the rules apply.
#include <gtest/gtest.h>

#include <string>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/test_case.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;

namespace {

KernelSpec spec(const char* name, uint32_t n, uint32_t k, uint32_t m, const Hooks& h = {}) {
  Options o;
  o.int8 = true;
  return plan(h200_limits(), kind_named(name).kind, n, k, m, h, o);
}

}  // namespace

TEST(MatvecFewTokens, PlanTakesBatchOneShapes) {
  // H200-like limits (1024 invocations, subgroups of 32, packed dot products).
  // Pairs over long rows: staged x in 1024 invocations of 32 lanes, one row
  // a lane group, 2 units a step (Q8_0: its pre-quantized batch-1 plan).
  for (const char* f : {"q4_0", "q4_1", "q5_0", "q5_1"}) {
    const KernelSpec p = spec(f, 4096, 14336, 2);
    EXPECT_FALSE(x_prequantized(p)) << p.key();
    EXPECT_EQ(p.wg, 1024u) << p.key();
    EXPECT_EQ(p.tpr, 32u) << p.key();
    EXPECT_EQ(p.rpl, 1u) << p.key();
    EXPECT_EQ(p.tokens, 2u) << p.key();
    EXPECT_EQ(p.unroll, 2u) << p.key();
    EXPECT_EQ(p.splits, 1u) << p.key();
    EXPECT_EQ(p.tile, 14336u) << p.key();
    EXPECT_TRUE(p.variant & kConstSteps) << p.key();
    const KernelSpec r = spec(f, 4096, 14336, 2, hook("rmsnorm"));  // not with the prologue
    EXPECT_FALSE(r.wg == 1024 && r.rpl == 1 && r.tokens == 2) << r.key();
    EXPECT_TRUE(x_prequantized(spec(f, 4096, 14336, 3))) << f;  // batches of 3: the batch plan
  }
  const KernelSpec pq = spec("q8_0", 4096, 14336, 2);
  EXPECT_TRUE(x_prequantized(pq)) << pq.key();
  EXPECT_EQ(pq.wg, 32u) << pq.key();
  EXPECT_EQ(pq.rpl, 1u) << pq.key();
  EXPECT_EQ(pq.tokens, 2u) << pq.key();
  EXPECT_EQ(pq.splits, 1u) << pq.key();
  // Rows of k = 4096 with n >= 12288: 16 lanes and 2 rows a lane group, all
  // the tokens a workgroup, not split; invocations and units a step as
  // measured ({format, batch, wg, unroll}).
  struct Want {
    const char* name;
    uint32_t m, wg, unroll;
  };
  for (const Want& w : {Want{"q4_0", 2, 512, 1}, {"q4_1", 2, 512, 2}, {"q5_0", 2, 1024, 2}, {"q5_1", 2, 512, 1},
                        {"q8_0", 2, 512, 1},     {"q4_K", 2, 512, 1}, {"q5_K", 2, 1024, 1}, {"q4_0", 3, 1024, 2},
                        {"q4_1", 3, 1024, 2},    {"q5_0", 3, 1024, 1}, {"q5_1", 3, 1024, 1}, {"q8_0", 3, 1024, 1},
                        {"q4_0", 4, 1024, 1},    {"q4_1", 4, 1024, 1}, {"q5_0", 4, 1024, 1}, {"q5_1", 4, 1024, 1},
                        {"q8_0", 4, 1024, 1}}) {
    const KernelSpec p = spec(w.name, 14336, 4096, w.m);
    EXPECT_FALSE(x_prequantized(p)) << p.key();
    EXPECT_EQ(p.wg, w.wg) << p.key();
    EXPECT_EQ(p.tpr, 16u) << p.key();
    EXPECT_EQ(p.rpl, 2u) << p.key();
    EXPECT_EQ(p.tokens, w.m) << p.key();
    EXPECT_EQ(p.splits, 1u) << p.key();
    EXPECT_EQ(p.unroll, w.unroll) << p.key();
    EXPECT_EQ(p.tile, 4096u) << p.key();
  }
  // Not: the K-quants at batches of 3 and 4 and over long rows, Q6_K (their
  // split batch plans), 8 tokens.
  for (const char* f : {"q4_K", "q5_K"}) {
    for (uint32_t m : {3u, 4u}) EXPECT_GT(spec(f, 14336, 4096, m).splits, 1u) << f << " " << m;
    EXPECT_GT(spec(f, 4096, 14336, 2).splits, 1u) << f;
  }
  EXPECT_GT(spec("q6_K", 14336, 4096, 2).splits, 1u);
  EXPECT_NE(spec("q4_0", 14336, 4096, 8).tpr, 16u);
  // Forced unroll wins over the table.
  Options o;
  o.int8 = true;
  o.unroll = 2;
  EXPECT_EQ(plan(h200_limits(), kind_named("q5_1").kind, 14336, 4096, 2, {}, o).unroll, 2u);
}

TEST(MatvecFewTokens, DefaultPlansMatchTwin) {
  // The default plans of a few tokens on this adapter, one per rule: pairs
  // of Q4_0 over long rows (staged x, one row a lane group) and of Q8_0 over
  // rows of 8192 (x pre-quantized); Q5_0 pairs and Q5_1 batches of 3 over
  // rows of 4096 with n = 12288 (2 rows a lane group). Random data, poisoned
  // y, the twin and float64.
  auto& ctx = testing_support::test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  struct Shape {
    const char* name;
    uint32_t n, k, m, rpl;
    bool prequantized;
  };
  uint32_t seed = 9900;
  for (const Shape& sh : {Shape{"q4_0", 4096, 12288, 2, 1, false}, Shape{"q8_0", 4096, 8192, 2, 1, true},
                          Shape{"q5_0", 12288, 4096, 2, 2, false}, Shape{"q5_1", 12288, 4096, 3, 2, false}}) {
    Case c{kind_named(sh.name), hook("acc"), sh.n, sh.k, sh.m, {}};
    c.twin_ref_tol = 2e-2;  // the int8 quantization of x
    c.opt.int8 = true;
    const KernelSpec s = plan(ctx, c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
    ASSERT_EQ(s.tokens, sh.m) << s.key();
    ASSERT_EQ(s.rpl, sh.rpl) << s.key();
    ASSERT_EQ(s.splits, 1u) << s.key();
    ASSERT_EQ(x_prequantized(s), sh.prequantized) << s.key();
    const Errors e = run_case(c, seed++);
    EXPECT_LT(e.vs_twin, 1e-4) << s.key();
    EXPECT_LT(e.vs_ref, 2e-2) << s.key();
  }
}
