// Parity tests of the matvec int8-activation path (features.dot4) and of the
// plan's kernel variants: every int8 format x hook, the int8 layout variants
// and plan rules, constant lane steps, and the timing probes (which must cut
// their part and still run); the quad-lane x staging is in quad_stage_test.cpp. Bounds as in
// matvec_test.cpp: int8 1e-4 vs the twin (exact integer sums), 2e-3 with the
// RMSNorm prologue, 2e-2 vs float64 (x quantized to 8 bits).
#include <gtest/gtest.h>

#include <string>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/op.hpp"
#include "kernels/matvec/test_case.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;
namespace ts = blockq::testing_support;

namespace {

bool int8_ok() { return test_context().features().packed_dot4; }

// H200-like limits with the int8 dot product, for the plan's defaults.
Limits h200_like() {
  Limits lim;
  lim.invocations = 1024;
  lim.shared = 49152;
  lim.subgroup_min = lim.subgroup_max = 32;
  lim.dot4 = true;
  return lim;
}

WeightKind with(Format f) {
  WeightKind w;
  w.format = f;
  return w;
}

std::vector<int> int8_kinds() {
  std::vector<int> out;
  const auto kinds = all_kinds();
  for (size_t i = 0; i < kinds.size(); ++i)
    if (int8_supported(kinds[i].kind)) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace

// Every int8 format with the store and RMSNorm hooks, and q8_0 / q4_K with
// every other hook: ragged n, the smallest k and a tiled k, batch 1 and 5.
TEST(MatvecInt8, MatchesTwinAndFloat64) {
  if (!int8_ok()) GTEST_SKIP() << "no packed_4x8_integer_dot_product on this instance";
  const auto kinds = all_kinds();
  uint32_t seed = 3000;
  for (int i : int8_kinds()) {
    std::vector<std::string> hooks = {"store", "rmsnorm"};
    if (kinds[i].kind.format == Format::Q8_0 || kinds[i].kind.format == Format::Q4_K)
      hooks.insert(hooks.end(), {"acc", "silu", "bias", "rope_neox"});
    for (const auto& hn : hooks) {
      const Hooks h = hook(hn);
      const bool rope = h.epilogue == Epilogue::Rope;
      const double tol_twin = rope || h.prologue == Prologue::RmsNorm ? 2e-3 : 1e-4, tol_ref = 2e-2;
      for (uint32_t m : {1u, 5u}) {
        Case c{kinds[i], h, rope ? 24u : 37u, kinds[i].block, m, {}};
        c.opt.int8 = true;
        c.twin_ref_tol = tol_ref;
        auto e = run_case(c, seed++);
        EXPECT_LT(e.vs_twin, tol_twin) << kinds[i].name << " " << hn << " m=" << m;
        EXPECT_LT(e.vs_ref, tol_ref) << kinds[i].name << " " << hn << " m=" << m;
        Case t{kinds[i], h, rope ? 40u : 67u, std::max(kinds[i].block * 4, 512u), m, {}};
        t.opt.int8 = true;
        t.opt.max_tile = std::max(kinds[i].block, 128u);
        t.opt.subgroups = false;
        t.twin_ref_tol = tol_ref;
        e = run_case(t, seed++);
        EXPECT_LT(e.vs_twin, tol_twin) << kinds[i].name << " " << hn << " tiled m=" << m;
        EXPECT_LT(e.vs_ref, tol_ref) << kinds[i].name << " " << hn << " tiled m=" << m;
      }
    }
  }
}

// Lanes, unrolling, rows per lane group, token chunks and split-k under int8.
TEST(MatvecInt8, LayoutVariantsMatchTwin) {
  if (!int8_ok()) GTEST_SKIP() << "no packed_4x8_integer_dot_product on this instance";
  const auto kinds = all_kinds();
  uint32_t seed = 3500;
  for (int i : int8_kinds()) {
    const auto f = kinds[i].kind.format;
    if (f != Format::Q4_0 && f != Format::Q5_K && f != Format::Q6_K) continue;
    for (int v = 0; v < 3; ++v) {
      Case c{kinds[i], hook(v == 1 ? "silu" : "store"), 45, kinds[i].block * (kinds[i].block >= 256 ? 3 : 11), 8, {}};
      c.opt.int8 = true;
      c.opt.wg = 64;
      c.opt.tpr = 4;
      c.opt.unroll = v == 0 ? 2 : 1;
      c.opt.rpl = v == 1 ? 2 : 1;
      c.opt.tokens = v == 2 ? 8 : 3;
      if (v == 2) c.opt.splits = 2;
      c.opt.max_tile = kinds[i].block >= 256 ? 512 : 128;
      c.twin_ref_tol = 2e-2;
      auto e = run_case(c, seed++);
      EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " variant " << v;
      EXPECT_LT(e.vs_ref, 2e-2) << kinds[i].name << " variant " << v;
    }
  }
}

TEST(MatvecInt8, QuantizerRoundsEachBlockToItsScale) {
  auto x = ts::random_normal(32 * 40, 77, 0.f, 2.f);
  for (size_t i = 0; i < 32; ++i) x[32 * 3 + i] = 0.f;      // an all-zero block
  for (size_t i = 0; i < 32; ++i) x[32 * 5 + i] = 1e-32f;   // below kInt8Tiny
  x[32 * 7 + 9] = 1e30f;                                    // a huge element
  const QuantX q = quantize_x(x);
  for (size_t b = 0; b < 40; ++b) {
    float am = 0;
    for (size_t i = 0; i < 32; ++i) am = std::max(am, std::fabs(x[32 * b + i]));
    int32_t s0 = 0, s1 = 0, peak = 0;
    for (size_t i = 0; i < 32; ++i) {
      const int c = q.q[32 * b + i];
      ASSERT_LE(std::abs(c), 127);
      peak = std::max(peak, std::abs(c));
      (i < 16 ? s0 : s1) += c;
      if (am >= kInt8Tiny) {  // within half a step of the scale (plus rounding of the scale itself)
        EXPECT_LE(std::fabs(x[32 * b + i] - q.scale[b] * c), 0.5f * q.scale[b] * 1.001f) << b << " " << i;
      }
    }
    EXPECT_EQ(q.sum[2 * b], s0);
    EXPECT_EQ(q.sum[2 * b + 1], s1);
    EXPECT_FLOAT_EQ(q.scale[b], am * kInv127);
    EXPECT_EQ(peak, am >= kInt8Tiny ? 127 : 0) << "block " << b;
  }
}

TEST(MatvecInt8, PlanRefusesWhatItCannotRun) {
  Limits lim;
  lim.invocations = 256;
  lim.shared = 16384;
  lim.dot4 = true;
  Options o;
  o.int8 = true;
  WeightKind f16;
  f16.format = Format::F16;
  try {
    plan(lim, f16, 64, 256, 1, {}, o);
    ADD_FAILURE() << "f16 with int8 activations planned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("int8"), std::string::npos) << e.what();
  }
  WeightKind q4;
  q4.format = Format::Q4_0;
  const KernelSpec s8 = plan(lim, q4, 64, 4096, 1, {}, o);
  EXPECT_TRUE(s8.features.dot4);
  EXPECT_LE(shared_bytes(s8), lim.shared);
  EXPECT_GT(s8.tile, plan(lim, q4, 64, 4096, 1, {}, {}).tile);  // 1.375 bytes an element instead of 4.5
  lim.dot4 = false;
  EXPECT_THROW(plan(lim, q4, 64, 256, 1, {}, o), Error);
}

TEST(MatvecInt8, PlanLoadsTwoSixteenByteUnitsAStep) {
  // With int8 activations, formats whose 32-element units hold 16 bytes of
  // quants (Q4_0, Q4_1, Q5_0, Q5_1, 4-bit MatMulNBits) take two units a step;
  // Q8_0 (32 bytes) in its staged plan, the K-quants, the f32 path and the
  // many-rows (lm_head) plan keep one (except Q4_0's lm_head plan, which
  // takes two), and so does Q4_1 at batch 1 over rows of k >= 8192; an
  // explicit unroll wins. (The pre-quantized plan of Q8_0's
  // long rows takes two: xquant_test.cpp.)
  const Limits lim = h200_like();
  Options o;
  o.int8 = true;
  WeightKind onnx;
  onnx.onnx = true;
  onnx.bits = 4;
  onnx.block_size = 32;
  for (const WeightKind& w : {with(Format::Q4_0), with(Format::Q4_1), with(Format::Q5_0), with(Format::Q5_1), onnx}) {
    const bool q41 = !w.onnx && w.format == Format::Q4_1;
    EXPECT_EQ(plan(lim, w, 4096, 14336, 1, {}, o).unroll, q41 ? 1u : 2u) << w.name();
    EXPECT_EQ(plan(lim, w, 14336, 4096, 1, {}, o).unroll, 2u) << w.name();
    EXPECT_EQ(plan(lim, w, 4096, 14336, 8, {}, o).unroll, 2u) << w.name();
    EXPECT_EQ(plan(lim, w, 14336, 4096, 8, {}, o).unroll, 2u) << w.name();
    EXPECT_EQ(plan(lim, w, 4096, 14336, 1, {}, {}).unroll, 1u) << w.name() << " (f32 x)";
    const bool q40 = !w.onnx && w.format == Format::Q4_0;
    EXPECT_EQ(plan(lim, w, 128256, 2048, 1, {}, o).unroll, q40 ? 2u : 1u) << w.name() << " (many rows)";
  }
  for (Format f : {Format::Q4_K, Format::Q6_K})
    EXPECT_EQ(plan(lim, with(f), 4096, 14336, 1, {}, o).unroll, 1u) << with(f).name();
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 14336, 4096, 1, {}, o).unroll, 1u);
  o.unroll = 3;
  EXPECT_EQ(plan(lim, with(Format::Q4_0), 4096, 14336, 1, {}, o).unroll, 3u);
}

TEST(MatvecInt8, PlanSharesXReadsAmongRows) {
  // H200-like limits: the int8 defaults (generator.cpp) for the 8B shapes,
  // and the f32 batch plan where a small grid would idle the GPU.
  Limits lim = h200_like();
  Options o;
  o.int8 = true;
  WeightKind q4, q6;
  q4.format = Format::Q4_0;
  q6.format = Format::Q6_K;
  const KernelSpec a = plan(lim, q4, 14336, 4096, 1, {}, o);
  EXPECT_EQ(a.rpl, 2u);
  EXPECT_EQ(a.tpr, 16u);
  const KernelSpec b = plan(lim, q4, 4096, 14336, 1, {}, o);
  EXPECT_EQ(b.rpl, 1u);
  EXPECT_EQ(b.tpr, 32u);
  const KernelSpec c = plan(lim, q6, 4096, 14336, 1, {}, o);
  EXPECT_EQ(c.wg, 256u);
  EXPECT_EQ(c.tpr, 16u);
  EXPECT_EQ(c.rpl, 2u);
  WeightKind q3;  // Q3_K's units are Q6_K's size; over long rows it takes 32 lanes
  q3.format = Format::Q3_K;
  const KernelSpec c3 = plan(lim, q3, 4096, 14336, 1, {}, o);
  EXPECT_EQ(c3.wg, 512u);
  EXPECT_EQ(c3.tpr, 32u);
  EXPECT_EQ(c3.rpl, 2u);
  EXPECT_EQ(plan(lim, q3, 14336, 4096, 1, {}, o).tpr, 8u);
  EXPECT_EQ(plan(lim, q3, 4096, 4096, 1, {}, o).tpr, 16u);
  const KernelSpec d = plan(lim, q4, 14336, 4096, 8, {}, o);
  EXPECT_EQ(d.tpr, 8u);
  EXPECT_EQ(d.rpl, 4u);
  EXPECT_EQ(d.tokens, 4u);
  Hooks silu;  // two weights: half the rows a lane, the rest as Store's
  silu.epilogue = Epilogue::SiluGate;
  const KernelSpec ds = plan(lim, q4, 14336, 4096, 16, silu, o);
  EXPECT_EQ(ds.tpr, 8u);
  EXPECT_EQ(ds.rpl, 2u);
  EXPECT_EQ(ds.tokens, 4u);
  WeightKind q41;  // Q4_1's batches over rows this short keep the staged plan
  q41.format = Format::Q4_1;                // (longer rows read x pre-quantized: xquant_test.cpp)
  const KernelSpec e = plan(lim, q41, 14336, 4096, 8, {}, o);
  EXPECT_FALSE(x_prequantized(e));
  EXPECT_EQ(e.tpr, 8u);
  EXPECT_EQ(e.rpl, 4u);
  EXPECT_EQ(e.tokens, 4u);
  WeightKind q4k;
  q4k.format = Format::Q4_K;
  Options o1 = o, f1;  // unsplit (PlanSplitsLongRowsOfABatch covers the split plan)
  o1.splits = f1.splits = 1;
  const KernelSpec g = plan(lim, q4k, 4096, 14336, 8, {}, o1), g32 = plan(lim, q4k, 4096, 14336, 8, {}, f1);
  EXPECT_EQ(g.tpr, g32.tpr);  // long rows of 64-element units keep the f32 batch plan
  EXPECT_EQ(g.rpl, g32.rpl);
  EXPECT_EQ(g.tokens, g32.tokens);
  const KernelSpec h = plan(lim, q4k, 14336, 4096, 8, {}, o1);
  EXPECT_EQ(h.tpr, 4u);  // 64-element units, unsplit: 4 lanes, 2 rows
  EXPECT_EQ(h.rpl, 2u);
  EXPECT_EQ(h.wg / h.tpr * h.rpl, d.wg / d.tpr * d.rpl);
  const KernelSpec h6 = plan(lim, q6, 14336, 4096, 8, {}, o1);
  EXPECT_EQ(h6.tpr, 4u);
  EXPECT_EQ(h6.rpl, 2u);
  EXPECT_EQ(h6.wg, 512u);
  EXPECT_EQ(h6.tokens, 4u);
  const KernelSpec f = plan(lim, q4, 2560, 960, 8, {}, o);
  const KernelSpec f32 = plan(lim, q4, 2560, 960, 8, {}, {});
  EXPECT_EQ(f.rpl, f32.rpl);
  EXPECT_EQ(f.tpr, f32.tpr);
  EXPECT_EQ(f.tokens, f32.tokens);
  for (const KernelSpec* s : {&a, &b, &c, &c3, &d, &e, &f, &g, &h}) {
    EXPECT_TRUE(s->features.dot4) << s->key();
    EXPECT_LE(shared_bytes(*s), lim.shared) << s->key();
  }
}

TEST(Matvec, PlanSplitsLongRowsOfABatch) {
  // H200-like limits, batch 8 over k = 14336: every token in one workgroup and
  // k split so that each slice of x fits the tile (plan.cpp), for Q8_0, Q4_K,
  // Q5_K, Q6_K with int8 activations and for F16 with f32 x.
  Limits lim = h200_like();
  Options o;
  o.int8 = true;
  // Q8_0: 16 slices; the others 8. 2 rows a lane group, and lanes that
  // divide the slice's lane steps (28 units for Q8_0, Q4_K and Q5_K: 4
  // lanes; 28 steps of two units for Q5_0 and Q5_1: 4), Q6_K 2; 512
  // invocations, Q6_K 256. (Q5_0 and Q5_1 split only with the prologue: the
  // plan reads x pre-quantized otherwise, xquant_test.cpp.)
  for (Format f : {Format::Q8_0, Format::Q5_0, Format::Q5_1, Format::Q4_K, Format::Q5_K, Format::Q6_K}) {
    const bool q5 = f == Format::Q5_0 || f == Format::Q5_1;
    const KernelSpec s = plan(lim, with(f), 4096, 14336, 8, q5 ? hook("rmsnorm") : Hooks{}, o);
    EXPECT_EQ(s.splits, f == Format::Q8_0 ? 16u : 8u) << s.key();
    EXPECT_EQ(s.tokens, 8u) << s.key();
    EXPECT_EQ(s.tpr, f == Format::Q6_K ? 2u : 4u) << s.key();
    EXPECT_EQ(s.rpl, 2u) << s.key();
    EXPECT_EQ(s.wg, f == Format::Q6_K ? 256u : 512u) << s.key();
    EXPECT_EQ(14336u / unit_info(s.weight, s.k).unit / s.splits / s.unroll % s.tpr, 0u) << s.key();
    EXPECT_GE(s.tile, 14336u / s.splits) << s.key();  // one tile holds the slice
    EXPECT_LE(shared_bytes(s), lim.shared) << s.key();
  }
  // K-quants over rows of 4096: slices of 1024 elements, 2 lanes, 2 rows, 8
  // tokens, 512 invocations; not Q8_0, and not rows under 4096.
  for (Format f : {Format::Q4_K, Format::Q5_K, Format::Q6_K}) {
    const KernelSpec s = plan(lim, with(f), 14336, 4096, 8, {}, o);
    EXPECT_EQ(s.splits, 4u) << s.key();
    EXPECT_EQ(s.tokens, 8u) << s.key();
    EXPECT_EQ(s.tpr, 2u) << s.key();
    EXPECT_EQ(s.rpl, 2u) << s.key();
    EXPECT_EQ(s.wg, 512u) << s.key();
    EXPECT_LE(shared_bytes(s), lim.shared) << s.key();
    EXPECT_EQ(plan(lim, with(f), 14336, 2048, 8, {}, o).splits, 1u);
  }
  // The formats added later: IQ4_NL and IQ4_XS 8 slices of 4 lanes, Q2_K 8
  // of 4, Q3_K 16 of 2; over rows of 4096 the short-row split above, except
  // Q2_K.
  struct Later {
    Format f;
    uint32_t splits, tpr;
    bool short_split;
  };
  for (const Later& c : {Later{Format::IQ4_NL, 8, 4, true}, Later{Format::IQ4_XS, 8, 4, true},
                         Later{Format::Q2_K, 8, 4, false}, Later{Format::Q3_K, 16, 2, true}}) {
    const KernelSpec s = plan(lim, with(c.f), 4096, 14336, 8, {}, o);
    EXPECT_EQ(s.splits, c.splits) << s.key();
    EXPECT_EQ(s.tpr, c.tpr) << s.key();
    EXPECT_EQ(s.tokens, 8u) << s.key();
    EXPECT_EQ(s.rpl, 2u) << s.key();
    EXPECT_EQ(s.wg, 512u) << s.key();
    EXPECT_LE(shared_bytes(s), lim.shared) << s.key();
    const KernelSpec t = plan(lim, with(c.f), 14336, 4096, 8, {}, o);
    EXPECT_EQ(t.splits, c.short_split ? 4u : 1u) << t.key();
    if (c.short_split) {
      EXPECT_EQ(t.tpr, 2u) << t.key();
    }
    EXPECT_LE(shared_bytes(t), lim.shared) << t.key();
  }
  const KernelSpec h = plan(lim, with(Format::F16), 4096, 14336, 8, {}, {});
  EXPECT_EQ(h.splits, 4u);
  EXPECT_EQ(h.rpl, 2u);
  EXPECT_EQ(h.tokens, 8u);
  EXPECT_EQ(h.tpr, 8u);
  EXPECT_EQ(h.wg, 512u);
  // Subgroups of 4 (SwiftShader) allow at most 4 lanes a row: Q8_0 and Q4_K
  // take 4, Q6_K still 2.
  Limits sw = lim;
  sw.subgroup_min = sw.subgroup_max = 4;
  EXPECT_EQ(plan(sw, with(Format::Q8_0), 4096, 14336, 8, {}, o).tpr, 4u);
  EXPECT_EQ(plan(sw, with(Format::Q4_K), 4096, 14336, 8, {}, o).tpr, 4u);
  EXPECT_EQ(plan(sw, with(Format::Q6_K), 4096, 14336, 8, {}, o).tpr, 2u);
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 4096, 14336, 5, hook("silu"), o).splits, 16u);
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 4096, 14336, 5, hook("silu"), o).tokens, 5u);
  // Unsplit: Q4_0 and Q4_1, one token, rope, short rows, forced knobs, a small
  // grid, partials past the binding limit, the f32 path of an integer format.
  EXPECT_EQ(plan(lim, with(Format::Q4_0), 4096, 14336, 8, {}, o).splits, 1u);
  EXPECT_EQ(plan(lim, with(Format::Q4_1), 4096, 14336, 8, {}, o).splits, 1u);
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 4096, 14336, 1, {}, o).splits, 1u);
  Hooks rope = hook("rope");
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 4096, 14336, 8, rope, o).splits, 1u);
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 14336, 4096, 8, {}, o).splits, 1u);
  Options forced = o;
  forced.tpr = 8;
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 4096, 14336, 8, {}, forced).splits, 1u);
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 512, 14336, 8, {}, o).splits, 1u);
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 4096, 14336, 8, {}, {}).splits, 1u);
  lim.binding = 1u << 19;  // 16 slices x 8 tokens x 4096 rows x 4 bytes = 2 MiB
  EXPECT_EQ(plan(lim, with(Format::Q8_0), 4096, 14336, 8, {}, o).splits, 1u);
}

TEST(Matvec, BatchSplitShapesMatchTwin) {
  // The split batch plan's shapes (all tokens in one workgroup; 16 slices
  // for q8_0, and for q4_K as its plan took before session 19, 8 for q5_0, 4
  // for f16; 2 rows a lane group) at test
  // sizes, with int8 and f32 activations and the hooks split_sum runs:
  // against the twin and float64.
  auto kinds = all_kinds();
  uint32_t seed = 5100;
  for (int i : {7, 8, 5, 1})  // q8_0, q4_K, q5_0 (int8; q5_0 two units a step), f16 (f32 x)
    for (const char* hn : {"store", "acc", "silu"})
      for (uint32_t m : {5u, 8u}) {
        const bool f16 = i == 1, sixteen = i == 7 || i == 8;
        const uint32_t k = f16 ? 512 : kinds[i].block * (kinds[i].block >= 256 ? 8 : sixteen ? 32 : 16);
        Case c{kinds[i], hook(hn), 45, k, m, {}};
        c.opt.int8 = !f16;
        c.opt.splits = f16 ? 4 : sixteen ? 16 : 8;
        c.opt.tokens = 8;
        c.opt.rpl = 2;
        c.opt.tpr = 4;
        c.opt.wg = 64;
        if (!f16) c.twin_ref_tol = 2e-2;  // int8 quantization of x
        c.external_part = m == 8;
        const KernelSpec spec = plan(test_context(), c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
        EXPECT_EQ(spec.splits, *c.opt.splits) << spec.key();
        EXPECT_EQ(spec.tokens, m) << spec.key();
        auto e = run_case(c, seed++);
        EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " " << hn << " m=" << m;
        EXPECT_LT(e.vs_ref, f16 ? 5e-4 : 2e-2) << kinds[i].name << " " << hn << " m=" << m;
      }
  // A caller's scratch too small for the partials is refused, naming it.
  auto& ctx = test_context();
  OwnedWeight w = make_weight(kinds[1].kind, 45, 512, 1);
  fix(w);
  Weights g = upload(ctx, w.host, "small.w");
  const KernelSpec spec = plan(ctx, kinds[1].kind, 45, 512, 8, {}, Options{.splits = 4});
  auto xb = ctx.create_buffer(8 * 512 * 4, gpu::kStorage, "x");
  auto yb = ctx.create_buffer(8 * 45 * 4, gpu::kStorage, "y");
  auto small = ctx.create_buffer(256, gpu::kStorage, "small.partials");
  Args args{&g, nullptr, &xb, &yb};
  args.part = &small;
  try {
    prepare(ctx, spec, args);
    ADD_FAILURE() << "a 256-byte scratch was accepted for " << spec.key();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("small.partials"), std::string::npos) << e.what();
  }
}

TEST(Matvec, ConstantStepsMatchTwin) {
  // Options::const_steps: the lane loop as a constant number of steps (one
  // tile, no split). Units per row a multiple of TPR * UNROLL (the bound
  // checks dropped) and not (kept); f32 and int8 activations; two weights
  // and the prologue; ragged n.
  auto kinds = all_kinds();
  uint32_t seed = 4600;
  const bool dot4 = test_context().features().packed_dot4;
  struct V {
    int kind;
    uint32_t blocks, unroll;
    const char* hook;
    bool i8;
  };
  const V vs[] = {{7, 16, 2, "store", false}, {7, 11, 1, "silu", false}, {8, 3, 1, "rmsnorm", false},
                  {7, 16, 1, "silu", true},   {3, 13, 2, "store", true},  {8, 4, 1, "rmsnorm", true}};
  for (const V& v : vs) {
    if (v.i8 && !dot4) continue;
    const Kind& kd = kinds[v.kind];
    Case c{kd, hook(v.hook), 45, kd.block * v.blocks, 3, {}};
    c.opt.const_steps = true;
    c.opt.unroll = v.unroll;
    c.opt.int8 = v.i8;
    c.opt.wg = 64;
    c.opt.tpr = 4;
    if (v.i8) c.twin_ref_tol = 2e-2;
    const KernelSpec spec = plan(test_context(), kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
    EXPECT_EQ(spec.variant & ~(kQuadStage | kBiasedSum), kConstSteps) << spec.key();
    const UnitInfo ui = unit_info(kd.kind, c.k);
    const bool even = (ui.kp / ui.unit) % (4 * v.unroll) == 0;
    EXPECT_EQ(wgsl(spec).find("if (uu0 < u1)") == std::string::npos, even) << spec.key();
    auto e = run_case(c, seed++);
    const double tw = v.i8 && c.hooks.prologue == Prologue::RmsNorm ? 2e-3 : 1e-4;
    EXPECT_LT(e.vs_twin, tw) << spec.key();
    EXPECT_LT(e.vs_ref, v.i8 ? 2e-2 : 5e-4) << spec.key();
  }
  // On by default with int8 activations over 32-element units only; several
  // tiles or a split: the plain loop.
  Options d;
  EXPECT_EQ(plan(test_context(), kinds[7].kind, 45, 256, 1, {}, d).variant, 0u);
  d.int8 = true;
  if (dot4) {
    EXPECT_EQ(plan(test_context(), kinds[7].kind, 45, 256, 1, {}, d).variant & ~kQuadStage, kConstSteps);
    EXPECT_EQ(plan(test_context(), kinds[8].kind, 45, 256, 1, {}, d).variant & ~kQuadStage,
              0u);  // q4_K: 64-element units
  }
  Options o;
  o.const_steps = true;
  o.max_tile = 64;
  EXPECT_EQ(plan(test_context(), kinds[7].kind, 45, 256, 1, {}, o).variant, 0u);
  o.max_tile.reset();
  o.splits = 2;
  EXPECT_EQ(plan(test_context(), kinds[7].kind, 45, 256, 1, {}, o).variant, 0u);
}

TEST(Matvec, TimingProbesCutTheirPartAndRun) {
  // Options::probe (bench only): the kernel with its x staging (1), its lane
  // loop (2) or both (3) cut out, or the loop reduced to the weight loads
  // with (4) or without (7) the staging.
  // Each keeps the plain kernel's bindings, builds and runs; its output is
  // not checked (it is meaningless by design).
  auto& ctx = test_context();
  auto kinds = all_kinds();
  for (int i : {7, 8})  // q8_0, q4_K
    for (bool i8 : {false, true}) {
      if (i8 && !ctx.features().packed_dot4) continue;
      OwnedWeight w = make_weight(kinds[i].kind, 45, kinds[i].block * 2, 4200 + i);
      fix(w);
      Weights gw = upload(ctx, w.host, "probe.w");
      auto xb = ctx.storage<float>(ts::random_normal(size_t{2} * kinds[i].block * 2, 4300, 0.f, 1.f), "x");
      auto yb = ctx.create_buffer(2 * 45 * 4, gpu::kStorage, "y");
      for (uint32_t p : {1u, 2u, 3u, 4u, 7u}) {
        Options o;
        o.int8 = i8;
        o.probe = p;
        const KernelSpec spec = plan(ctx, kinds[i].kind, 45, kinds[i].block * 2, 2, {}, o);
        EXPECT_EQ(probe_of(spec), static_cast<Probe>(p)) << spec.key();
        const std::string src = wgsl(spec);
        const bool staged = p == 2 || p == 4;  // 7: the loads of 4 without the staging
        const bool decoded = p == 1;
        // The staging's store of each block's scale (int8) or of each vec4 (f32).
        EXPECT_EQ(src.find(i8 ? "xblk[i][2u]" : "[j % (UNIT / 4u)] = v[q]") != std::string::npos, staged) << spec.key();
        EXPECT_EQ(src.find(i8 ? "dot4I8Packed(w" : "dot(w") != std::string::npos, decoded) << spec.key();
        Prepared pr = prepare(ctx, spec, {&gw, nullptr, &xb, &yb});
        gpu::Recorder rec(ctx);
        pr.record(rec);
        EXPECT_NO_THROW(rec.submit()) << spec.key();
        EXPECT_NO_THROW(ctx.download<float>(yb, 0, 2 * 45)) << spec.key();
      }
    }
  // 5: x from global memory (int8 only); 6: the loads in step order (whole
  // steps and workgroups of rows only).
  for (int i : {7, 8}) {
    const uint32_t k = kinds[i].block >= 256 ? 1024 : 256;
    OwnedWeight w = make_weight(kinds[i].kind, 64, k, 4400 + i);
    fix(w);
    Weights gw = upload(ctx, w.host, "probe.w");
    auto xb = ctx.storage<float>(ts::random_normal(k, 4500, 0.f, 1.f), "x");
    auto yb = ctx.create_buffer(64 * 4, gpu::kStorage, "y");
    for (uint32_t p : {5u, 6u}) {
      Options o;
      o.probe = p;
      o.wg = 64;
      o.tpr = 4;
      o.int8 = p == 5;
      if (p == 5 && !ctx.features().packed_dot4) continue;
      const KernelSpec spec = plan(ctx, kinds[i].kind, 64, k, 1, {}, o);
      const std::string src = wgsl(spec);
      if (p == 5) {
        EXPECT_EQ(src.find("xblk[i][2u]"), std::string::npos) << spec.key();  // no staging
        EXPECT_NE(src.find("xblkg("), std::string::npos) << spec.key();
      } else {
        EXPECT_NE(src.find("(uu0 / TPR) * (RPW * TPR)"), std::string::npos) << spec.key();
      }
      Prepared pr = prepare(ctx, spec, {&gw, nullptr, &xb, &yb});
      gpu::Recorder rec(ctx);
      pr.record(rec);
      EXPECT_NO_THROW(rec.submit()) << spec.key();
      EXPECT_NO_THROW(ctx.download<float>(yb, 0, 64)) << spec.key();
    }
  }
  Options o;
  o.probe = 8;
  EXPECT_THROW(plan(ctx, kinds[7].kind, 45, 64, 1, {}, o), Error);
  o.probe = 5;  // int8 only
  EXPECT_THROW(plan(ctx, kinds[7].kind, 45, 64, 1, {}, o), Error);
  o.probe = 6;  // 45 rows are not whole workgroups
  o.wg = 64;
  o.tpr = 4;
  EXPECT_THROW(plan(ctx, kinds[7].kind, 45, 256, 1, {}, o), Error);
}
