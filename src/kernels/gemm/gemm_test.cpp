// Gemm parity tests: every format x hook (store, acc, silu gate) x m in {1, 7,
// 64, 100} x ragged n {37, 70}, k a small block multiple, on the test adapter
// (CTest runs it as is and under the low-end profile), random data, poisoned
// outputs. Each case prints its max relative error against float64 and the
// CPU twin. Bounds: 1e-4 vs the twin, 5e-4 vs float64 (f32 accumulation over
// k <= 512, GPU FMA contraction). Weights are uploaded once by
// matvec::upload; the gemm reads that layout, and matmul() runs either kernel
// on the same upload.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "kernels/gemm/matmul.hpp"
#include "kernels/gemm/op.hpp"
#include "kernels/gemm/test_case.hpp"
#include "kernels/gemm/twin.hpp"
#include "kernels/gemm/tune.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::gemm;
using blockq::testing_support::test_context;
namespace ts = blockq::testing_support;

using namespace blockq::gemm::test_cases;

namespace {

class GemmParity : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(GemmParity, MatchesTwinAndFloat64) {
  const Format f = kFormats[std::get<0>(GetParam())];
  const std::string hname = std::get<1>(GetParam());
  uint32_t seed = 100;
  // One pipeline per (format, hook) keeps SwiftShader's compile time down: the
  // tiling of m <= 32 throughout, and for the store hook m = 100 also on its own.
  const Tiling small = default_tiling(0);
  for (uint32_t m : {1u, 7u, 64u, 100u})
    for (uint32_t n : {37u, 70u}) {
      std::optional<Tiling> t = small;
      if (m == 100 && hname == "store") t.reset();
      auto e = run_case({f, hook(hname), n, small_k(f), m, t}, seed++);
      EXPECT_LT(e.vs_twin, 1e-4) << traits(f).name << " " << hname << " m=" << m << " n=" << n;
      EXPECT_LT(e.vs_ref, 5e-4) << traits(f).name << " " << hname << " m=" << m << " n=" << n;
    }
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<int, std::string>>& info) {
  return std::string(traits(kFormats[std::get<0>(info.param)]).name) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(AllFormatsAllHooks, GemmParity,
                         ::testing::Combine(::testing::Range(0, kNumFormats), ::testing::Values("store", "acc", "silu")),
                         param_name);

// The pipelined kernel on every format: a tiling whose x staging leaves a
// partial slot (32 x 8 / 4 = 64 x vec4s for 128 invocations), several k steps,
// interior and edge workgroups (m up to 100 in tiles of 32, n 37 or 70 in
// tiles of 64); the k loop written out for the acc and SiLU-gate hooks.
class GemmPipelined : public ::testing::TestWithParam<int> {};

TEST_P(GemmPipelined, MatchesTwinAndFloat64) {
  const Format f = kFormats[GetParam()];
  const Tiling pipe{32, 64, 4, 4, 8, kPipelined}, unrolled{32, 64, 4, 4, 8, kPipelinedUnrolled};
  uint32_t seed = 300;
  std::vector<Case> cases;
  for (uint32_t m : {1u, 7u, 64u, 100u})
    for (uint32_t n : {37u, 70u}) cases.push_back({f, {}, n, small_k(f), m, pipe});
  for (const char* h : {"acc", "silu"})
    for (uint32_t m : {7u, 100u}) cases.push_back({f, hook(h), 70, small_k(f), m, unrolled});
  for (const auto& c : cases) {
    auto e = run_case(c, seed++);
    EXPECT_EQ(plan(test_context(), kind_of(f), c.n, c.k, c.m, c.hooks, c.tiling).variant, c.tiling->algo);
    EXPECT_LT(e.vs_twin, 1e-4) << traits(f).name << " m=" << c.m << " n=" << c.n;
    EXPECT_LT(e.vs_ref, 5e-4) << traits(f).name << " m=" << c.m << " n=" << c.n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GemmPipelined, ::testing::Range(0, kNumFormats),
                         [](const ::testing::TestParamInfo<int>& i) { return std::string(traits(kFormats[i.param]).name); });

// The paired step loop (constant buffer halves) and split-k on every format:
// an odd number of steps per slice (the loop's half step), slices of unequal
// length (k = 64 in steps of 8: 3 slices of 3, 3, 2 steps; 5 slices of 2, 2,
// 2, 2 and an empty one, whose partial is 0), every hook, interior and edge
// workgroups, and a poisoned y that only split_sum writes.
class GemmSplitK : public ::testing::TestWithParam<int> {};

TEST_P(GemmSplitK, MatchesTwinAndFloat64) {
  const Format f = kFormats[GetParam()];
  const uint32_t k = small_k(f);
  const Tiling pair{32, 64, 4, 4, 8, kPipelinedPaired}, pair3{32, 64, 4, 4, 8, kPipelinedPaired, 3},
      pipe5{32, 64, 4, 4, 8, kPipelined, 5}, unrolled2{32, 64, 4, 4, 8, kPipelinedUnrolled, 2};
  uint32_t seed = 400;
  std::vector<Case> cases;
  for (uint32_t m : {7u, 100u}) cases.push_back({f, {}, 70, k, m, pair});
  for (const char* h : {"store", "acc", "silu"}) cases.push_back({f, hook(h), 70, k, 100, pair3});
  cases.push_back({f, {}, 37, k, 7, pipe5});
  cases.push_back({f, hook("silu"), 37, k, 64, unrolled2});
  for (const auto& c : cases) {
    const KernelSpec s = plan(test_context(), kind_of(f), c.n, c.k, c.m, c.hooks, c.tiling);
    EXPECT_EQ(s.variant, c.tiling->algo);
    EXPECT_EQ(s.splits, std::min(c.tiling->splits, c.k / c.tiling->tile_k)) << s.key();
    auto e = run_case(c, seed++);
    EXPECT_LT(e.vs_twin, 1e-4) << traits(f).name << " " << label(*c.tiling) << " m=" << c.m << " n=" << c.n;
    EXPECT_LT(e.vs_ref, 5e-4) << traits(f).name << " " << label(*c.tiling) << " m=" << c.m << " n=" << c.n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, GemmSplitK, ::testing::Range(0, kNumFormats),
                         [](const ::testing::TestParamInfo<int>& i) { return std::string(traits(kFormats[i.param]).name); });

TEST(Gemm, SplitKPartialsPastTheBindingLimitAreAClearError) {
  // A tiny binding limit can't be set here, so check the arithmetic the op
  // uses and that a shared scratch too small is refused by name.
  auto& ctx = test_context();
  EXPECT_EQ(split_sum::partial_bytes(4, hook("silu"), 10, 70), uint64_t{4} * 2 * 10 * 70 * 4);
  auto q = quantize(Format::Q8_0, ts::random_normal(size_t{70} * 64, 950, 0.f, 0.5f));
  const matvec::Weights w = matvec::upload(ctx, matvec::HostWeight{kind_of(Format::Q8_0), 70, 64, q}, "sk.w");
  auto xb = ctx.storage<float>(ts::random_normal(size_t{10} * 64, 951, 0.f, 1.f), "sk.x");
  auto yb = ctx.create_buffer(size_t{10} * 70 * 4, gpu::kStorage, "sk.y");
  auto small = ctx.create_buffer(64, gpu::kStorage, "sk.small");
  const KernelSpec s = plan(ctx, kind_of(Format::Q8_0), 70, 64, 10, {}, Tiling{32, 64, 4, 4, 8, kPipelined, 2});
  Args a{&w, nullptr, &xb, &yb, 10};
  a.part = &small;
  try {
    prepare(ctx, s, a);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sk.small"), std::string::npos) << e.what();
  }
  // A shared scratch big enough serves the split (and is what gets written).
  auto part = ctx.create_buffer(split_sum::partial_bytes(2, {}, 10, 70), gpu::kStorage, "sk.part");
  a.part = &part;
  Prepared p = prepare(ctx, s, a);
  gpu::Recorder rec(ctx);
  p.record(rec);
  rec.submit();
  auto y = ctx.download<float>(yb);
  auto pv = ctx.download<float>(part);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], pv[i] + pv[y.size() + i]) << i;
}

TEST(Gemm, EveryCandidateTilingAgrees) {
  // Several k tiles, interior and edge workgroups, each tiling the tuner may pick.
  auto& ctx = test_context();
  // Every distinct candidate on Q4_K; Q8_0 (2-byte aligned blocks) on the
  // first two and the first of each pipelined kind.
  auto all = candidates(limits_of(ctx), kind_of(Format::Q4_K), {}, 3);
  for (uint32_t mc : {0u, 1u, 2u})
    for (const auto& t : candidates(limits_of(ctx), kind_of(Format::Q4_K), {}, mc))
      if (std::find(all.begin(), all.end(), t) == all.end()) all.push_back(t);
  bool seen[4] = {false, false, false, false};
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& t = all[i];
    auto e = run_case({Format::Q4_K, {}, 150, 512, 77, t}, 500 + i);
    EXPECT_LT(e.vs_twin, 1e-4) << "q4_K " << label(t);
    if (i < 2 || (t.algo != kClassic && !seen[t.algo])) {
      seen[t.algo] = true;
      e = run_case({Format::Q8_0, {}, 150, 64, 77, t}, 600 + i);
      EXPECT_LT(e.vs_twin, 1e-4) << "q8_0 " << label(t);
    }
  }
}

TEST(Gemm, WeightSplitAcrossBindingsByRows) {
  // matvec::upload's row chunks, of any row count: 300 rows of Q8_0 (k = 64,
  // 64 + 4 bytes a row) in 4 KiB chunks of 63 rows (5 bindings; silu pairs the
  // chunks); 90 rows of Q6_K (k = 256) in 2000-byte chunks of 9 rows (odd, so
  // a chunk's f16 pairs of d start afresh).
  auto e = run_case({Format::Q8_0, hook("silu"), 300, 64, 40, {}, 4096, 1}, 77);
  EXPECT_LT(e.vs_twin, 1e-4);
  e = run_case({Format::Q6_K, hook("acc"), 90, 256, 9, {}, 2000, 1}, 78);
  EXPECT_LT(e.vs_twin, 1e-4);
  e = run_case({Format::F16, {}, 70, 64, 9, Tiling{32, 64, 4, 4, 8, kPipelined}, 1000, 1}, 79);
  EXPECT_LT(e.vs_twin, 1e-4);
}

// matmul() on one matvec::upload per weight, for every format: forced to
// matvec (crossover = m) and to the gemm (crossover = m - 1), ragged m and n;
// the gemm output against the twin and float64, the matvec one against
// float64 (its summation order is its own). A format the gemm does not read
// stays on matvec whatever m is.
TEST(Gemm, MatmulRunsBothKernelsOnOneUpload) {
  auto& ctx = test_context();
  uint32_t seed = 700;
  for (Format f : kFormats)
    for (const char* h : {"store", "silu"}) {
      if (std::string(h) == "silu" && f != Format::Q8_0 && f != Format::Q4_K) continue;
      const uint32_t n = 70, k = small_k(f), m = 9;
      const Hooks hk = hook(h);
      const bool silu = hk.epilogue == Epilogue::SiluGate;
      auto qa = quantize(f, ts::random_normal(size_t{n} * k, seed, 0.f, 0.5f));
      auto qb = quantize(f, ts::random_normal(size_t{n} * k, seed + 1, 0.f, 0.5f));
      auto x = ts::random_normal(size_t{m} * k, seed + 2, 0.f, 1.f);
      seed += 3;
      matvec::HostWeight ha{kind_of(f), n, k, qa}, hb{kind_of(f), n, k, qb};
      const matvec::Weights wa = matvec::upload(ctx, ha, "mm.a"), wb = silu ? matvec::upload(ctx, hb, "mm.b") : matvec::Weights{};
      auto xb = ctx.storage<float>(x, "mm.x");
      std::vector<float> poison(size_t{m} * n);
      ts::poison(poison);
      auto y1 = ctx.storage<float>(poison, "mm.y1"), y2 = ctx.storage<float>(poison, "mm.y2");
      gemm::MatmulArgs a{&wa, silu ? &wb : nullptr, &xb, &y1, m, hk};
      a.crossover = m;
      a.tuned = false;
      auto pm = matmul(ctx, a);
      a.y = &y2;
      a.crossover = m - 1;
      auto pg = matmul(ctx, a);
      EXPECT_FALSE(pm.uses_gemm());
      EXPECT_TRUE(pg.uses_gemm());
      gpu::Recorder rec(ctx);
      pm.record(rec);
      pg.record(rec);
      rec.submit();
      auto vm = ctx.download<float>(y1), vg = ctx.download<float>(y2);
      EXPECT_EQ(ts::first_poisoned(vm), -1);
      EXPECT_EQ(ts::first_poisoned(vg), -1);
      TwinInputs in{&ha, silu ? &hb : nullptr, x, {}, m};
      auto tw = twin(pg.spec(), in);
      auto ref = reference(pg.spec(), in);
      const double gt = ts::max_rel_err(vg, tw), gr = ts::max_rel_err(vg, ref), mr = ts::max_rel_err(vm, ref);
      std::printf("  matmul %-6s %-5s m=%u n=%u: gemm vs twin %.2e vs f64 %.2e, matvec vs f64 %.2e\n",
                  std::string(traits(f).name).c_str(), h, m, n, gt, gr, mr);
      EXPECT_LT(gt, 1e-4) << traits(f).name << " " << h;
      EXPECT_LT(gr, 5e-4) << traits(f).name << " " << h;
      EXPECT_LT(mr, 5e-4) << traits(f).name << " " << h;
    }
  // F32: no gemm decoder, so m = 64 with no crossover given (no measurement) is a matvec.
  auto q5 = quantize(Format::F32, ts::random_normal(size_t{8} * 256, 800, 0.f, 0.5f));
  const matvec::Weights w5 = matvec::upload(ctx, matvec::HostWeight{kind_of(Format::F32), 8, 256, q5}, "mm.f32");
  EXPECT_FALSE(gemm_reads(kind_of(Format::F32), 256));
  EXPECT_TRUE(gemm_reads(kind_of(Format::Q5_K), 256));
  EXPECT_FALSE(gemm_reads(kind_of(Format::Q5_K), 64));
  auto xb = ctx.storage<float>(ts::random_normal(size_t{64} * 256, 801, 0.f, 1.f), "mm.x5");
  auto yb = ctx.create_buffer(size_t{64} * 8 * 4, gpu::kStorage, "mm.y5");
  EXPECT_FALSE(matmul(ctx, {&w5, nullptr, &xb, &yb, 64}).uses_gemm());
}

// crossover() times both kernels on one upload (a small shape, no cache), with
// f32 and with int8 x.
TEST(Gemm, CrossoverMeasuresOnOneUpload) {
  auto& ctx = test_context();
  setenv("BLOCKQ_WARM_MS", "1", 1);
  CrossoverOptions o;
  o.n = 64;
  o.k = 64;
  o.samples = 1;
  o.use_cache = false;
  const uint32_t xo = crossover(ctx, kind_of(Format::Q4_0), o);
  o.mv_int8 = o.gemm_int8 = true;  // int8 x on both sides (f32 where the adapter has no dot4)
  const uint32_t xo8 = crossover(ctx, kind_of(Format::Q4_0), o);
  unsetenv("BLOCKQ_WARM_MS");
  EXPECT_LE(xo, 64u);
  EXPECT_LE(xo8, 64u);
  std::printf("  crossover q4_0 64x64: m <= %u on matvec (f32 x), %u (int8 x)\n", xo, xo8);
}

// matmul() with crossover_own_shape measures the crossover on the weight's
// own n x k (cached under that shape's key, f32 and int8 x apart) and
// follows it; so does a matmul whose gemm takes int8 x and matvec f32 x,
// unasked.
TEST(Gemm, MatmulMeasuresTheCrossoverOnItsOwnShape) {
  auto& ctx = test_context();
  char dir[] = "/tmp/blockq_gemm_xo_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("BLOCKQ_CACHE_DIR", dir, 1);
  setenv("BLOCKQ_WARM_MS", "1", 1);
  const uint32_t n = 64, k = 96, m = 8;
  const WeightKind kind = kind_of(Format::Q4_0);
  const matvec::Weights w = matvec::upload(
      ctx, matvec::HostWeight{kind, n, k, quantize(Format::Q4_0, ts::random_normal(size_t{n} * k, 77, 0.f, 0.5f))},
      "xo.w");
  auto xb = ctx.storage<float>(ts::random_normal(size_t{m} * k, 78, 0.f, 1.f), "xo.x");
  auto yb = ctx.create_buffer(size_t{m} * n * 4, gpu::kStorage, "xo.y");
  const bool dot4 = ctx.features().packed_dot4;
  struct Run {
    bool mv8, g8, own;
  };
  for (const Run r : {Run{false, false, true}, Run{true, true, true}, Run{false, true, false}}) {
    if (!r.own && !dot4) continue;  // both sides f32: the representative shape
    MatmulArgs a{&w, nullptr, &xb, &yb, m};
    a.crossover_own_shape = r.own;
    a.mv_int8 = r.mv8;
    a.int8 = r.g8;
    a.tuned = false;
    const bool gemm = matmul(ctx, a).uses_gemm();
    const std::string key =
        fmt::format("q4_0.n{}.k{}{}{}", n, k, r.mv8 && dot4 ? ".mvi8" : "", r.g8 && dot4 ? ".gi8" : "");
    const auto cached = cache_get(ctx, "crossover", key);
    ASSERT_TRUE(cached.has_value()) << key;
    CrossoverOptions o;
    o.n = n;
    o.k = k;
    o.mv_int8 = r.mv8;
    o.gemm_int8 = r.g8;
    const uint32_t xo = crossover(ctx, kind, o);  // from the cache
    EXPECT_EQ(gemm, m > xo) << key;
    std::printf("  crossover %s: m <= %u on matvec; m = %u ran the %s\n", key.c_str(), xo, m, gemm ? "gemm" : "matvec");
  }
  EXPECT_FALSE(cache_get(ctx, "crossover", "q4_0.n4096.k4096").has_value()) << "the representative shape was not measured";
  unsetenv("BLOCKQ_WARM_MS");
  unsetenv("BLOCKQ_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST(Gemm, PlanFollowsTheLimits) {
  Limits low;  // WebGPU defaults
  for (uint32_t m : {8u, 100u, 4096u})
    for (const char* h : {"store", "silu"}) {
      auto s = plan(low, kind_of(Format::Q4_K), 4096, 14336, m, hook(h));
      EXPECT_LE(threads(s), 256u);
      EXPECT_LE(shared_bytes(s), 16384u) << s.key();
      EXPECT_EQ(s.tile_m % s.reg_m, 0u);
      EXPECT_EQ(s.tile_n % s.reg_n, 0u);
      for (const auto& t : candidates(low, kind_of(Format::Q4_K), hook(h), m_class(m))) {
        EXPECT_LE(shared_bytes(t, hook(h)), 16384u);
        if (t.algo != kClassic) {
          EXPECT_TRUE(t.reg_m % 4 == 0 && t.reg_n % 4 == 0) << label(t);
        }
        EXPECT_LE((t.tile_m / t.reg_m) * (t.tile_n / t.reg_n), 256u);
      }
    }
  // Large prompts: 8-element steps in the paired loop, k split in two while
  // the output has few tiles and the partials fit a binding.
  Limits big{1024, 49152, 65535};
  big.max_binding = 4ull << 30;
  auto s512 = plan(big, kind_of(Format::Q8_0), 4096, 14336, 512, {});
  EXPECT_EQ(s512.variant, kPipelinedPaired);
  EXPECT_EQ(s512.tile, 8u);
  EXPECT_EQ(s512.splits, 2u);
  EXPECT_EQ(plan(big, kind_of(Format::Q8_0), 4096, 14336, 2048, {}).splits, 1u);  // 512 tiles
  // m of 33 to 128: the 64x64 pipelined tiles split k where the classic 64x64
  // tiles are few (4096 rows: 128 tiles, 4 slices; 14336: 448, 2), else
  // the classic tiles whole (32768 rows: 1024 tiles)
  const KernelSpec s100 = plan(big, kind_of(Format::Q8_0), 4096, 14336, 100, {});
  EXPECT_EQ(s100.variant, kPipelined);
  EXPECT_EQ(s100.tile_m * 1000 + s100.tile_n, 64064u);
  EXPECT_EQ(s100.splits, 4u);
  EXPECT_EQ(plan(big, kind_of(Format::Q8_0), 14336, 4096, 100, hook("silu")).splits, 2u);
  const KernelSpec wide = plan(big, kind_of(Format::Q8_0), 32768, 4096, 100, {});
  EXPECT_EQ(wide.variant, kClassic);
  EXPECT_EQ(wide.splits, 1u);
  big.max_binding = 1ull << 20;
  EXPECT_EQ(plan(big, kind_of(Format::Q8_0), 4096, 14336, 512, {}).splits, 1u);   // 16 MB of partials
  EXPECT_EQ(label(Tiling{128, 128, 8, 8, 16, kPipelinedPaired, 2}), "128x128 r8x8 tk16 pipe-pair sk2");
  Limits tiny{64, 4096, 65535};
  auto s = plan(tiny, kind_of(Format::Q8_0), 100, 64, 1000, hook("silu"));
  EXPECT_LE(threads(s), 64u);
  EXPECT_LE(shared_bytes(s), 4096u);
}

TEST(Gemm, BadInputIsAClearError) {
  auto& ctx = test_context();
  try {
    plan(ctx, kind_of(Format::Q4_K), 2, 128, 8);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("multiple"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan(ctx, kind_of(Format::F32), 8, 256, 8), Error);  // no gemm decoder
  Hooks rope;
  rope.epilogue = Epilogue::Rope;
  EXPECT_THROW(plan(ctx, kind_of(Format::Q8_0), 8, 64, 8, rope), Error);
  // A weight that does not match the spec, a SiLU gate without its up weight.
  auto q = quantize(Format::Q8_0, ts::random_normal(size_t{8} * 64, 900, 0.f, 0.5f));
  const matvec::Weights w = matvec::upload(ctx, matvec::HostWeight{kind_of(Format::Q8_0), 8, 64, q}, "bad.w");
  auto xb = ctx.create_buffer(size_t{8} * 64 * 4, gpu::kStorage, "bad.x");
  auto yb = ctx.create_buffer(size_t{8} * 16 * 4, gpu::kStorage, "bad.y");
  EXPECT_THROW(prepare(ctx, plan(ctx, kind_of(Format::Q8_0), 16, 64, 8), {&w, nullptr, &xb, &yb, 8}), Error);
  EXPECT_THROW(prepare(ctx, plan(ctx, kind_of(Format::Q8_0), 8, 64, 8, hook("silu")), {&w, nullptr, &xb, &yb, 8}),
               Error);
}

TEST(Gemm, TunerKeepsTheFasterAndCaches) {
  auto& ctx = test_context();
  char dir[] = "/tmp/blockq_gemm_tune_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("BLOCKQ_CACHE_DIR", dir, 1);
  TuneOptions o;
  o.m = 16;
  o.samples = 3;
  o.max_candidates = 2;
  auto r = tune(ctx, kind_of(Format::Q8_0), 96, 64, 0, {}, o);
  EXPECT_FALSE(r.from_cache);
  EXPECT_LE(r.ns_best, r.ns_default);  // never slower than the default
  if (!(r.tiling == r.default_tiling)) {
    EXPECT_LT(r.ns_best, r.ns_default);
  }
  std::printf("  tuned %s: %ux%u r%ux%u tk%u %.1f us (default %.1f us)\n", r.key.c_str(), r.tiling.tile_m,
              r.tiling.tile_n, r.tiling.reg_m, r.tiling.reg_n, r.tiling.tile_k, r.ns_best / 1e3, r.ns_default / 1e3);
  auto c = tune(ctx, kind_of(Format::Q8_0), 96, 64, 0, {}, o);
  EXPECT_TRUE(c.from_cache);
  EXPECT_EQ(c.tiling, r.tiling);
  EXPECT_TRUE(std::filesystem::exists(cache_path()));
  if (ctx.features().packed_dot4) {  // the int8 gemm: its own key, its candidates
    o.int8 = true;
    auto i = tune(ctx, kind_of(Format::Q8_0), 96, 64, 0, {}, o);
    EXPECT_FALSE(i.from_cache);
    EXPECT_EQ(i.key, r.key + ".i8");
    EXPECT_LE(i.ns_best, i.ns_default);
    EXPECT_EQ(i.default_tiling, tiling_of(plan_int8(limits_of(ctx), kind_of(Format::Q8_0), 96, 64, 16)));
    const auto ci = tune(ctx, kind_of(Format::Q8_0), 96, 64, 0, {}, o);
    EXPECT_TRUE(ci.from_cache);
    EXPECT_EQ(ci.tiling, i.tiling);
    std::printf("  tuned %s: %s %.1f us (default %.1f us)\n", i.key.c_str(), label(i.tiling).c_str(),
                i.ns_best / 1e3, i.ns_default / 1e3);
    o.int8 = false;
  }
  // A corrupt cache reads as empty.
  { std::FILE* f = std::fopen(cache_path().c_str(), "w"); std::fputs("{not json", f); std::fclose(f); }
  EXPECT_FALSE(cache_get(ctx, "tune", r.key).has_value());
  unsetenv("BLOCKQ_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

}  // namespace
