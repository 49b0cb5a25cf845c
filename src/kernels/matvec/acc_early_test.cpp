// Parity tests of the Acc epilogue's early y read (Options::acc_early,
// variant kAccEarly): lane 0 of each lane group reads its rows' old y before
// the lane loop, and adds the row sum to it at the end; the same y bit for
// bit as the read after the row sums, and the twin's. And the plan's
// defaults for it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/test_case.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;

TEST(Matvec, AccEarlyReadMatchesTwinAndLateRead) {
  // Ragged n (45 rows), y [m, 45] random before the call, W [45, k]. Cases:
  // int8 x over Q4_0 (quad staging) and Q4_K with 2 rows a lane group; f32 x
  // over Q8_0 and F16; 3 tokens one a workgroup (grid z = 3); and rows split
  // into chunks (each dispatch's rows from params.row0).
  auto& ctx = test_context();
  if (!ctx.features().subgroups) GTEST_SKIP() << "the direct row store needs subgroups";
  struct V {
    const char* kind;
    uint32_t blocks, m, rpl;
    bool int8;
    uint64_t chunk;  // max_chunk_bytes (0: one chunk)
  };
  const V vs[] = {{"q4_0", 8, 1, 1, true, 0}, {"q4_K", 2, 3, 2, true, 0}, {"q8_0", 4, 1, 2, false, 0},
                  {"f16", 16, 2, 1, false, 0}, {"q4_0", 8, 1, 1, true, 4096}};
  uint32_t seed = 9700;
  for (const V& v : vs) {
    const Kind& kd = kind_named(v.kind);
    if (v.int8 && !ctx.features().packed_dot4) continue;
    std::vector<float> ys[2];
    for (bool early : {true, false}) {
      Case c{kd, hook("acc"), 45, kd.block * v.blocks, v.m, {}};
      c.max_chunk_bytes = v.chunk;
      c.opt.int8 = v.int8;
      if (v.int8) c.twin_ref_tol = 2e-2;  // the int8 quantization of x
      c.opt.subgroups = true;
      c.opt.tokens = 1;
      c.opt.rpl = v.rpl;
      c.opt.acc_early = early;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      EXPECT_EQ((spec.variant & kAccEarly) != 0, early) << spec.key();
      EXPECT_EQ(wgsl(spec).find("yo0_0 = y[") != std::string::npos, early) << spec.key();
      auto e = run_case(c, seed, &ys[early]);
      EXPECT_LT(e.vs_twin, 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, v.int8 ? 2e-2 : 5e-4) << spec.key();
    }
    EXPECT_EQ(ys[0], ys[1]) << v.kind << ": early and late y reads differ";
    ++seed;
  }
}

TEST(Matvec, PlanReadsAccYEarlyWhereItApplies) {
  // H200 limits: on for the Acc epilogue of one token a workgroup with the
  // direct row store in workgroups of up to 512 invocations; off in the
  // 1024-invocation plans, for Store, for batches of several tokens a
  // workgroup, for split-k and without subgroups; refused where asked for
  // there.
  const Limits lim = h200_limits();
  auto early = [&](const char* f, uint32_t n, uint32_t k, uint32_t m, const char* h, Options o = {}) {
    if (!o.int8) o.int8 = true;
    return (plan(lim, kind_named(f).kind, n, k, m, hook(h), o).variant & kAccEarly) != 0;
  };
  EXPECT_TRUE(early("q4_0", 2048, 2048, 1, "acc"));
  EXPECT_TRUE(early("q4_K", 2048, 8192, 1, "acc"));
  EXPECT_TRUE(early("q8_0", 4096, 14336, 1, "acc"));
  EXPECT_FALSE(early("q4_0", 4096, 14336, 1, "acc"));  // 1024 invocations
  EXPECT_FALSE(early("q8_0", 4096, 4096, 1, "acc"));
  EXPECT_FALSE(early("q4_0", 2048, 2048, 1, "store"));
  EXPECT_FALSE(early("q4_0", 4096, 14336, 8, "acc"));
  Options split;
  split.splits = 4;
  split.tokens = 1;
  EXPECT_FALSE(early("q4_0", 2048, 8192, 2, "acc", split));
  Options nosg;
  nosg.subgroups = false;
  EXPECT_FALSE(early("q4_0", 2048, 2048, 1, "acc", nosg));
  Options off;
  off.acc_early = false;
  EXPECT_FALSE(early("q4_0", 2048, 2048, 1, "acc", off));
  Options on;
  on.acc_early = true;
  const Kind& q40 = kind_named("q4_0");
  EXPECT_THROW(plan(lim, q40.kind, 2048, 2048, 1, hook("store"), on), Error);
  Options on_batch = on;
  on_batch.int8 = true;
  EXPECT_THROW(plan(lim, q40.kind, 4096, 14336, 8, hook("acc"), on_batch), Error);
  Options on_nosg = on;
  on_nosg.subgroups = false;
  EXPECT_THROW(plan(lim, q40.kind, 2048, 2048, 1, hook("acc"), on_nosg), Error);
}
