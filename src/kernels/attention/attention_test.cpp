// Parity of the attention kernels (attention.wgsl, combine.wgsl) with the twin
// and with float64, on random q and caches (f32 and f16), GQA groups of 1 to
// 8, head_dim 32 to 128, one chunk and several, batches of tokens at different
// positions (a padding token among them), q inside fused QKV rows; outputs
// poisoned first. Also the plan's limits and its errors, and the contract's
// cases run and replayed as exported Programs.
#include "kernels/attention/attention.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "kernels/attention/register.hpp"
#include "kernels/attention/test_inputs.hpp"
#include "kernels/attention/twin.hpp"
#include "quant/half.hpp"
#include "support/contract.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

namespace blockq::attention {
namespace {

using testing_support::first_poisoned;
using testing_support::max_rel_err;

struct Case {
  uint32_t n_head, n_kv, hd, n_ctx;
  std::vector<uint32_t> pos;  // one per token; 0xffffffff: padding
  Options opt;
  bool fused_q = false;  // q at offset 0 of rows [q | k | v]
};

// Runs the case, checks it, and returns the kernel's output [m, n_head, head_dim].
std::vector<float> run_case(const Case& c, Format kv) {
  gpu::Context& ctx = testing_support::test_context();
  const uint32_t m = uint32_t(c.pos.size());
  const uint32_t nq = c.n_head * c.hd, nkv = c.n_kv * c.hd;
  Shape s{c.n_head, c.n_kv, c.hd, c.n_ctx, m, kv};
  if (c.fused_q) s.q_stride = nq + 2 * nkv;
  const testing::Inputs in = testing::make_inputs(ctx, s, c.pos, 41);
  const auto& qrows = in.q;
  const auto &k = in.k, &v = in.v;
  const Attention att(ctx, s, in.args(), c.opt);
  const uint32_t visible = in.visible;
  const KernelSpec& sp = att.spec(visible);
  gpu::Recorder r(ctx);
  att.record(r, visible);
  r.submit();
  const auto got = ctx.download<float>(in.out);
  EXPECT_EQ(first_poisoned(got), -1) << "an output was never written";
  const uint32_t dispatched = std::max(1u, (visible + sp.tile_n - 1) / sp.tile_n);
  double err_twin = 0, err_ref = 0;
  for (uint32_t t = 0; t < m; ++t) {
    const uint32_t n = c.pos[t] == 0xffffffffu ? 0 : std::min(c.pos[t] + 1, c.n_ctx);
    const std::vector<float> qt(qrows.begin() + size_t(t) * s.q_row(), qrows.begin() + size_t(t) * s.q_row() + nq);
    std::vector<float> want(nq);
    std::vector<double> ref(nq);
    const twin::AttentionShape ts{c.n_head, c.n_kv, c.hd, n};
    twin::attention_decode(qt, k, v, want, ts, {sp.wg, sp.tile_n, dispatched});
    twin::attention_decode_ref(qt, k, v, ref, ts);
    const std::span<const float> g(got.data() + size_t(t) * nq, nq);
    if (n == 0) {
      for (float x : g) EXPECT_EQ(x, 0.0f) << "padding token " << t;
      continue;
    }
    err_twin = std::max(err_twin, max_rel_err(g, want));
    err_ref = std::max(err_ref, max_rel_err(g, ref));
  }
  const std::string what =
      fmt::format("{} {}/{} heads hd {} ctx {} seen {} chunk {} x {} (wg {}, {} heads a workgroup)", traits(kv).name,
                  c.n_head, c.n_kv, c.hd, c.n_ctx, visible, sp.tile_n, dispatched, sp.wg, sp.tile_m);
  fmt::print("{}: max rel err vs twin {:.3g}, vs float64 {:.3g}\n", what, err_twin, err_ref);
  EXPECT_LT(err_twin, 2e-6) << what;  // expf and FMA contraction may differ by ulps
  EXPECT_LT(err_ref, 2e-5) << what;
  return got;
}

class AttentionKernel : public ::testing::TestWithParam<Format> {};

TEST_P(AttentionKernel, OneChunkMatchesTwin) {
  run_case({4, 2, 64, 48, {0}, {}}, GetParam());
  run_case({4, 2, 64, 48, {47}, {}}, GetParam());
  run_case({6, 2, 32, 40, {13, 39, 0xffffffffu}, {}}, GetParam());  // GQA 3, a batch with padding
}

TEST_P(AttentionKernel, ChunksMatchTwin) {
  run_case({4, 2, 64, 300, {299}, {.max_wg = 32, .chunk = 64, .tiers = {}}}, GetParam());
  run_case({4, 2, 64, 300, {100, 299, 5}, {.max_wg = 32, .chunk = 64, .tiers = {}}}, GetParam());
  run_case({8, 1, 128, 200, {150}, {.max_wg = 64, .tiers = {}}}, GetParam());  // GQA 8
  run_case({3, 3, 80, 100, {70, 99}, {.max_wg = 16, .chunk = 32, .tiers = {}}}, GetParam());  // head_dim > wg, no GQA
}

TEST_P(AttentionKernel, FusedQkvRows) {
  run_case({4, 2, 32, 64, {10, 63}, {.max_wg = 16, .tiers = {}}, true}, GetParam());
}

TEST_P(AttentionKernel, DefaultPlanOverSeveralChunks) {
  gpu::Context& ctx = testing_support::test_context();
  const uint32_t wg = plan(ctx, {4, 2, 64, 1, 1, GetParam()}).wg;
  run_case({4, 2, 64, 2 * wg + 7, {2 * wg + 6}, {.tiers = {}}}, GetParam());
  const Options o;
  const uint32_t swg = plan(ctx, {4, 2, 64, 1, 1, GetParam()}, o.tier_plan(o.tiers.back())).wg;
  ASSERT_GT(2 * swg + 6, o.tiers[o.tiers.size() - 2].positions);
  run_case({4, 2, 64, 2 * swg + 7, {2 * swg + 6}, {}}, GetParam());  // the last tier's plan, over chunks
}

// Tiers and the plan beyond them in one attention: the step's visible
// positions pick the first tier that covers them (one head a workgroup of 16
// invocations up to 40 positions, of 32 up to 100), else the plan (both heads
// of a kv head, 64 invocations); each matches the twin.
TEST_P(AttentionKernel, TiersSwitchByPosition) {
  gpu::Context& ctx = testing_support::test_context();
  const Options o{.max_wg = 64,
                  .max_heads = 8,
                  .tiers = {{.positions = 40, .max_wg = 16, .v_loads = 3}, {.positions = 100, .max_wg = 32}}};
  const uint64_t cache = 300 * 2 * 64 * (GetParam() == Format::F16 ? 2 : 4);
  const gpu::Buffer q = ctx.create_buffer(4 * 64 * 4, gpu::kStorage, "q"), k = ctx.create_buffer(cache, gpu::kStorage, "k"),
                    v = ctx.create_buffer(cache, gpu::kStorage, "v"), pos = ctx.create_buffer(4, gpu::kStorage, "pos"),
                    out = ctx.create_buffer(4 * 64 * 4, gpu::kStorage, "out");
  const Attention att(ctx, {4, 2, 64, 300, 1, GetParam()}, {&q, &k, &v, &pos, &out}, o);
  for (const auto& [visible, wg, heads] : {std::tuple{40u, 16u, 1u}, {41u, 32u, 1u}, {100u, 32u, 1u}, {101u, 64u, 2u}}) {
    EXPECT_EQ(att.spec(visible).wg, wg) << visible;
    EXPECT_EQ(att.spec(visible).tile_m, heads) << visible;
    EXPECT_EQ(att.spec(visible), plan_for(ctx, {4, 2, 64, 300, 1, GetParam()}, o, visible)) << visible;
  }
  EXPECT_EQ(att.spec(40).rpl, 3u);
  run_case({4, 2, 64, 300, {39, 3}, o}, GetParam());
  run_case({4, 2, 64, 300, {99, 40}, o}, GetParam());
  run_case({4, 2, 64, 300, {100, 299}, o}, GetParam());
  try {
    plan_for(ctx, {4, 2, 64, 300, 1, GetParam()}, {.tiers = {{.positions = 100}, {.positions = 40}}}, 10);
    ADD_FAILURE() << "no error for descending tiers";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ascending"), std::string::npos) << e.what();
  }
}

// The loads in flight (k quads, V positions) change no sum's order: each
// combination matches the twin, in one chunk and over several, with V
// groups of fewer positions than are loaded at once. For one k_quads, every
// v_loads gives the same output bit for bit (across k_quads NVIDIA's
// compiler may round the scores differently, so there only the twin).
TEST_P(AttentionKernel, LoadsInFlightMatchTwin) {
  gpu::Context& ctx = testing_support::test_context();
  for (const uint32_t kq : {1u, 4u, 32u}) {
    std::vector<float> chunked, single;
    for (const uint32_t vl : {1u, 3u, 4u, 16u}) {
      Options o{.max_wg = 32, .k_quads = kq, .v_loads = vl, .tiers = {}};
      const KernelSpec sp = plan(ctx, {4, 2, 64, 90, 1, GetParam()}, o);
      EXPECT_EQ(sp.unroll, std::min(kq, 16u));
      EXPECT_EQ(sp.rpl, vl);
      const auto a = run_case({4, 2, 64, 90, {89, 20, 2}, o}, GetParam());  // 3 chunks; the last holds 26 of 32
      o.max_wg = 128;
      const auto b = run_case({4, 2, 64, 90, {40, 3}, o}, GetParam());  // one chunk: V groups of 0 to 6 positions
      if (chunked.empty()) chunked = a, single = b;
      EXPECT_EQ(0, std::memcmp(a.data(), chunked.data(), a.size() * 4)) << "k_quads " << kq << " v_loads " << vl;
      EXPECT_EQ(0, std::memcmp(b.data(), single.data(), b.size() * 4)) << "k_quads " << kq << " v_loads " << vl;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kv, AttentionKernel, ::testing::Values(Format::F32, Format::F16),
                         [](const auto& info) { return std::string(traits(info.param).name); });

TEST(AttentionPlan, FitsTheLimits) {
  gpu::Context& ctx = testing_support::test_context();
  const auto& lim = ctx.limits();
  for (uint32_t hd : {64u, 128u, 256u}) {
    const KernelSpec s = plan(ctx, {32, 4, hd, 4096, 1, Format::F16});
    EXPECT_LE(s.wg, lim.maxComputeInvocationsPerWorkgroup);
    EXPECT_LE(shared_bytes(s.tile_m, hd, s.tile_n, s.wg), lim.maxComputeWorkgroupStorageSize);
    EXPECT_EQ(8 % s.tile_m, 0u);
    EXPECT_EQ(s.tile_n % s.wg, 0u);
    EXPECT_EQ(chunks(s), (4096 + s.tile_n - 1) / s.tile_n);
  }
}

TEST(AttentionPlan, BadShapesNameTheProblem) {
  gpu::Context& ctx = testing_support::test_context();
  auto expect = [&](const Shape& s, const char* needle) {
    try {
      plan(ctx, s);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect({6, 4, 64, 16}, "multiple of n_kv_head");
  expect({4, 2, 62, 16}, "head_dim 62");
  expect({4, 2, 64, 16, 1, Format::Q8_0}, "not supported");
  expect({4, 2, 64, 16, 1, Format::F32, 0, 100}, "stride 100");
}

// Every case of the blockq.Attention contract passes natively (under this
// binary's limits profile), and each exported Program, replayed natively,
// gives the twin's output.
TEST(AttentionContract, EveryTestCasePassesAndReplays) {
  register_kernels();
  testing_support::expect_contract_passes("blockq.Attention");
}

}  // namespace
}  // namespace blockq::attention
