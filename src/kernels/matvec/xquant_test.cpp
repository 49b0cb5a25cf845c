// Parity tests of the int8 matvec with x pre-quantized (x_prequantized: a
// quantize kernel, xquant.wgsl, then a lane loop reading its output from
// global memory). The codes, scales and code sums are the staged kernel's,
// so both match the twin and, where the staged kernel took one tile too,
// give the same y.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/op.hpp"
#include "kernels/matvec/test_case.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "kernels/matvec/twin.hpp"
#include "kernels/matvec/xquant.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

#include <fmt/format.h>

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;

TEST(MatvecInt8, GlobalXMatchesTwinAndStagedKernel) {
  // Every format of the int8 path, ragged n (45 rows; 48 for the rope's
  // whole heads), 3 tokens in chunks of 2 (a padded fourth row in xq), k of
  // 2 or 3 blocks, the hooks in turn, and the lane shapes in turn: 2 units a
  // step, 2 rows a lane group, split-k, one subgroup a workgroup, the tree
  // reduction, the caller's scratch for xq.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  const char* hooks[] = {"store", "acc", "silu", "rope", "bias", "rmsnorm", "rope_neox"};
  const uint32_t sgmin = ctx.features().subgroups ? ctx.adapter().subgroup_min : 0;
  uint32_t seed = 9400, i = 0;
  int one_subgroup = 0;
  for (const Kind& kd : all_kinds()) {
    if (!int8_supported(kd.kind)) continue;
    const uint32_t v = i % 6;
    const std::string h = hooks[i % 7];
    const uint32_t n = h.rfind("rope", 0) == 0 ? 48 : 45;
    const uint32_t k = kd.block * (i % 2 ? 3 : 2);
    ++i;
    std::vector<float> ys[2];
    uint32_t tiles[2] = {0, 0};
    for (bool gx : {true, false}) {
      Case c{kd, hook(h), n, k, 3, {}};
      c.twin_ref_tol = 2e-2;  // the int8 quantization of x
      c.opt.int8 = true;
      c.opt.global_x = gx;
      c.opt.wg = 64;
      c.opt.tpr = 4;
      c.opt.tokens = 2;
      c.opt.unroll = v == 1 ? 2 : 1;
      c.opt.rpl = v == 2 ? 2 : 1;
      if (v == 3 && h.rfind("rope", 0) != 0) c.opt.splits = 2;
      if (v == 4 && sgmin) c.opt.wg = c.opt.tpr = std::min<uint32_t>(sgmin, 32);  // one subgroup
      if (v == 5) {
        c.opt.subgroups = false;
        c.opt.wg = c.opt.tpr = 32;  // one lane group, tree-reduced
      }
      c.external_xq = i % 2 == 0;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      ASSERT_EQ(x_prequantized(spec), gx) << spec.key();
      const std::string src = wgsl(spec);
      EXPECT_EQ(src.find("var<workgroup> xblk") == std::string::npos, gx) << spec.key();
      EXPECT_EQ(src.find("xpq(z * TOKENS + 0u, uu0 * (UNIT / 16u)") != std::string::npos, gx) << spec.key();
      // The prologue moves to the quantize kernel.
      if (gx) {
        EXPECT_EQ(src.find("nw4"), std::string::npos) << spec.key();
      }
      if (gx && spec.features.subgroups && spec.wg == spec.tpr) ++one_subgroup;
      tiles[gx] = spec.tile;
      auto e = run_case(c, seed, &ys[gx]);
      const bool rope = c.hooks.epilogue == Epilogue::Rope;  // the GPU's cos/sin
      EXPECT_LT(e.vs_twin, rope ? 2e-3 : 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, 2e-2) << spec.key();
    }
    ++seed;
    if (tiles[0] == tiles[1]) {
      EXPECT_EQ(ys[0], ys[1]) << kd.name << " " << h << ": pre-quantized and staged x differ";
    }
  }
  EXPECT_GE(i, 8u) << "int8 formats tested";
  if (sgmin) {
    EXPECT_GT(one_subgroup, 0) << "no case ran a workgroup of one subgroup";
  }
}

TEST(MatvecInt8, BatchPlanOfLongRowsMatchesTwin) {
  // The lane shape the plan gives batches of Q4_0, Q4_1, Q5_0 and Q5_1 over
  // long rows (x pre-quantized, one lane group a workgroup, 4 rows a lane
  // group, 4 tokens a workgroup (Q4_1 8), 2 units a step, constant steps),
  // forced on small problems: ragged n (45 rows: 12 lane groups, the last
  // with one row), 5 tokens (9 for Q4_1: a second chunk of one), k of 8 or 6
  // units (whole steps or not), with subgroups where the device has them and
  // with the tree reduction.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  uint32_t seed = 9600;
  int ran = 0;
  for (const Kind& kd : all_kinds()) {
    if (kd.kind.onnx || (kd.kind.format != Format::Q4_0 && kd.kind.format != Format::Q4_1 &&
                         kd.kind.format != Format::Q5_0 && kd.kind.format != Format::Q5_1))
      continue;
    const uint32_t tokens = kd.kind.format == Format::Q4_1 ? 8 : 4;
    for (bool sg : {true, false}) {
      if (sg && !ctx.features().subgroups) continue;
      const char* h = sg ? "acc" : "silu";
      Case c{kd, hook(h), 45, kd.block * (sg ? 8u : 6u), tokens + 1, {}};
      c.twin_ref_tol = 2e-2;  // the int8 quantization of x
      c.opt.int8 = true;
      c.opt.global_x = true;
      c.opt.subgroups = sg;
      c.opt.wg = c.opt.tpr = sg ? std::min<uint32_t>(ctx.adapter().subgroup_min, 32) : 32;
      c.opt.rpl = 4;
      c.opt.tokens = tokens;
      c.opt.unroll = 2;
      c.opt.const_steps = true;
      const KernelSpec spec = plan(ctx, kd.kind, c.n, c.k, c.m, c.hooks, c.opt);
      ASSERT_TRUE(x_prequantized(spec)) << spec.key();
      ASSERT_EQ(spec.rpl, 4u) << spec.key();
      ASSERT_EQ(spec.tokens, tokens) << spec.key();
      auto e = run_case(c, seed++);
      EXPECT_LT(e.vs_twin, 1e-4) << spec.key();
      EXPECT_LT(e.vs_ref, 2e-2) << spec.key();
      ++ran;
    }
  }
  EXPECT_GE(ran, 4) << "cases run";
}

TEST(MatvecInt8, QuantizeKernelWritesTheTwinsCodes) {
  // xq as the twin's quantize_x gives it, word for word: codes, scales and
  // code sums of each token (RMSNorm applied first where the hook is on),
  // zeros past K (the padding to whole units) and in the padded token row.
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  WeightKind kind;  // 4-bit MatMulNBits of block 16: 32-element units, k = 48 pads to 64
  kind.onnx = true;
  kind.bits = 4;
  kind.block_size = 16;
  // "fallback": the quad kernel with its subgroup layout check made to fail,
  // so each block is quantized by one lane alone (quant_one).
  for (const std::string h : {"store", "rmsnorm", "fallback"}) {
    const bool fallback = h == "fallback";
    if (fallback && !ctx.features().subgroups) continue;
    Options o;
    o.int8 = true;
    o.global_x = true;
    o.tokens = 2;
    o.wg = 64;
    o.tpr = 4;
    const uint32_t k = 48, m = 3;
    const KernelSpec mv = plan(ctx, kind, 45, k, m, hook(fallback ? "store" : h), o);
    const KernelSpec qs = xquant::plan(mv);
    const uint32_t kp = qs.n, mt = 4;
    EXPECT_EQ(qs.features.subgroups, ctx.features().subgroups && h != "rmsnorm") << qs.key();
    ASSERT_EQ(kp, 64u);
    auto x = testing_support::random_normal(size_t{m} * k, 31, 0.f, 2.f);
    for (uint32_t i = 0; i < 16; ++i) x[k + 16 + i] = 0.f;  // token 1: a zero half block
    auto nw = testing_support::random_floats(k, 32, 0.5f, 1.5f);
    auto xb = ctx.storage<float>(x, "x");
    auto nwb = ctx.storage<float>(nw, "nw");
    std::vector<float> junk(xquant::bytes(qs) / 4);
    testing_support::poison(junk);
    auto xqb = ctx.storage<float>(junk, "xq");
    gpu::Recorder rec(ctx);
    if (fallback) {
      std::string src = xquant::wgsl(qs);
      const std::string check = "let quads = subgroupAll(";
      const size_t at = src.find(check);
      ASSERT_NE(at, std::string::npos) << qs.key();
      const size_t end = src.find(";\n", at);
      src.insert(end, " && li >= WG");  // never true: every subgroup takes the fallback
      const std::string label = qs.key() + ".fallback";
      const gpu::Kernel& kn = ctx.kernel(label, label, [&] { return src; });
      const gpu::BindGroup g = ctx.bind(kn, {{&xb}, {&xqb}});
      rec.dispatch(kn, g, xquant::grid(qs));
      rec.submit();
    } else {
      const auto p = xquant::prepare(ctx, qs, xb, xqb, gpu::Binding{&nwb});
      p.record(rec);
      rec.submit();
    }
    const auto w = ctx.download<uint32_t>(xqb, 0, xquant::bytes(qs) / 4);
    ASSERT_EQ(w.size(), size_t{mt} * (kp / 4 + kp / 8));
    // The twin's staged x' of each token (zeros past K and in row 3). With
    // RMSNorm, the GPU may contract the sum of squares into FMAs, so codes
    // may differ by one step and scales in their last bits; without it,
    // every word is the twin's.
    const bool rms = h == "rmsnorm";
    for (uint32_t t = 0; t < mt; ++t) {
      std::vector<float> xs(kp, 0.f);
      const float* xt = x.data() + size_t{t} * k;
      if (t < m) {
        const float ss = rms_sum_squares(xt, k, mv.wg);
        const float scale = 1.0f / std::sqrt(ss / float(k) + mv.hooks.eps);
        for (uint32_t e = 0; e < k; ++e) xs[e] = rms ? (xt[e] * scale) * nw[e] : xt[e];
      }
      const QuantX q = quantize_x(xs);
      for (uint32_t b = 0; b < kp / 32; ++b) {
        const std::string at = fmt::format("{} token {} block {}", h, t, b);
        for (uint32_t i = 0; i < 32; ++i) {
          const int got = int8_t((w[size_t{t} * kp / 4 + 8 * b + i / 4] >> (8 * (i % 4))) & 255u);
          EXPECT_LE(std::abs(got - q.q[32 * b + i]), rms ? 1 : 0) << at << " element " << i;
        }
        const size_t meta = size_t{mt} * kp / 4 + (size_t{t} * kp / 32 + b) * 4;
        float scale;
        std::memcpy(&scale, &w[meta], 4);
        if (rms) {
          EXPECT_NEAR(scale, q.scale[b], 1e-5f * q.scale[b]) << at;
          EXPECT_LE(std::abs(int32_t(w[meta + 1]) - q.sum[2 * b]), 16) << at;
          EXPECT_LE(std::abs(int32_t(w[meta + 2]) - q.sum[2 * b + 1]), 16) << at;
        } else {
          EXPECT_EQ(scale, q.scale[b]) << at;
          EXPECT_EQ(int32_t(w[meta + 1]), q.sum[2 * b]) << at;
          EXPECT_EQ(int32_t(w[meta + 2]), q.sum[2 * b + 1]) << at;
        }
        EXPECT_EQ(w[meta + 3], 0u) << at;
        if (t == mt - 1) {
          EXPECT_EQ(scale, 0.f) << at << ": the padded token row";
        }
      }
    }
  }
}

TEST(MatvecInt8, GlobalXBadScratchIsAClearError) {
  auto& ctx = test_context();
  if (!ctx.features().packed_dot4) GTEST_SKIP() << "no packed_4x8_integer_dot_product";
  WeightKind q8;
  q8.format = Format::Q8_0;
  Options o;
  o.int8 = true;
  o.global_x = true;
  const KernelSpec spec = plan(ctx, q8, 40, 64, 2, {}, o);
  OwnedWeight wa = make_weight(q8, 40, 64, 5);
  fix(wa);
  Weights ga = upload(ctx, wa.host, "w");
  auto xb = ctx.create_buffer(2 * 64 * 4, gpu::kStorage, "x");
  auto yb = ctx.create_buffer(2 * 40 * 4, gpu::kStorage, "y");
  auto small = ctx.create_buffer(64, gpu::kStorage, "xq.small");
  Args a{&ga, nullptr, &xb, &yb};
  a.xq = &small;
  try {
    prepare(ctx, spec, a);
    ADD_FAILURE() << "a short xq scratch was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("xq.small"), std::string::npos) << e.what();
  }
}

TEST(MatvecInt8, PlanReadsPreQuantizedXWhereItGained) {
  // H200-like limits: Q8_0, Q5_0 and Q5_1 at batch 1 over rows of k >= 8192
  // without the prologue take x pre-quantized, as one 32-lane group a
  // workgroup, 2 units a step, one row a lane group and constant steps;
  // shorter rows, the prologue, the other formats and f32 activations keep
  // their plans. Batches: below.
  const Limits lim = h200_limits();
  const auto kinds = all_kinds();
  auto spec = [&](const char* name, uint32_t n, uint32_t k, uint32_t m, const Hooks& h = {}, bool int8 = true) {
    Options o;
    o.int8 = int8;
    for (const auto& kd : kinds)
      if (kd.name == name) return plan(lim, kd.kind, n, k, m, h, o);
    throw Error(std::string("no kind ") + name);
  };
  for (const char* f : {"q8_0", "q5_0", "q5_1"}) {
    const KernelSpec s = spec(f, 4096, 14336, 1);
    EXPECT_TRUE(x_prequantized(s)) << s.key();
    EXPECT_EQ(s.wg, 32u) << s.key();
    EXPECT_EQ(s.tpr, 32u) << s.key();
    EXPECT_EQ(s.unroll, 2u) << s.key();
    EXPECT_EQ(s.rpl, 1u) << s.key();
    EXPECT_TRUE(s.variant & kConstSteps) << s.key();
    EXPECT_FALSE(s.variant & (kQuadStage | kPipeline)) << s.key();
    EXPECT_EQ(shared_bytes(s), 4u * 1 + 4 + 4) << s.key();  // rs, nscale, sg_count: no x
    const KernelSpec q = xquant::plan(s);
    EXPECT_TRUE(q.features.subgroups) << q.key();  // quads of lanes
    EXPECT_EQ(q.wg, 128u) << q.key();
    EXPECT_EQ(xquant::grid(q).x, 14336u / 32 * 4 / 128) << q.key();
    EXPECT_FALSE(x_prequantized(spec(f, 14336, 4096, 1))) << f;
    EXPECT_FALSE(x_prequantized(spec(f, 4096, 14336, 1, hook("rmsnorm")))) << f;
    EXPECT_FALSE(x_prequantized(spec(f, 4096, 14336, 1, {}, false))) << f;
  }
  for (const char* f : {"q4_0", "q4_1", "q4_K", "q5_K", "q6_K", "onnx4b32"})
    EXPECT_FALSE(x_prequantized(spec(f, 4096, 14336, 1))) << f;
  // Batches of 3 to 8 tokens over rows of k >= 12288: Q4_0, Q4_1, Q5_0 and
  // Q5_1 take x pre-quantized, 4 rows a lane group and 4 tokens a workgroup
  // (Q4_1 8), not split; Q8_0 and the K-quants, rows of k = 4096 or 8192, 16
  // tokens and the prologue keep their plans. Pairs of tokens: pair_test.cpp.
  for (const char* f : {"q4_0", "q4_1", "q5_0", "q5_1"}) {
    for (uint32_t m : {3u, 8u}) {
      const KernelSpec s = spec(f, 4096, 14336, m);
      EXPECT_TRUE(x_prequantized(s)) << s.key();
      EXPECT_EQ(s.wg, 32u) << s.key();
      EXPECT_EQ(s.tpr, 32u) << s.key();
      EXPECT_EQ(s.rpl, 4u) << s.key();
      EXPECT_EQ(s.tokens, std::min(m, std::string(f) == "q4_1" ? 8u : 4u)) << s.key();
      EXPECT_EQ(s.unroll, 2u) << s.key();
      EXPECT_EQ(s.splits, 1u) << s.key();
      EXPECT_TRUE(s.variant & kConstSteps) << s.key();
    }
    EXPECT_FALSE(x_prequantized(spec(f, 14336, 4096, 8))) << f;
    EXPECT_FALSE(x_prequantized(spec(f, 8192, 8192, 8))) << f;
    EXPECT_FALSE(x_prequantized(spec(f, 4096, 14336, 16))) << f;
    EXPECT_FALSE(x_prequantized(spec(f, 4096, 14336, 8, hook("rmsnorm")))) << f;
  }
  for (const char* f : {"q8_0", "q4_K", "q5_K", "q6_K", "onnx4b32"})
    EXPECT_FALSE(x_prequantized(spec(f, 4096, 14336, 8))) << f;
  // The hoisted x reads of a step whose units all exist.
  EXPECT_NE(wgsl(spec("q8_0", 4096, 14336, 1)).find("let xm0_0_1 = xpm("), std::string::npos);
}
