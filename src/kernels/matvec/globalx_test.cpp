// Parity tests of x read from global memory in the lane loop
// (Options::global_x, variant kGlobalX): no staging, one tile a slice. The
// sums and their order are the staged kernel's over the same tile, so both
// match the twin and, where the staged kernel also took one tile, give the
// same y.
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

const Kind& find_kind(const std::vector<Kind>& kinds, const std::string& name) {
  for (const auto& k : kinds)
    if (k.name == name) return k;
  throw Error("no test kind " + name);
}

}  // namespace

TEST(Matvec, GlobalXMatchesTwinAndStagedKernel) {
  // Ragged n (45 rows; 48 for the rope's whole heads), 3 tokens in chunks of
  // 2, every hook, 8-element float units (k = 4096) and 32-element ones, 2
  // units a step, 2 rows a lane group, split-k, ONNX blocks, and one lane
  // group a workgroup with the tree reduction.
  auto& ctx = test_context();
  const auto kinds = all_kinds();
  struct V {
    const char* kind;
    uint32_t k;
    const char* hook;
    uint32_t wg, tpr, unroll, rpl, splits;
    bool sg;
  };
  const V vs[] = {
      {"f16", 64, "store", 64, 4, 1, 1, 1, true},       {"f16", 4096, "rmsnorm", 64, 8, 4, 1, 1, true},
      {"f16", 256, "acc", 32, 32, 1, 1, 1, false},      {"bf16", 96, "silu", 64, 4, 1, 2, 1, true},
      {"f32", 128, "rope", 64, 4, 2, 1, 1, true},       {"f32", 4096, "bias", 32, 32, 4, 1, 1, false},
      {"q8_0", 416, "acc", 64, 4, 2, 2, 1, true},       {"q4_0", 768, "store", 64, 4, 1, 1, 3, true},
      {"q5_0", 256, "rmsnorm", 64, 4, 1, 2, 1, true},   {"q8_0", 256, "silu", 64, 4, 1, 1, 1, true},
      {"onnx4b32", 96, "store", 64, 4, 1, 1, 1, true},  {"onnx8b32zp", 160, "bias", 64, 4, 1, 2, 1, true},
      {"f16", 4096, "rope_neox", 64, 8, 4, 2, 1, true},
      // One lane group a workgroup with subgroups (the workgroup is one
      // subgroup, lanes from sg_id): 4 x 4 where subgroups hold 4 lanes
      // (SwiftShader), 32 x 32 where they hold 32 (the H200's default plan).
      {"f16", 4096, "store", 4, 4, 4, 1, 1, true},       {"f16", 4096, "acc", 32, 32, 4, 1, 1, true},
  };
  uint32_t seed = 9300;
  int one_subgroup = 0;  // kernels whose workgroup is one subgroup
  for (const V& v : vs) {
    const Kind& kd = find_kind(kinds, v.kind);
    ASSERT_TRUE(global_x_supported(kd.kind, v.k, false)) << kd.name;
    const std::string h = v.hook;
    const uint32_t n = h.rfind("rope", 0) == 0 ? 48 : 45;
    std::vector<float> ys[2];
    uint32_t tiles[2] = {0, 0};
    for (bool gx : {true, false}) {
      Case c{kd, hook(v.hook), n, v.k, 3, {}};
      c.opt.global_x = gx;
      c.opt.subgroups = v.sg;
      c.opt.wg = v.wg;
      c.opt.tpr = v.tpr;
      c.opt.tokens = 2;
      c.opt.unroll = v.unroll;
      c.opt.rpl = v.rpl;
      if (v.splits > 1) c.opt.splits = v.splits;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      EXPECT_EQ((spec.variant & kGlobalX) != 0, gx) << spec.key();
      const std::string src = wgsl(spec);
      EXPECT_EQ(src.find("var<workgroup> xs") == std::string::npos, gx) << spec.key();
      EXPECT_EQ(src.find("xg_at(0u, z * TOKENS + 0u, uu0 * UNIT") != std::string::npos, gx) << spec.key();
      tiles[gx] = spec.tile;
      if (spec.features.subgroups && spec.wg == spec.tpr) {
        EXPECT_NE(src.find("let ln = sg_id;"), std::string::npos) << spec.key();
        ++one_subgroup;
      }
      auto e = run_case(c, seed, &ys[gx]);
      const bool rope = c.hooks.epilogue == Epilogue::Rope;  // the GPU's cos/sin
      EXPECT_LT(e.vs_twin, rope ? 2e-3 : 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, rope ? 2e-3 : 5e-4) << spec.key();
    }
    ++seed;
    if (tiles[0] == tiles[1]) {
      EXPECT_EQ(ys[0], ys[1]) << kd.name << " " << v.hook << ": global and staged x differ";
    }
  }
  if (ctx.features().subgroups) {
    EXPECT_GT(one_subgroup, 0) << "no case ran a workgroup of one subgroup";
  }
  // Refused with f32 activations for formats with a min or units over 32
  // elements, and with a probe. (With int8 activations x is pre-quantized:
  // xquant_test.cpp.)
  Options o;
  o.global_x = true;
  EXPECT_THROW(plan(ctx, find_kind(kinds, "q4_1").kind, 45, 256, 1, {}, o), Error);
  EXPECT_THROW(plan(ctx, find_kind(kinds, "q4_K").kind, 45, 256, 1, {}, o), Error);
  EXPECT_THROW(plan(ctx, find_kind(kinds, "q6_K").kind, 45, 256, 1, {}, o), Error);
  o.probe = 7;
  EXPECT_THROW(plan(ctx, find_kind(kinds, "f16").kind, 45, 256, 1, {}, o), Error);
}

TEST(Matvec, PlanReadsXFromGlobalWhereItGained) {
  // H200-like limits: on for the float formats' 8-element units (k >= 4096)
  // at batch 1 without the RMSNorm prologue, as one 32-lane group a
  // workgroup with a constant step count; off for batches, the prologue,
  // 32-element units, the integer formats with f32 x, and when asked.
  const Limits lim = h200_limits();
  const auto kinds = all_kinds();
  auto spec = [&](const char* name, uint32_t n, uint32_t k, uint32_t m, const Hooks& h = {}, const Options& o = {}) {
    return plan(lim, find_kind(kinds, name).kind, n, k, m, h, o);
  };
  auto gx = [](const KernelSpec& s) { return (s.variant & kGlobalX) != 0; };
  for (const char* f : {"f16", "bf16", "f32"})
    for (auto [n, k] : {std::pair<uint32_t, uint32_t>{4096, 14336}, {14336, 4096}}) {
      const KernelSpec s = spec(f, n, k, 1);
      EXPECT_TRUE(gx(s)) << s.key();
      EXPECT_EQ(s.wg, 32u) << s.key();
      EXPECT_EQ(s.tpr, 32u) << s.key();
      EXPECT_EQ(s.tile, k) << s.key();
      EXPECT_TRUE(s.variant & kConstSteps) << s.key();
      EXPECT_FALSE(gx(spec(f, n, k, 8))) << f;
      EXPECT_FALSE(gx(spec(f, n, k, 1, hook("rmsnorm")))) << f;
    }
  EXPECT_TRUE(gx(spec("f16", 4096, 14336, 1, hook("silu"))));
  EXPECT_FALSE(gx(spec("f16", 2560, 960, 1)));     // 32-element units
  EXPECT_FALSE(gx(spec("q8_0", 4096, 14336, 1)));
  Options i8;  // int8 x: pre-quantized for Q8_0 (xquant_test.cpp), staged for Q4_0
  i8.int8 = true;
  EXPECT_TRUE(gx(spec("q8_0", 4096, 14336, 1, {}, i8)));
  EXPECT_FALSE(gx(spec("q4_0", 4096, 14336, 1, {}, i8)));
  Options off;
  off.global_x = false;
  EXPECT_FALSE(gx(spec("f16", 4096, 14336, 1, {}, off)));
  // The x reads of the default plan are unguarded (every one is in range);
  // a k that leaves padding past K guards them.
  EXPECT_NE(wgsl(spec("f16", 4096, 14336, 1)).find("var v = x4[(tg * K + e) / 4u];"), std::string::npos);
  EXPECT_NE(wgsl(spec("f16", 4096, 4100, 1)).find("let ok = tg < M && e < K;"), std::string::npos);
}
