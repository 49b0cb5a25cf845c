// Matvec parity tests: every format x hook x {ragged n, k at the smallest
// block multiple and a tiled k, batch 1 and 5}, on the test adapter (run by
// CTest as is and under the low-end profile), on random data with poisoned
// outputs. Each case reports its max relative error against float64 and
// against the CPU twin. Bounds: 1e-4 vs the twin and 5e-4 vs float64 for the
// plain paths (f32 accumulation over k <= 2048, GPU FMA contraction);
// RoPE 2e-3 (GPU pow/sin/cos). The int8-activation path (features.dot4):
// 1e-4 vs the twin (its integer sums are exact) and 2e-2 vs float64 (the
// quantization of x to 8 bits); with the RMSNorm prologue 2e-3 vs the twin,
// since the GPU's 1 / sqrt may differ from the CPU's in the last bit and so
// move one x code by one. The int8 path and the plan's variants (constant
// steps, quad staging, timing probes) are tested in variants_test.cpp.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "kernels/matvec/op.hpp"
#include "kernels/matvec/raw.hpp"
#include "kernels/matvec/test_case.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "kernels/matvec/twin.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;
namespace ts = blockq::testing_support;

namespace {

class MatvecParity : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(MatvecParity, MatchesTwinAndFloat64) {
  const auto kinds = all_kinds();
  const Kind& kind = kinds[std::get<0>(GetParam())];
  const std::string hname = std::get<1>(GetParam());
  const Hooks h = hook(hname);
  const bool rope = h.epilogue == Epilogue::Rope;
  const double tol_twin = rope ? 2e-3 : 1e-4, tol_ref = rope ? 2e-3 : 5e-4;
  uint32_t seed = 100;
  for (uint32_t m : {1u, 5u}) {
    // Ragged n; k at the smallest block multiple.
    Case c{kind, h, rope ? 24u : 37u, kind.block, m, {}};
    auto e = run_case(c, seed++);
    EXPECT_LT(e.vs_twin, tol_twin) << kind.name << " " << hname << " m=" << m;
    EXPECT_LT(e.vs_ref, tol_ref) << kind.name << " " << hname << " m=" << m;
    // A longer k staged in several tiles, with the portable reduction.
    Case t{kind, h, rope ? 40u : 67u, std::max(kind.block * 4, 512u), m, {}};
    t.opt.max_tile = std::max(kind.block, 128u);
    t.opt.subgroups = false;
    e = run_case(t, seed++);
    EXPECT_LT(e.vs_twin, tol_twin) << kind.name << " " << hname << " tiled m=" << m;
    EXPECT_LT(e.vs_ref, tol_ref) << kind.name << " " << hname << " tiled m=" << m;
  }
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<int, std::string>>& info) {
  std::string s = all_kinds()[std::get<0>(info.param)].name + "_" + std::get<1>(info.param);
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllFormatsAllHooks, MatvecParity,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(all_kinds().size())),
                                            ::testing::Values("store", "acc", "silu", "rmsnorm", "bias",
                                                              "rope", "rope_neox")),
                         param_name);

TEST(Matvec, SubgroupAndPortablePathsAgree) {
  auto& ctx = test_context();
  if (!ctx.features().subgroups) GTEST_SKIP() << "no subgroups on this device";
  auto kinds = all_kinds();
  for (int i : {7, 8, 10}) {  // q8_0, q4_K, q6_K
    for (bool sg : {false, true}) {
      Case c{kinds[i], {}, 70, 1024, 3, {}};
      c.opt.subgroups = sg;
      auto e = run_case(c, 900 + i);
      EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " subgroups=" << sg;
    }
  }
}

TEST(Matvec, LaneAndUnrollVariantsCoverEveryUnit) {
  // Units per row not a multiple of TPR * UNROLL, several tiles, both reductions.
  auto kinds = all_kinds();
  for (int i : {7, 8, 11}) {  // q8_0, q4_K, onnx4b32
    const uint32_t k = kinds[i].block * (kinds[i].block >= 256 ? 5 : 11);
    for (uint32_t tpr : {4u})
      for (uint32_t unroll : {2u, 3u}) {
        Case c{kinds[i], {}, 45, k, 2, {}};
        c.opt.tpr = tpr;
        c.opt.unroll = unroll;
        c.opt.wg = 64;
        c.opt.max_tile = kinds[i].block >= 256 ? 512 : 128;
        c.opt.subgroups = unroll != 3;
        auto e = run_case(c, 700 + i * 10 + unroll);
        EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " tpr=" << tpr << " unroll=" << unroll;
      }
  }
}

TEST(Matvec, FloatRowsOf4096TakeEightElementUnits) {
  // F32, F16 and BF16 rows of k >= 4096 are read as 8-element units, 4 a lane
  // step (layout.cpp, plan.cpp): k = 4104 pads the row to whole units of 8 and
  // leaves a partial last step; several tiles, both reductions, the prologue
  // and two weights.
  auto kinds = all_kinds();
  uint32_t seed = 7300;
  for (int i : {0, 1, 2})  // f32, f16, bf16
    for (const char* hn : {"store", "rmsnorm", "silu"})
      for (uint32_t k : {4096u, 4104u}) {
        Case c{kinds[i], hook(hn), 37, k, k == 4096 ? 1u : 5u, {}};
        c.opt.subgroups = k == 4096;
        c.opt.max_tile = 1024;
        const UnitInfo ui = unit_info(c.kind.kind, k);
        EXPECT_EQ(ui.unit, 8u);
        EXPECT_EQ(ui.kp, (k + 7) / 8 * 8);
        EXPECT_EQ(unit_info(c.kind.kind, 4064).unit, 32u);  // shorter rows keep 32
        const KernelSpec spec = plan(test_context(), c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
        EXPECT_EQ(spec.unroll, 4u) << spec.key();
        auto e = run_case(c, seed++);
        EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " " << hn << " k=" << k;
        EXPECT_LT(e.vs_ref, 5e-4) << kinds[i].name << " " << hn << " k=" << k;
      }
}

TEST(Matvec, SeveralRowsPerLaneGroup) {
  // Each lane group owns rpl rows (ragged n, so some lanes read stand-in rows),
  // with two weights (SiLU-gate), RoPE pairs, the prologue and both reductions.
  auto kinds = all_kinds();
  uint32_t seed = 1500;
  for (uint32_t rpl : {2u, 3u, 4u})
    for (const char* hn : {"silu", "rope_neox", "rmsnorm"}) {
      for (int i : {4, 8}) {  // q4_1 (a min), q4_K
        const Hooks h = hook(hn);
        const bool rope = h.epilogue == Epilogue::Rope;
        if (rope && rpl == 3) continue;  // RoPE pairs need an even row count per workgroup
        Case c{kinds[i], h, rope ? 48u : 53u, kinds[i].block * 2, 3, {}};
        c.opt.rpl = rpl;
        c.opt.wg = 64;
        c.opt.tpr = 4;
        c.opt.subgroups = rpl != 3;
        auto e = run_case(c, seed++);
        EXPECT_LT(e.vs_twin, rope ? 2e-3 : 1e-4) << kinds[i].name << " " << hn << " rpl=" << rpl;
      }
    }
}

TEST(Matvec, SplitKSlicesAddUpInOrder) {
  // Split-k: slices of k summed by their own workgroups into partials, then
  // added in order by split_sum with the epilogue (and bias) applied there.
  // Slices of unequal length (units not a multiple of the split count),
  // several tiles per slice, two weights (SiLU-gate), a min (q4_1), K-quant
  // and ONNX units, the prologue, ragged n, batch 1 and 5, both reductions.
  auto kinds = all_kinds();
  uint32_t seed = 2100;
  for (uint32_t splits : {2u, 3u})
    for (const char* hn : {"store", "acc", "silu", "bias", "rmsnorm"})
      for (int i : {4, 7, 8, 11}) {  // q4_1, q8_0, q4_K, onnx4b32
        const uint32_t k = kinds[i].block * (kinds[i].block >= 256 ? 5 : 13);
        for (uint32_t m : {1u, 5u}) {
          Case c{kinds[i], hook(hn), 45, k, m, {}};
          c.opt.splits = splits;
          c.opt.wg = 64;
          c.opt.tpr = 4;
          c.opt.max_tile = kinds[i].block >= 256 ? 256 : 64;
          c.opt.subgroups = splits == 2;
          const KernelSpec spec = plan(test_context(), c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
          EXPECT_EQ(spec.splits, splits) << spec.key();
          auto e = run_case(c, seed++);
          EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " " << hn << " splits=" << splits << " m=" << m;
          EXPECT_LT(e.vs_ref, 5e-4) << kinds[i].name << " " << hn << " splits=" << splits << " m=" << m;
        }
      }
  // Rope needs both rows of a pair in one workgroup's sums: refused clearly.
  try {
    plan(test_context(), kinds[7].kind, 48, 64, 1, hook("rope"), Options{.splits = 2});
    ADD_FAILURE() << "split-k with rope was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("split-k"), std::string::npos) << e.what();
  }
}

TEST(MatvecInt8, LaterFormatsSplitMatchTwin) {
  // The split batch plans of Q2_K, Q3_K, IQ4_NL and IQ4_XS (plan.cpp): int8
  // x, 8 tokens a workgroup, 2 rows a lane group, slices of unequal length,
  // on small shapes: ragged n, 9 tokens (a second chunk of one), both
  // reductions.
  if (!test_context().features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  uint32_t seed = 2700;
  int ran = 0;
  for (const Kind& kd : all_kinds()) {
    const Format f = kd.kind.format;
    if (kd.kind.onnx || (f != Format::Q2_K && f != Format::Q3_K && f != Format::IQ4_NL && f != Format::IQ4_XS))
      continue;
    for (bool sg : {true, false}) {
      if (sg && !test_context().features().subgroups) continue;
      Case c{kd, hook(sg ? "store" : "acc"), 45, kd.block * (kd.block >= 256 ? 5 : 13), 9, {}};
      c.opt.int8 = true;
      c.opt.subgroups = sg;
      c.opt.splits = 3;
      c.opt.tokens = 8;
      c.opt.rpl = 2;
      c.opt.wg = 64;
      c.opt.tpr = f == Format::Q3_K ? 2 : 4;
      c.twin_ref_tol = 2e-2;  // the int8 quantization of x
      const KernelSpec spec = plan(test_context(), kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      ASSERT_EQ(spec.splits, 3u) << spec.key();
      auto e = run_case(c, seed++);
      EXPECT_LT(e.vs_twin, 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, 2e-2) << spec.key();
      ++ran;
    }
  }
  EXPECT_GE(ran, 4) << "cases run";
}

TEST(Matvec, InterleavedTokenChunksMatchTwin) {
  // Token chunks as adjacent workgroups of one axis (Options::interleave):
  // 3 chunks of 2 tokens (the last one short), with split-k slices between
  // them, two weights, f32 and int8 activations, ragged n.
  auto kinds = all_kinds();
  uint32_t seed = 2600;
  for (bool i8 : {false, true}) {
    if (i8 && !test_context().features().packed_dot4) continue;
    for (int i : {7, 8})  // q8_0, q4_K
      for (const char* hn : {"store", "silu"})
        for (uint32_t splits : {1u, 2u}) {
          Case c{kinds[i], hook(hn), 45, kinds[i].block * (kinds[i].block >= 256 ? 3 : 11), 5, {}};
          c.opt.interleave = true;
          c.opt.int8 = i8;
          c.opt.tokens = 2;
          c.opt.splits = splits;
          c.opt.wg = 64;
          c.opt.tpr = 4;
          if (i8) c.twin_ref_tol = 2e-2;
          const KernelSpec spec = plan(test_context(), c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
          EXPECT_TRUE(spec.variant & kInterleaveChunks) << spec.key();
          EXPECT_EQ(grid(spec, c.n).z, 1u) << spec.key();
          auto e = run_case(c, seed++);
          EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " " << hn << " splits=" << splits << " i8=" << i8;
          EXPECT_LT(e.vs_ref, i8 ? 2e-2 : 5e-4) << kinds[i].name << " " << hn << " splits=" << splits;
        }
  }
  // One chunk: nothing to interleave, the plain grid.
  Options o;
  o.interleave = true;
  o.tokens = 2;
  EXPECT_EQ(plan(test_context(), kinds[7].kind, 45, 64, 2, {}, o).variant, 0u);
}

TEST(Matvec, RopeLeavesRowsPastRopeRowsAlone) {
  // Q, K and V in one dispatch: rows [0, rope_rows) rotated, the rest stored.
  auto kinds = all_kinds();
  uint32_t seed = 1700;
  for (const char* hn : {"rope", "rope_neox"})
    for (bool bias : {false, true}) {
      Hooks h = hook(hn);
      h.bias = bias;
      h.prologue = Prologue::RmsNorm;
      h.rope_rows = 32;  // 4 of 6 heads of 8
      Case c{kinds[7], h, 48, 64, 3, {}};
      auto e = run_case(c, seed++);
      EXPECT_LT(e.vs_twin, 2e-3) << hn << " bias=" << bias;
      EXPECT_LT(e.vs_ref, 2e-3) << hn << " bias=" << bias;
      // The same rows split across bindings at head boundaries.
      c.max_chunk_bytes = 16 * 68;  // 16 rows of Q8_0 k=64 per chunk
      e = run_case(c, seed++);
      EXPECT_LT(e.vs_twin, 2e-3) << hn << " bias=" << bias << " split";
    }
  // The twin itself: rows past rope_rows equal the plain sums.
  WeightKind q8;
  q8.format = Format::Q8_0;
  OwnedWeight w = make_weight(q8, 48, 64, 77);
  fix(w);
  Hooks r = hook("rope_neox");
  r.rope_rows = 32;
  KernelSpec sr = plan(Limits{}, q8, 48, 64, 2, r, {});
  KernelSpec sp = plan(Limits{}, q8, 48, 64, 2, {}, {});
  auto x = ts::random_normal(2 * 64, 78, 0.f, 1.f);
  std::vector<uint32_t> pos = {5, 9};
  TwinInputs in{&w.host, nullptr, x, {}, {}, pos, {}};
  auto yr = twin(sr, in), yp = twin(sp, in);
  for (uint32_t t = 0; t < 2; ++t)
    for (uint32_t i = 0; i < 48; ++i) {
      if (i >= 32) {
        EXPECT_EQ(yr[t * 48 + i], yp[t * 48 + i]) << i;
      }
    }
  EXPECT_NE(yr[0], yp[0]);  // row 0 is rotated (position 5)
  EXPECT_THROW(plan(Limits{}, q8, 48, 64, 1, [] { Hooks b = hook("rope"); b.rope_rows = 20; return b; }(), {}), Error);
}

TEST(Matvec, WeightSplitAcrossBindingsByRows) {
  auto kinds = all_kinds();
  // Force chunks of 4 KiB: 600 rows of Q8_0 k=256 split into many bindings.
  Case c{kinds[7], hook("rmsnorm"), 600, 256, 2, {}};
  c.max_chunk_bytes = 4096;
  auto e = run_case(c, 1234);
  EXPECT_LT(e.vs_twin, 1e-4);
  Case r{kinds[10], hook("rope_neox"), 512, 256, 2, {}};
  r.max_chunk_bytes = 8192;
  e = run_case(r, 1235);
  EXPECT_LT(e.vs_twin, 2e-3);
}

TEST(Matvec, RawCodesTimesScalesGiveTheReferenceDequantization) {
  // The twin's decode (codes, group scales, mins) must reproduce ggml's and
  // ONNX Runtime's dequantizers bit for bit: scale * code + min in f32.
  for (const Kind& kind : all_kinds()) {
    const uint32_t n = 5, k = std::max(kind.block * 2, 96u) / kind.block * kind.block;
    OwnedWeight w = make_weight(kind.kind, n, k, 4242);
    fix(w);
    const UnitInfo ui = unit_info(kind.kind, k);
    const RawRows raw = raw_rows(w.host, 0, n);
    const std::vector<float> ref = dequantize_rows(w.host, 0, n);
    ASSERT_EQ(raw.code.size(), ref.size()) << kind.name;
    size_t bad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      float v = raw.code[i];
      if (ui.group) {
        const size_t g = (i / ui.kp) * (ui.kp / ui.group) + (i % ui.kp) / ui.group;
        v = raw.scale[g] * v;
        if (ui.has_min) v = v + raw.min[g];
      }
      if (i % ui.kp < k && std::memcmp(&v, &ref[i], 4) != 0 && ++bad < 4)
        ADD_FAILURE() << kind.name << " element " << i << ": " << v << " != " << ref[i];
    }
    EXPECT_EQ(bad, 0u) << kind.name;
  }
}

TEST(Matvec, Int8ByDefaultOnLargeIntegerWeights) {
  // Int8 activations by default (the model, bench matvec): integer formats
  // with an int8 path, an adapter with packed dot4, 2^24 elements or more
  // (2^22 for the formats whose batch-1 plans stage x in quads).
  Limits dot4 = h200_limits(), none = h200_limits();
  none.dot4 = false;
  ASSERT_TRUE(dot4.dot4);
  const WeightKind& q4 = kind_named("q4_0").kind;
  const WeightKind& nl = kind_named("iq4_nl").kind;
  EXPECT_TRUE(int8_by_default(dot4, nl, 4096, 4096));  // exactly 2^24
  EXPECT_FALSE(int8_by_default(dot4, nl, 4095, 4096));
  EXPECT_TRUE(int8_by_default(dot4, kind_named("iq4_xs").kind, 4096, 14336));
  EXPECT_FALSE(int8_by_default(dot4, kind_named("iq4_xs").kind, 2048, 2048));
  for (const char* name : {"q4_0", "q4_1", "q5_0", "q5_1", "q4_K", "q5_K", "q8_0", "q2_K", "q3_K", "q6_K"}) {
    EXPECT_EQ(int8_min_elements(kind_named(name).kind), uint64_t{1} << 22) << name;
    EXPECT_TRUE(int8_by_default(dot4, kind_named(name).kind, 2048, 2048)) << name;  // exactly 2^22
    EXPECT_FALSE(int8_by_default(dot4, kind_named(name).kind, 2048, 2044)) << name;
  }
  EXPECT_FALSE(int8_by_default(dot4, q4, 2048, 2048, uint64_t{1} << 24));  // asked for more
  EXPECT_FALSE(int8_by_default(dot4, q4, 2560, 960));
  EXPECT_TRUE(int8_by_default(dot4, q4, 2560, 960, 0));
  EXPECT_FALSE(int8_by_default(none, q4, 4096, 14336));
  EXPECT_FALSE(int8_by_default(dot4, kind_named("f16").kind, 4096, 14336));
  EXPECT_FALSE(int8_by_default(dot4, kind_named("onnx8b32").kind, 4096, 14336));
  EXPECT_TRUE(int8_by_default(dot4, kind_named("onnx4b32zp").kind, 4096, 14336));
}

TEST(Matvec, PlanFollowsTheLimits) {
  Limits low;  // WebGPU defaults
  WeightKind q8;
  q8.format = Format::Q8_0;
  auto s = plan(low, q8, 4096, 14336, 8, {}, {});
  EXPECT_LE(s.wg, 256u);
  EXPECT_LE(shared_bytes(s), 16384u);
  EXPECT_EQ(s.wg % s.tpr, 0u);
  EXPECT_FALSE(s.features.subgroups);
  Limits nv{1024, 49152, 65535, 32, 32};
  auto g = plan(nv, q8, 4096, 14336, 1, {}, {});
  EXPECT_TRUE(g.features.subgroups);
  EXPECT_LE(g.tpr, 32u);
  EXPECT_LE(shared_bytes(g), 49152u);
  Limits sw{256, 16384, 65535, 4, 4};
  auto w = plan(sw, q8, 960, 960, 1, {}, {});
  EXPECT_LE(w.tpr, 4u);  // never more lanes per row than the smallest subgroup
  // Many short rows at batch 1 (an lm_head): about 8 units a lane, 2 rows per
  // lane group; the 8B shapes and batches keep their plan.
  auto lm = plan(nv, q8, 49152, 960, 1, {}, {});
  EXPECT_EQ(lm.tpr, 4u);
  EXPECT_EQ(lm.rpl, 2u);
  auto lm2 = plan(nv, q8, 128256, 2048, 1, {}, {});
  EXPECT_EQ(lm2.tpr, 8u);
  EXPECT_EQ(lm2.rpl, 2u);
  EXPECT_EQ(g.rpl, 1u);
  auto b8 = plan(nv, q8, 4096, 14336, 8, {}, {});
  EXPECT_EQ(b8.tpr, 16u);
  EXPECT_EQ(b8.tokens, 4u);
  // A batch over short rows: 8 lanes a row, 8 tokens per workgroup.
  auto sb = plan(nv, q8, 14336, 4096, 8, {}, {});
  EXPECT_EQ(sb.tpr, 8u);
  EXPECT_EQ(sb.tokens, 8u);
  EXPECT_EQ(sb.rpl, 2u);
  EXPECT_EQ(plan(nv, q8, 2560, 960, 8, {}, {}).tpr, 16u) << "a small grid keeps 16 lanes a row";
}

TEST(Matvec, RowSumsStayInRegistersUnlessAnotherRowIsRead) {
  // With subgroups and no split-k, lane 0 of a row's lanes runs the epilogue
  // on the butterfly's sum; RoPE (which reads the partner row), split-k and
  // the portable reduction keep the row sums in workgroup memory. The parity
  // tests run both on every hook.
  Limits nv{1024, 49152, 65535, 32, 32};
  WeightKind q4;
  q4.format = Format::Q4_0;
  const auto rows_in_shared = [](const KernelSpec& s) {
    return wgsl(s).find("var<workgroup> rs:") != std::string::npos;
  };
  for (const char* h : {"store", "acc", "silu", "bias", "rmsnorm"}) {
    const KernelSpec s = plan(nv, q4, 4096, 14336, 1, hook(h), {});
    ASSERT_TRUE(s.features.subgroups) << s.key();
    EXPECT_FALSE(rows_in_shared(s)) << s.key();
    Options portable;
    portable.subgroups = false;
    EXPECT_TRUE(rows_in_shared(plan(nv, q4, 4096, 14336, 1, hook(h), portable))) << h;
    Options split;
    split.splits = 4;
    const KernelSpec sk = plan(nv, q4, 4096, 14336, 8, hook(h), split);
    ASSERT_GT(sk.splits, 1u) << sk.key();
    EXPECT_TRUE(rows_in_shared(sk)) << sk.key();
  }
  for (const char* h : {"rope", "rope_neox"}) EXPECT_TRUE(rows_in_shared(plan(nv, q4, 4096, 4096, 1, hook(h), {}))) << h;
}

TEST(Matvec, ManyShortRowsPlanMatchesTwin) {
  // The batch-1 plan for many short rows (4 lanes a row, 2 rows per lane
  // group), on the portable reduction and, where the adapter has them, subgroups.
  auto kinds = all_kinds();
  uint32_t seed = 1700;
  for (int i : {7, 3, 8})  // q8_0, q4_0, q4_K
    for (bool sg : {false, true}) {
      Case c{kinds[i], hook("rmsnorm"), 16390u, 1024u, 1, {}};
      c.opt.subgroups = sg;
      const KernelSpec spec = plan(test_context(), c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
      if (!sg) {
        EXPECT_EQ(spec.rpl, 2u) << spec.key();
        EXPECT_LE(spec.tpr, 8u) << spec.key();
      }
      auto e = run_case(c, seed++);
      EXPECT_LT(e.vs_twin, 1e-4) << kinds[i].name << " " << spec.key();
      EXPECT_LT(e.vs_ref, 5e-4) << kinds[i].name << " " << spec.key();
    }
}

TEST(Matvec, BadShapesAreClearErrors) {
  auto& ctx = test_context();
  WeightKind q4k;
  q4k.format = Format::Q4_K;
  std::vector<uint8_t> bytes(144 * 2);
  HostWeight w{q4k, 2, 128, bytes};
  try {
    upload(ctx, w, "bad");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("multiple"), std::string::npos) << e.what();
  }
  HostWeight short_bytes{q4k, 3, 256, bytes};
  EXPECT_THROW(upload(ctx, short_bytes, "short"), Error);
}

}  // namespace
