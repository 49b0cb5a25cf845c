// The int8 gemm (plan_int8, features.dot4) against its CPU twin and float64:
// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K x every hook x m in {1,
// 7, 64, 100} x ragged n {37, 70}, k of one and two blocks (K-quants:
// super-blocks); then on five of them the tilings of each m class (4x4 and
// 8x8 register blocks), steps of 1, 2 and 4 blocks, split-k (forced, and the
// default's for grids of few tiles), the pipelined kernel, a weight split
// across bindings by rows; random data, poisoned outputs. Bounds: 1e-4 against the twin (the
// integer sums are exact; the GPU may contract the f32 steps into FMAs),
// 2e-2 against float64 (x quantized to 8 bits, as ggml's q8 activations).
// matmul() takes the int8 gemm, and below the crossover the int8 matvec, only
// where asked and where the format allows.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "kernels/gemm/matmul.hpp"
#include "kernels/gemm/test_case.hpp"
#include "kernels/gemm/tune.hpp"
#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/twin.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::gemm;
using namespace blockq::gemm::test_cases;

namespace {

bool has_dot4() { return ts::test_context().features().packed_dot4; }

constexpr double kTwinBound = 1e-4, kRefBound = 2e-2;

bool super(Format f) { return traits(f).block_elems == 256; }  // K-quants: k in super-blocks

// The shape tests' formats: one of each way the generator treats a format
// (no offset, an offset, a min with the side's second section, a min in the
// super-block, Q6_K's halves, Q2_K's halves with a min each); the parity
// suite above takes every format.
const Format kShapeFormats[] = {Format::Q8_0, Format::Q4_0, Format::Q5_1, Format::Q4_K, Format::Q6_K, Format::Q2_K};

class GemmInt8 : public ::testing::TestWithParam<std::tuple<Format, std::string>> {};

TEST_P(GemmInt8, MatchesTwinAndFloat64) {
  if (!has_dot4()) GTEST_SKIP() << "the instance has no packed 4x8 integer dot product";
  const auto [f, hname] = GetParam();
  uint32_t seed = 700;
  const Tiling small = default_tiling_int8(0);
  for (uint32_t m : {1u, 7u, 64u, 100u})
    for (uint32_t n : {37u, 70u}) {
      std::optional<Tiling> t = small;
      if (m == 100 && hname == "store") t.reset();  // the default of its class
      if (m == 64) t = Tiling{32, 64, 4, 4, 32};    // the classic kernel
      const uint32_t k = (m == 7 ? 1 : 2) * (super(f) ? 256 : 32);
      const Case c{f, hook(hname), n, k, m, t, 0, 256, true};
      const auto e = run_case(c, seed++);
      EXPECT_LT(e.vs_twin, kTwinBound) << traits(f).name << " " << hname << " m=" << m << " n=" << n;
      EXPECT_LT(e.vs_ref, kRefBound) << traits(f).name << " " << hname << " m=" << m << " n=" << n;
    }
}

INSTANTIATE_TEST_SUITE_P(Q8Q4AllHooks, GemmInt8,
                         ::testing::Combine(::testing::ValuesIn(kInt8Formats),
                                            ::testing::Values("store", "acc", "silu")),
                         [](const auto& i) {
                           return std::string(traits(std::get<0>(i.param)).name) + "_" + std::get<1>(i.param);
                         });

// The 8x8 register blocks of the large-m default (edge and interior tiles),
// and a weight in chunks of 63 rows (params.row0 and rows per binding).
TEST(GemmInt8Shapes, LargeTilesAndSplitWeights) {
  if (!has_dot4()) GTEST_SKIP() << "the instance has no packed 4x8 integer dot product";
  const Tiling big{128, 128, 8, 8, 32};  // the classic kernel's 8x8 blocks
  EXPECT_EQ(default_tiling_int8(3).reg_m, 8u);
  for (const Format f : kShapeFormats) {
    const uint32_t k = super(f) ? 256 : 96;
    auto e = run_case({f, {}, 150, k, 130, big, 0, 256, true}, 800);
    EXPECT_LT(e.vs_twin, kTwinBound) << traits(f).name << " " << label(big);
    EXPECT_LT(e.vs_ref, kRefBound) << traits(f).name;
    e = run_case({f, hook("silu"), 300, k == 96 ? 64 : k, 40, {}, k == 96 ? 4096u : 16384u, 1, true}, 801);
    EXPECT_LT(e.vs_twin, kTwinBound) << traits(f).name << " in chunks";
    EXPECT_LT(e.vs_ref, kRefBound) << traits(f).name << " in chunks";
  }
}

// Steps of 2 and 4 blocks (tile_k 64, 128): k of 4 and 6 blocks (Q4_K: 16),
// ragged m and n, the gated pair; a step that does not divide k's blocks is
// halved until it does (k of 3 blocks: one block a step).
TEST(GemmInt8Shapes, StepsOfSeveralBlocks) {
  if (!has_dot4()) GTEST_SKIP() << "the instance has no packed 4x8 integer dot product";
  const Limits lim = limits_of(ts::test_context());
  uint32_t seed = 830;
  for (const Format f : kShapeFormats)
    for (const uint32_t tk : {64u, 128u})
      for (const uint32_t blocks : {3u, 4u, 6u}) {
        const uint32_t k = super(f) ? 512 : 32 * blocks;
        if (super(f) && blocks != 4) continue;
        const Tiling t{32, 64, 4, 4, tk};
        const KernelSpec s = plan_int8(lim, kind_of(f), 70, k, 45, hook("silu"), t);
        const uint32_t kb = k / 32;
        // the largest step up to tk that divides k's blocks and fits the
        // workgroup storage (the low-end profile's 16 KiB halves tk 128)
        EXPECT_TRUE(s.tile >= 32 && s.tile <= tk && kb % (s.tile / 32) == 0) << traits(f).name << " k=" << k;
        EXPECT_LE(shared_bytes(s), lim.shared);
        if (s.tile < tk && kb % (2 * s.tile / 32) == 0) {
          KernelSpec twice = s;
          twice.tile *= 2;
          EXPECT_GT(shared_bytes(twice), lim.shared) << traits(f).name << " k=" << k << " step " << s.tile;
        }
        const auto e = run_case({f, hook("silu"), 70, k, 45, t, 0, 256, true}, seed++);
        EXPECT_LT(e.vs_twin, kTwinBound) << traits(f).name << " tk" << tk << " k=" << k;
        EXPECT_LT(e.vs_ref, kRefBound) << traits(f).name << " tk" << tk << " k=" << k;
      }
}

// Split-k: slices of whole steps (k of 10 blocks in steps of 2: 2, 3 and 4
// slices of 3, 2 and 2 steps, the last of 4 empty; Q4_K 8 blocks: the last of
// 3 empty), every hook (Acc and SiLU-gate applied by
// split_sum), ragged m and n.
TEST(GemmInt8Shapes, SplitK) {
  if (!has_dot4()) GTEST_SKIP() << "the instance has no packed 4x8 integer dot product";
  uint32_t seed = 860;
  for (const Format f : kShapeFormats)
    for (const uint32_t splits : {2u, 3u, 4u})
      for (const char* h : {"store", "acc", "silu"}) {
        const uint32_t k = super(f) ? 256 : 320;
        const Tiling t{32, 64, 4, 4, 64, kClassic, splits};
        const KernelSpec s = plan_int8(limits_of(ts::test_context()), kind_of(f), 70, k, 45, hook(h), t);
        EXPECT_EQ(s.splits, splits) << traits(f).name;
        const auto e = run_case({f, hook(h), 70, k, 45, t, 0, 256, true}, seed++);
        EXPECT_LT(e.vs_twin, kTwinBound) << traits(f).name << " sk" << splits << " " << h;
        EXPECT_LT(e.vs_ref, kRefBound) << traits(f).name << " sk" << splits << " " << h;
      }
}

// Without a tiling, grids of few tiles split k (default_splits): slices
// double while the grid has fewer than kSplitBelowTiles workgroups and each
// slice keeps kMinSliceK elements; the partials must fit a binding. The
// default's split runs against the twin (8 slices of 256 elements, every
// hook).
TEST(GemmInt8Shapes, DefaultSplitsGridsOfFewTiles) {
  Limits lim;  // 64x64 tiles of two blocks a step fit
  lim.invocations = 256;
  lim.shared = 32768;
  lim.max_binding = 4ull << 30;
  const WeightKind q4 = kind_of(Format::Q4_0);
  EXPECT_EQ(plan_int8(lim, q4, 4096, 14336, 128).splits, 4u);   // 128 tiles: 512 workgroups
  EXPECT_EQ(plan_int8(lim, q4, 14336, 4096, 128).splits, 2u);   // 448 tiles
  EXPECT_EQ(plan_int8(lim, q4, 2048, 8192, 128).splits, 8u);    // 64 tiles
  EXPECT_EQ(plan_int8(lim, q4, 64, 512, 8).splits, 2u);         // one tile, 2 slices of 256
  EXPECT_EQ(plan_int8(lim, q4, 64, 256, 8).splits, 1u);         // k of one slice
  EXPECT_EQ(plan_int8(lim, q4, 4096, 14336, 2048).splits, 1u);  // 512 tiles of 128x128
  EXPECT_EQ(plan_int8(lim, q4, 4096, 14336, 128, {}, default_tiling_int8(1)).splits, 1u);  // a tiling as given
  Limits small = lim;
  small.max_binding = 4 * 128 * 4096 * 3;  // 3 slices' partials: none
  EXPECT_EQ(plan_int8(small, q4, 4096, 14336, 128).splits, 1u);
  EXPECT_EQ(default_splits(100, 64, 64, 2, kMinSliceK), 2u);    // capped by `most`
  EXPECT_EQ(default_splits(100, 1, 4096, 16, kMinSliceK), 1u);  // one step: no slices
  if (!has_dot4()) GTEST_SKIP() << "the instance has no packed 4x8 integer dot product";
  const Limits dev = limits_of(ts::test_context());
  uint32_t seed = 880;
  for (const Format f : {Format::Q4_0, Format::Q4_K})
    for (const char* h : {"store", "acc", "silu"}) {
      const KernelSpec s = plan_int8(dev, kind_of(f), 70, 2048, 45, hook(h));
      EXPECT_EQ(s.splits, 8u) << traits(f).name << " " << h;
      const auto e = run_case({f, hook(h), 70, 2048, 45, std::nullopt, 0, 256, true}, seed++);
      EXPECT_LT(e.vs_twin, kTwinBound) << traits(f).name << " " << h;
      EXPECT_LT(e.vs_ref, kRefBound) << traits(f).name << " " << h;
    }
}

// The pipelined kernel (two buffers, one barrier a step, interleaved
// register blocks): steps of 1 and 2 blocks, 4x4 and 8x8 blocks, split-k,
// every hook, edge and interior tiles.
TEST(GemmInt8Shapes, Pipelined) {
  if (!has_dot4()) GTEST_SKIP() << "the instance has no packed 4x8 integer dot product";
  const Limits lim = limits_of(ts::test_context());
  uint32_t seed = 900;
  for (const Format f : kShapeFormats)
    for (const Tiling& t : {Tiling{32, 64, 4, 4, 32, kPipelined}, Tiling{64, 64, 4, 4, 64, kPipelined, 2},
                            Tiling{128, 128, 8, 8, 32, kPipelined}})
      for (const char* h : {"store", "acc", "silu"}) {
        const uint32_t k = super(f) ? 512 : 160, m = t.tile_m == 128 ? 130 : 45, n = t.tile_n == 128 ? 150 : 70;
        const KernelSpec s = plan_int8(lim, kind_of(f), n, k, m, hook(h), t);
        EXPECT_EQ(s.variant, uint32_t{kPipelined});
        EXPECT_LE(shared_bytes(s), lim.shared);
        const auto e = run_case({f, hook(h), n, k, m, t, 0, 256, true}, seed++);
        EXPECT_LT(e.vs_twin, kTwinBound) << traits(f).name << " " << label(t) << " " << h;
        EXPECT_LT(e.vs_ref, kRefBound) << traits(f).name << " " << label(t) << " " << h;
      }
}

// Formats, k and hooks the int8 gemm does not take are named errors; a tiling
// that cannot fit the limits is refused, one that can is shrunk to them.
TEST(GemmInt8Shapes, PlanChecksItsInput) {
  const Limits lim = limits_of(ts::test_context());
  auto err = [&](Format f, uint32_t k, Hooks h, std::optional<Tiling> t) -> std::string {
    try {
      plan_int8(lim, kind_of(f), 64, k, 8, h, t);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(err(Format::F16, 64, {}, {}).find("f16"), std::string::npos);
  EXPECT_NE(err(Format::Q8_0, 48, {}, {}).find("multiple of 32"), std::string::npos);
  EXPECT_NE(err(Format::Q4_K, 64, {}, {}).find("multiple of 256"), std::string::npos);
  Hooks rope;
  rope.epilogue = Epilogue::Rope;
  EXPECT_NE(err(Format::Q4_0, 64, rope, {}).find("epilogue"), std::string::npos);
  EXPECT_NE(err(Format::Q4_0, 64, {}, Tiling{32, 64, 2, 4, 32}).find("does not fit"), std::string::npos);
  EXPECT_NE(err(Format::Q4_0, 64, {}, Tiling{32, 64, 4, 4, 48}).find("does not fit"), std::string::npos);
  EXPECT_NE(err(Format::Q4_0, 64, {}, Tiling{32, 64, 4, 4, 256}).find("does not fit"), std::string::npos);
  EXPECT_NE(err(Format::Q4_0, 64, {}, Tiling{32, 64, 4, 4, 32, kClassic, kMaxSplits + 1}).find("does not fit"),
            std::string::npos);
  // split-k whose partials pass a binding at this m runs unsplit; splits
  // are cut to the steps k has
  Limits small = lim;
  small.max_binding = 4 * 64 * 8;  // one slice of m = 8 rows by n = 64
  EXPECT_EQ(plan_int8(small, kind_of(Format::Q4_0), 64, 256, 8, {}, Tiling{32, 64, 4, 4, 32, kClassic, 2}).splits, 1u);
  EXPECT_EQ(plan_int8(lim, kind_of(Format::Q4_0), 64, 64, 8, {}, Tiling{32, 64, 4, 4, 32, kClassic, 4}).splits, 2u);
  Limits tight = lim;
  tight.invocations = 64;
  tight.shared = 4096;
  const KernelSpec s = plan_int8(tight, kind_of(Format::Q4_0), 64, 64, 200, {}, default_tiling_int8(2));
  EXPECT_LE(s.wg, 64u);
  EXPECT_LE(shared_bytes(s), 4096u);
  EXPECT_TRUE(s.features.dot4);
  // the blocks a step shrink before the tile: 32x64 r4x4 fits 4096 bytes at
  // one block a step, not two
  tight.invocations = 256;
  const KernelSpec s2 = plan_int8(tight, kind_of(Format::Q4_0), 64, 128, 8, {}, Tiling{32, 64, 4, 4, 128});
  EXPECT_EQ(s2.tile, 32u);
  EXPECT_EQ(s2.tile_m, 32u);
  EXPECT_EQ(s2.tile_n, 64u);
  EXPECT_LE(shared_bytes(s2), 4096u);
}

// matmul() with `tuned` takes the int8 gemm's tuned tiling for the weight's
// shape and m class (here a cached one, so no tuning runs), and runs it.
TEST(GemmInt8Shapes, MatmulTakesTheTunedTiling) {
  auto& ctx = ts::test_context();
  if (!has_dot4()) GTEST_SKIP() << "the instance has no packed 4x8 integer dot product";
  char dir[] = "/tmp/blockq_i8_tune_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("BLOCKQ_CACHE_DIR", dir, 1);
  const uint32_t n = 70, k = 320, m = 45;  // m class 1
  const Tiling cached{32, 64, 4, 4, 64, kClassic, 2};
  ASSERT_NE(tiling_of(plan_int8(limits_of(ctx), kind_of(Format::Q4_0), n, k, m)), cached) << "not the default";
  cache_put(ctx, "tune", fmt::format("q4_0.n{}.k{}.c1.store.i8", n, k),
            R"({"tile_m": 32, "tile_n": 64, "reg_m": 4, "reg_n": 4, "tile_k": 64, "algo": 0, "splits": 2})");
  auto q = quantize(Format::Q4_0, ts::random_normal(size_t{n} * k, 840, 0.f, 0.5f));
  const matvec::Weights w = matvec::upload(ctx, matvec::HostWeight{kind_of(Format::Q4_0), n, k, q}, "tuned.w");
  std::vector<float> x = ts::random_normal(size_t{m} * k, 841, 0.f, 1.f);
  off_ties(x);
  auto xb = ctx.storage<float>(x, "tuned.x");
  auto yb = ctx.create_buffer(size_t{m} * n * 4, gpu::kStorage, "tuned.y");
  std::vector<float> poison(size_t{m} * n);
  ts::poison(poison);
  ctx.upload<float>(yb, poison);
  MatmulArgs a{&w, nullptr, &xb, &yb, m};
  a.crossover = 4;
  a.int8 = true;  // tuned: the default
  const Matmul mm = matmul(ctx, a);
  EXPECT_TRUE(mm.spec().features.dot4);
  EXPECT_EQ(tiling_of(mm.spec()), cached);
  gpu::Recorder rec(ctx);
  mm.record(rec);
  rec.submit();
  const auto y = ctx.download<float>(yb);
  EXPECT_EQ(ts::first_poisoned(y), -1);
  const matvec::HostWeight hw{kind_of(Format::Q4_0), n, k, q};
  const TwinInputs in{&hw, nullptr, x, {}, m};
  EXPECT_LT(ts::max_rel_err(y, twin(mm.spec(), in)), kTwinBound);
  unsetenv("BLOCKQ_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

// matmul(): the int8 gemm for Q4_0 above the crossover when asked (its own
// xq, or a shared scratch of xq_bytes), the f32 gemm for F16 or when not
// asked, matvec at or below the crossover.
TEST(GemmInt8Shapes, MatmulTakesItWhereAsked) {
  auto& ctx = ts::test_context();
  for (const Format f : {Format::Q4_0, Format::F16}) {
    const uint32_t n = 40, k = 64, m = 9;
    auto q = quantize(f, ts::random_normal(size_t{n} * k, 820, 0.f, 0.5f));
    const matvec::Weights w = matvec::upload(ctx, matvec::HostWeight{kind_of(f), n, k, q}, "i8.w");
    auto xb = ctx.storage<float>(ts::random_normal(size_t{m} * k, 821, 0.f, 1.f), "i8.x");
    auto yb = ctx.create_buffer(size_t{m} * n * 4, gpu::kStorage, "i8.y");
    MatmulArgs a;
    a.mv_a = &w;
    a.x = &xb;
    a.y = &yb;
    a.m = m;
    a.crossover = 4;
    a.tuned = false;
    EXPECT_FALSE(matmul(ctx, a).spec().features.dot4) << "int8 unasked";
    EXPECT_EQ(xq_bytes(ctx, a), 0u);
    a.int8 = true;
    const bool want = f == Format::Q4_0 && has_dot4();
    EXPECT_EQ(xq_bytes(ctx, a), want ? int8_x_bytes(m, k) : 0u);
    auto xq = ctx.create_buffer(std::max<uint64_t>(xq_bytes(ctx, a), 16), gpu::kStorage, "i8.xq");
    a.xq = &xq;
    const Matmul mm = matmul(ctx, a);
    EXPECT_EQ(mm.spec().features.dot4, want) << traits(f).name;
    EXPECT_EQ(mm.uses_gemm(), true);
    a.crossover = m;
    EXPECT_FALSE(matmul(ctx, a).uses_gemm()) << "matvec at the crossover";
    if (!want) continue;
    gpu::Recorder rec(ctx);
    mm.record(rec);
    rec.submit();
    const auto y = ctx.download<float>(yb);
    const matvec::HostWeight hw{kind_of(f), n, k, q};
    const std::vector<float> x = ctx.download<float>(xb);
    const TwinInputs in{&hw, nullptr, x, {}, m};
    EXPECT_LT(ts::max_rel_err(y, twin(mm.spec(), in)), kTwinBound);
  }
}

// matmul() at or below the crossover with mv_int8: the matvec with int8 x
// where the format has matvec's int8 path (Q4_0 and Q6_K here; not F16),
// its pre-quantized x in the shared xq where it has one (Q8_0 over k = 8192
// at m = 1); against the matvec twin of the spec it ran and float64, at m =
// 1, 5, 24 and 64 (token chunks).
TEST(GemmInt8Shapes, MatvecBelowTheCrossoverTakesInt8WhereAsked) {
  auto& ctx = ts::test_context();
  const struct {
    Format f;
    uint32_t k;
  } cases[] = {{Format::Q4_0, 96}, {Format::Q6_K, 256}, {Format::F16, 96}, {Format::Q8_0, 8192}};
  for (const auto [f, k] : cases)
    for (const uint32_t m : {1u, 5u, 24u, 64u}) {
      const uint32_t n = 37;
      auto q = quantize(f, ts::random_normal(size_t{n} * k, 830 + m, 0.f, 0.5f));
      const matvec::HostWeight hw{kind_of(f), n, k, q};
      const matvec::Weights w = matvec::upload(ctx, hw, "mvi8.w");
      std::vector<float> x = ts::random_normal(size_t{m} * k, 831 + m, 0.f, 1.f);
      off_ties(x);
      auto xb = ctx.storage<float>(x, "mvi8.x");
      auto yb = ctx.create_buffer(size_t{m} * n * 4, gpu::kStorage, "mvi8.y");
      MatmulArgs a;
      a.mv_a = &w;
      a.x = &xb;
      a.y = &yb;
      a.m = m;
      a.crossover = 64;
      EXPECT_FALSE(matmul(ctx, a).spec().features.dot4) << "int8 unasked";
      a.mv_int8 = true;
      const bool want = f != Format::F16 && has_dot4();
      auto xq = ctx.create_buffer(std::max<uint64_t>(xq_bytes(ctx, a), 16), gpu::kStorage, "mvi8.xq");
      a.xq = &xq;
      const Matmul mm = matmul(ctx, a);
      const std::string label = fmt::format("{} m={}", traits(f).name, m);
      EXPECT_FALSE(mm.uses_gemm()) << label;
      EXPECT_EQ(mm.spec().features.dot4, want) << label;
      EXPECT_EQ(xq_bytes(ctx, a) > 0, want && matvec::x_prequantized(mm.spec())) << label;
      const std::vector<float> poison(size_t{m} * n, std::nanf(""));
      ctx.upload(yb, std::span<const float>(poison));
      gpu::Recorder rec(ctx);
      mm.record(rec);
      rec.submit();
      const auto y = ctx.download<float>(yb);
      const matvec::TwinInputs in{&hw, nullptr, x};
      const double vs_twin = ts::max_rel_err(y, matvec::twin(mm.spec(), in));
      const double vs_ref = ts::max_rel_err(y, matvec::reference(mm.spec(), in));
      std::printf("  matvec %-50s vs twin %.2e vs f64 %.2e\n", mm.spec().key().c_str(), vs_twin, vs_ref);
      EXPECT_LT(vs_twin, kTwinBound) << label;
      EXPECT_LT(vs_ref, want ? kRefBound : 1e-4) << label;
    }
}

}  // namespace
