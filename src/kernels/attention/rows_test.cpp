// Parity of the prompt attention kernel (rows.wgsl, and combine.wgsl over its
// chunks) with its twin (twin::attention_rows) and with float64, on random q
// and caches (f32 and f16): prompt passes from position 0 and further on,
// token counts that are not a multiple of the workgroup's tokens, GQA groups
// of 1 to 8, head_dim 32 to 256, q inside fused QKV rows, a padding token,
// one chunk and several; outputs poisoned first. Also the plan's limits and
// the choice between it and the per-token kernel.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/attention/attention.hpp"
#include "kernels/attention/test_inputs.hpp"
#include "kernels/attention/twin.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

namespace blockq::attention {
namespace {

using testing_support::first_poisoned;
using testing_support::max_rel_err;

constexpr uint32_t kPad = 0xffffffffu;

struct Case {
  uint32_t n_head, n_kv, hd, n_ctx;
  std::vector<uint32_t> pos;  // one per token; kPad: padding
  RowsOptions ro = {.min_rows = 1};
  bool fused_q = false;  // q at offset 0 of rows [q | k | v]
};

// `m` tokens at positions p0, p0 + 1, ... (a prompt pass).
std::vector<uint32_t> pass(uint32_t p0, uint32_t m) {
  std::vector<uint32_t> p(m);
  for (uint32_t i = 0; i < m; ++i) p[i] = p0 + i;
  return p;
}

// Runs the case through Attention (which must pick the prompt kernel, or
// the per-token kernel where `op` says so), checks it against that kernel's
// twin and float64, and returns the plan it ran.
KernelSpec run_case(const Case& c, Format kv, Op op = Op::AttentionRows) {
  gpu::Context& ctx = testing_support::test_context();
  const uint32_t m = uint32_t(c.pos.size());
  const uint32_t nq = c.n_head * c.hd, nkv = c.n_kv * c.hd;
  Shape s{c.n_head, c.n_kv, c.hd, c.n_ctx, m, kv};
  if (c.fused_q) s.q_stride = nq + 2 * nkv;
  const testing::Inputs in = testing::make_inputs(ctx, s, c.pos, 51);
  const auto& qrows = in.q;
  const auto &k = in.k, &v = in.v;
  const Options o{.rows = c.ro};
  const Attention att(ctx, s, in.args(), o);
  const uint32_t visible = in.visible;
  const KernelSpec sp = att.spec(visible);
  EXPECT_EQ(sp.op, op);
  EXPECT_EQ(sp, plan_for(ctx, s, o, visible));
  if (op == Op::AttentionRows) {
    EXPECT_EQ(sp, plan_rows(ctx, s, c.ro));
  }
  gpu::Recorder r(ctx);
  att.record(r, visible);
  r.submit();
  const auto got = ctx.download<float>(in.out);
  EXPECT_EQ(first_poisoned(got), -1) << "an output was never written";
  const uint32_t dispatched = dispatched_chunks(sp, visible);
  double err_twin = 0, err_ref = 0;
  for (uint32_t t = 0; t < m; ++t) {
    const uint32_t n = c.pos[t] == kPad ? 0 : std::min(c.pos[t] + 1, c.n_ctx);
    const std::vector<float> qt(qrows.begin() + size_t(t) * s.q_row(), qrows.begin() + size_t(t) * s.q_row() + nq);
    std::vector<float> want(nq);
    std::vector<double> ref(nq);
    const twin::AttentionShape ts{c.n_head, c.n_kv, c.hd, n};
    if (op == Op::AttentionRows)
      twin::attention_rows(qt, k, v, want, ts, {sp.reg_n, rows_lanes(sp), sp.tile_n, dispatched});
    else
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
  const std::string plan =
      op == Op::AttentionRows
          ? fmt::format("{} tokens x {} heads a workgroup, {} keys a tile", sp.reg_m, sp.tile_m, sp.reg_n)
          : fmt::format("the per-token kernel, {} heads a workgroup", sp.tile_m);
  const std::string what = fmt::format("{} {}/{} heads hd {} ctx {}, {} tokens seeing up to {}: {}, wg {}, {} chunk(s) of {}",
                                       traits(kv).name, c.n_head, c.n_kv, c.hd, c.n_ctx, m, visible, plan, sp.wg,
                                       dispatched, sp.tile_n);
  fmt::print("{}: max rel err vs twin {:.3g}, vs float64 {:.3g}\n", what, err_twin, err_ref);
  EXPECT_LT(err_twin, 2e-6) << what;  // expf and FMA contraction may differ by ulps
  EXPECT_LT(err_ref, 2e-5) << what;
  return sp;
}

class AttentionRows : public ::testing::TestWithParam<Format> {};

TEST_P(AttentionRows, PromptPassesMatchTwin) {
  run_case({4, 2, 64, 48, pass(0, 19)}, GetParam());              // from position 0; 19 tokens, tiles of 8
  run_case({4, 2, 64, 120, pass(70, 37)}, GetParam());            // a later pass: 70 positions cached before it
  run_case({6, 2, 32, 80, pass(3, 21)}, GetParam());              // GQA 3
  run_case({8, 1, 128, 90, pass(10, 9)}, GetParam());             // GQA 8, head_dim 128
  run_case({3, 3, 32, 70, pass(0, 33)}, GetParam());              // no GQA
  run_case({2, 1, 256, 40, pass(5, 9)}, GetParam());              // head_dim 256: fewer rows a workgroup
  run_case({4, 2, 32, 64, pass(30, 17), {.min_rows = 1}, true}, GetParam());  // q in fused QKV rows
}

// Small tiles (workgroups of 16, 4 keys a tile, 3 tokens), ragged token
// tiles, a padding token in the middle and a repeated position.
TEST_P(AttentionRows, SmallTilesAndPadding) {
  std::vector<uint32_t> p = pass(5, 11);
  p[4] = kPad;
  p[7] = p[6];
  run_case({4, 2, 64, 40, p, {.min_rows = 1, .max_wg = 16, .rows = 6, .keys = 4}}, GetParam());
  const KernelSpec sp = run_case({6, 3, 32, 40, pass(0, 7), {.min_rows = 1, .max_wg = 32, .rows = 5, .keys = 8}},
                                 GetParam());
  EXPECT_EQ(sp.tile_m, 2u);  // 5 rows: both heads of a group, 2 tokens
  EXPECT_EQ(sp.reg_m, 2u);
}

// Chunks of positions, merged by combine.wgsl: a small grid over a long
// cache is cut (min_groups), and a pass whose tokens see different chunk
// counts, one of them none of the last chunk.
TEST_P(AttentionRows, ChunksMatchTwin) {
  const RowsOptions ro{.min_rows = 1, .max_wg = 32, .rows = 8, .keys = 8, .min_groups = 64, .min_chunk = 16};
  const KernelSpec a = run_case({4, 2, 64, 200, pass(150, 20), ro}, GetParam());
  EXPECT_GT(chunks(a), 1u);
  EXPECT_EQ(a.tile_n % a.reg_n, 0u);
  RowsOptions rb = ro;
  rb.min_groups = 400;
  const KernelSpec b = run_case({4, 2, 64, 200, pass(0, 180), rb}, GetParam());  // early tokens see the first chunk only
  EXPECT_GT(dispatched_chunks(b, 180), 1u);
  std::vector<uint32_t> p = pass(100, 12);
  p.back() = kPad;
  run_case({8, 2, 32, 128, p, ro}, GetParam());
}

// Steps of fewer tokens than min_rows, from min_rows_far on, run the prompt
// kernel where they see more than far_positions positions and the
// per-token plans elsewhere, in one attention; both match their twins.
TEST_P(AttentionRows, FarStepsOfFewTokens) {
  const RowsOptions ro{.min_rows = 64, .min_rows_far = 8, .far_positions = 100};
  run_case({4, 2, 64, 300, pass(80, 20), ro}, GetParam(), Op::Attention);        // sees 100: per-token
  run_case({4, 2, 64, 300, pass(81, 20), ro}, GetParam(), Op::AttentionRows);    // sees 101
  run_case({4, 2, 64, 300, pass(200, 7), ro}, GetParam(), Op::Attention);        // 7 tokens: per-token
  run_case({4, 2, 64, 100, pass(80, 20), ro}, GetParam(), Op::Attention);        // a cache of 100: never
}

INSTANTIATE_TEST_SUITE_P(Kv, AttentionRows, ::testing::Values(Format::F32, Format::F16),
                         [](const auto& info) { return std::string(traits(info.param).name); });

// The plan fits the adapter's limits (workgroup memory, invocations), keeps
// at most 8 value quads a lane, cuts chunks only where the grid is small,
// and Attention takes it from min_rows tokens on.
TEST(AttentionRowsPlan, FitsTheLimitsAndIsPickedByTokens) {
  gpu::Context& ctx = testing_support::test_context();
  const auto& lim = ctx.limits();
  for (uint32_t hd : {64u, 128u, 256u})
    for (uint32_t m : {16u, 512u}) {
      const KernelSpec s = plan_rows(ctx, {32, 8, hd, 4096, m, Format::F16});
      const std::string what = fmt::format("hd {} m {}: {}", hd, m, s.key());
      EXPECT_LE(s.wg, lim.maxComputeInvocationsPerWorkgroup) << what;
      EXPECT_LE(rows_shared_bytes(s.reg_m * s.tile_m, s.reg_n, hd, s.wg), lim.maxComputeWorkgroupStorageSize) << what;
      EXPECT_EQ(4 % s.tile_m, 0u) << what;
      EXPECT_EQ(s.reg_n % 4, 0u) << what;
      EXPECT_LE(s.reg_m * s.tile_m * rows_lanes(s), s.wg) << what;
      EXPECT_EQ(s.tile_n % s.reg_n, 0u) << what;
      EXPECT_LE((s.reg_m * s.tile_m * hd / 4 + s.wg - 1) / s.wg, 8u) << what;
      EXPECT_LE(scratch_bytes(s), lim.maxStorageBufferBindingSize) << what;
      const uint32_t groups = 32 / s.tile_m * ((m + s.reg_m - 1) / s.reg_m);
      if (groups >= RowsOptions{}.min_groups) {
        EXPECT_EQ(chunks(s), 1u) << what;
      }
    }
  const Shape few{4, 2, 64, 300, 63, Format::F32}, many{4, 2, 64, 300, 64, Format::F32};
  EXPECT_FALSE(uses_rows(few, {}));
  EXPECT_TRUE(uses_rows(many, {}));
  EXPECT_FALSE(uses_rows(many, {.rows = {.min_rows = 0}}));
  EXPECT_FALSE(uses_rows_far(few, {}));  // 300 positions: not beyond far_positions
  const Shape far{4, 2, 64, 2000, 16, Format::F32};
  EXPECT_TRUE(uses_rows_far(far, {}));
  EXPECT_EQ(plan_for(ctx, far, {}, 512).op, Op::Attention);
  EXPECT_EQ(plan_for(ctx, far, {}, 513).op, Op::AttentionRows);
  EXPECT_GE(scratch_bytes(ctx, far, {}), scratch_bytes(plan_rows(ctx, far, {})));
  EXPECT_EQ(plan_for(ctx, few, {}, 300).op, Op::Attention);
  EXPECT_EQ(plan_for(ctx, many, {}, 300).op, Op::AttentionRows);
  EXPECT_EQ(scratch_bytes(ctx, many, {}), scratch_bytes(plan_rows(ctx, many, {})));
  // A long prompt pass keeps few partials: llama-3-8b's heads, 512 tokens
  // over 8192 positions need no chunks (512 workgroups), where the per-token
  // plans keep [512, 32, chunks, 130] f32 of them (545 MB; under 128 MiB
  // bindings they cannot be planned at all).
  const Shape pass512{32, 8, 128, 8192, 512, Format::F16};
  const uint64_t rows_b = scratch_bytes(ctx, pass512, {});
  EXPECT_EQ(chunks(plan_rows(ctx, pass512)), 1u);
  try {
    const uint64_t tok_b = scratch_bytes(ctx, pass512, {.rows = {.min_rows = 0}});
    fmt::print("8B heads, 512 tokens, 8192 positions: partials {} bytes (prompt kernel), {} (per-token plans)\n",
               rows_b, tok_b);
    EXPECT_LT(rows_b * 1000, tok_b);
  } catch (const Error& e) {
    fmt::print("8B heads, 512 tokens, 8192 positions: partials {} bytes (prompt kernel); per-token plans: {}\n",
               rows_b, e.what());
  }
  try {
    plan_rows(ctx, {4, 2, 62, 16, 20});
    ADD_FAILURE() << "no error for head_dim 62";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim 62"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace blockq::attention
