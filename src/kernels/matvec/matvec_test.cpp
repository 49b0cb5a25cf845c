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
// move one x code by one.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "kernels/matvec/op.hpp"
#include "kernels/matvec/raw.hpp"
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

struct Case {
  Kind kind;
  Hooks hooks;
  uint32_t n, k, m;
  Options opt;
  uint64_t max_chunk_bytes = 0;
  double twin_ref_tol = 5e-4;  // the twin against float64 (int8 activations: their quantization error)
};

struct Errors {
  double vs_ref, vs_twin;
};

Errors run_case(const Case& c, uint32_t seed) {
  auto& ctx = test_context();
  OwnedWeight wa = make_weight(c.kind.kind, c.n, c.k, seed);
  fix(wa);
  const bool silu = c.hooks.epilogue == Epilogue::SiluGate;
  OwnedWeight wb;
  if (silu) {
    wb = make_weight(c.kind.kind, c.n, c.k, seed + 7);
    fix(wb);
  }
  KernelSpec spec = plan(ctx, c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
  auto x = ts::random_normal(size_t{c.m} * c.k, seed + 1, 0.f, 1.f);
  auto nw = ts::random_floats(c.k, seed + 2, 0.5f, 1.5f);
  auto bias = ts::random_floats(c.n, seed + 3, -1.f, 1.f);
  auto y_in = ts::random_floats(size_t{c.m} * c.n, seed + 4, -1.f, 1.f);
  std::vector<uint32_t> pos(c.m);
  for (uint32_t t = 0; t < c.m; ++t) pos[t] = 3 + 2 * t;

  UploadOptions uo;
  uo.max_chunk_bytes = c.max_chunk_bytes;
  if (c.max_chunk_bytes) uo.row_granularity = 8;
  if (c.hooks.epilogue == Epilogue::Rope) uo.row_granularity = std::lcm(uo.row_granularity, c.hooks.head_dim);
  Weights ga = upload(ctx, wa.host, "test.a", uo);
  Weights gb;
  if (silu) gb = upload(ctx, wb.host, "test.b", uo);
  auto xb = ctx.storage<float>(x, "x");
  auto nwb = ctx.storage<float>(nw, "nw");
  auto bb = ctx.storage<float>(bias, "bias");
  auto pb = ctx.storage<uint32_t>(pos, "pos");
  auto yb = ctx.create_buffer(y_in.size() * 4, gpu::kStorage, "y");
  if (c.hooks.epilogue == Epilogue::Acc) {
    ctx.upload<float>(yb, y_in);
  } else {
    std::vector<float> poison(y_in.size());
    ts::poison(poison);
    ctx.upload<float>(yb, poison);
  }
  Args args{&ga, silu ? &gb : nullptr, &xb, &yb, &nwb, &bb, &pb};
  Prepared p = prepare(ctx, spec, args);
  gpu::Recorder rec(ctx);
  p.record(rec);
  rec.submit();
  auto y = ctx.download<float>(yb, 0, y_in.size());
  EXPECT_EQ(ts::first_poisoned(y), -1) << spec.key();

  TwinInputs in{&wa.host, silu ? &wb.host : nullptr, x, nw, bias, pos, y_in};
  auto tw = twin(spec, in);
  auto ref = reference(spec, in);
  Errors e{ts::max_rel_err(y, ref), ts::max_rel_err(y, tw)};
  std::printf("  %-60s vs f64 %.2e  vs twin %.2e  twin vs f64 %.2e\n", spec.key().c_str(), e.vs_ref,
              e.vs_twin, ts::max_rel_err(tw, ref));
  EXPECT_LT(ts::max_rel_err(tw, ref), c.twin_ref_tol) << "twin vs float64, " << spec.key();
  return e;
}

Hooks hook(const std::string& name) {
  Hooks h;
  if (name == "acc") h.epilogue = Epilogue::Acc;
  if (name == "silu") h.epilogue = Epilogue::SiluGate;
  if (name == "rmsnorm") h.prologue = Prologue::RmsNorm;
  if (name == "bias") h.bias = true;
  if (name == "rope" || name == "rope_neox") {
    h.epilogue = Epilogue::Rope;
    h.rope_mode = name == "rope" ? RopeMode::Normal : RopeMode::Neox;
    h.head_dim = 8;
    h.n_rot = 6;  // the last two dims of each head pass through
    h.rope_base = 10000.f;
    h.rope_scale = 0.5f;
  }
  return h;
}

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
    EXPECT_EQ(spec.variant, kConstSteps) << spec.key();
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
    EXPECT_EQ(plan(test_context(), kinds[7].kind, 45, 256, 1, {}, d).variant, kConstSteps);
    EXPECT_EQ(plan(test_context(), kinds[8].kind, 45, 256, 1, {}, d).variant, 0u);  // q4_K: 64-element units
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
  // loop (2) or both (3) cut out, or the loop reduced to the weight loads (4).
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
      for (uint32_t p = 1; p <= 4; ++p) {
        Options o;
        o.int8 = i8;
        o.probe = p;
        const KernelSpec spec = plan(ctx, kinds[i].kind, 45, kinds[i].block * 2, 2, {}, o);
        EXPECT_EQ(probe_of(spec), static_cast<Probe>(p)) << spec.key();
        const std::string src = wgsl(spec);
        const bool staged = p == 2 || p == 4;
        const bool decoded = p == 1;
        EXPECT_EQ(src.find(i8 ? "pack4xI8(" : "UNIT4P + j % (UNIT") != std::string::npos, staged) << spec.key();
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
        EXPECT_EQ(src.find("pack4xI8("), std::string::npos) << spec.key();
        EXPECT_NE(src.find("xqg("), std::string::npos) << spec.key();
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
  o.probe = 7;
  EXPECT_THROW(plan(ctx, kinds[7].kind, 45, 64, 1, {}, o), Error);
  o.probe = 5;  // int8 only
  EXPECT_THROW(plan(ctx, kinds[7].kind, 45, 64, 1, {}, o), Error);
  o.probe = 6;  // 45 rows are not whole workgroups
  o.wg = 64;
  o.tpr = 4;
  EXPECT_THROW(plan(ctx, kinds[7].kind, 45, 256, 1, {}, o), Error);
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

// ---- int8 activations (features.dot4) ---------------------------------------

namespace {

bool int8_ok() { return test_context().features().packed_dot4; }

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

TEST(MatvecInt8, PlanSharesXReadsAmongRows) {
  // H200-like limits: the int8 defaults (generator.cpp) for the 8B shapes,
  // and the f32 batch plan where a small grid would idle the GPU.
  Limits lim;
  lim.invocations = 1024;
  lim.shared = 49152;
  lim.subgroup_min = lim.subgroup_max = 32;
  lim.dot4 = true;
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
  const KernelSpec d = plan(lim, q4, 14336, 4096, 8, {}, o);
  EXPECT_EQ(d.tpr, 8u);
  EXPECT_EQ(d.rpl, 4u);
  EXPECT_EQ(d.tokens, 4u);
  const KernelSpec e = plan(lim, q4, 4096, 14336, 8, {}, o);
  EXPECT_EQ(e.tpr, 16u);
  EXPECT_EQ(e.rpl, 4u);
  EXPECT_EQ(e.tokens, 2u);
  WeightKind q4k;
  q4k.format = Format::Q4_K;
  const KernelSpec g = plan(lim, q4k, 4096, 14336, 8, {}, o), g32 = plan(lim, q4k, 4096, 14336, 8, {}, {});
  EXPECT_EQ(g.tpr, g32.tpr);  // long rows of 64-element units keep the f32 batch plan
  EXPECT_EQ(g.rpl, g32.rpl);
  EXPECT_EQ(g.tokens, g32.tokens);
  const KernelSpec h = plan(lim, q4k, 14336, 4096, 8, {}, o);
  EXPECT_EQ(h.tpr, 8u);
  EXPECT_EQ(h.rpl, 4u);
  const KernelSpec f = plan(lim, q4, 2560, 960, 8, {}, o);
  const KernelSpec f32 = plan(lim, q4, 2560, 960, 8, {}, {});
  EXPECT_EQ(f.rpl, f32.rpl);
  EXPECT_EQ(f.tpr, f32.tpr);
  EXPECT_EQ(f.tokens, f32.tokens);
  for (const KernelSpec* s : {&a, &b, &c, &d, &e, &f, &g, &h}) {
    EXPECT_TRUE(s->features.dot4) << s->key();
    EXPECT_LE(shared_bytes(*s), lim.shared) << s->key();
  }
}
