// GPU parity tests of the gather kernels against the CPU twins and float64
// references: every contract case (test.json), a sweep of GatherBlockQuantized
// (index ranks 0..3, int32/int64, negative, bits 2/4/8, zero points, f32/f16),
// host index checks, chunked tables over the binding limit, wrapped grids,
// and the Program (export) path replayed natively.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "kernels/common/registry.hpp"
#include "kernels/gather/gather.hpp"
#include "quant/half.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

namespace blockq::gather {
namespace {

using testing_support::test_context;

int64_t numel(const twin::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<uint8_t> rand_bytes(size_t n, uint64_t seed) {
  contract::SplitMix64 g{seed};
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(g.next() >> 56);
  return v;
}

std::vector<float> rand_floats(size_t n, uint64_t seed, double lo, double hi) {
  contract::SplitMix64 g{seed};
  std::vector<float> v(n);
  for (auto& x : v) x = float(lo + (hi - lo) * g.uniform());
  return v;
}

// Every case of both contracts passes natively (under whichever limits profile
// this binary runs with), and each line is printed like `blockq kernels test`.
TEST(GatherContract, EveryTestCasePasses) {
  register_kernels();
  for (const char* id : {"com.microsoft.GatherBlockQuantized", "blockq.Embedding"}) {
    const auto& e = kernels::find_kernel(id);
    const auto tests = kernels::load_tests(e);
    (void)kernels::load_bench(e);  // schema-checked too
    for (const auto& tc : tests.cases) {
      const auto r = e.run_case(test_context(), tc);
      std::printf("%s %s/%s vs twin %.3g (tol %.3g) vs f64 %.3g (tol %.3g) %s\n", r.pass ? "PASS" : "FAIL", id,
                  r.name.c_str(), r.max_rel_vs_twin, r.tol_twin, r.max_rel_vs_ref, r.tol_ref, r.detail.c_str());
      EXPECT_TRUE(r.pass) << id << "/" << r.name << ": " << r.detail;
    }
  }
}

struct Sweep {
  twin::Shape logical;  // data shape in values
  int64_t gather_axis;
  twin::Shape idx_shape;
  uint32_t bits, block_size;
};

TEST(GatherBlockQuantizedGpu, SweepMatchesTwinAndFloat64) {
  const Sweep shapes[] = {
      {{37, 64}, 0, {}, 4, 16},        {{37, 64}, 0, {5}, 8, 32},
      {{37, 96}, 0, {2, 3}, 4, 64},    {{37, 40}, 0, {2, 2, 3}, 8, 16},
      {{21, 48}, 0, {6}, 2, 16},       {{5, 9, 32}, 1, {4}, 4, 16},
      {{3, 4, 5, 32}, -2, {2, 2}, 8, 16}, {{19, 35}, 0, {3, 3}, 8, 32},  // 35 values a slice: f16 words straddle slices
  };
  gpu::Context& ctx = test_context();
  uint64_t seed = 1000;
  int checked = 0;
  for (const Sweep& s : shapes)
    for (bool zp : {false, true})
      for (bool i64 : {false, true})
        for (OutType out : {OutType::F32, OutType::F16}) {
          SCOPED_TRACE(::testing::Message() << "bits " << s.bits << " bs " << s.block_size << " rank "
                                            << s.logical.size() << " idx rank " << s.idx_shape.size() << " zp "
                                            << zp << " i64 " << i64 << " f16 " << (out == OutType::F16));
          const int64_t per = 8 / s.bits, r = int64_t(s.logical.size());
          twin::Shape dshape = s.logical;
          dshape.back() /= per;
          const int64_t nb = (s.logical.back() + s.block_size - 1) / s.block_size;
          twin::Shape sshape = dshape, zshape = dshape;
          sshape.back() = nb;
          zshape.back() = (nb * s.bits + 7) / 8;
          const auto data = rand_bytes(size_t(numel(dshape)), seed++);
          const auto scales = rand_floats(size_t(numel(sshape)), seed++, -0.5, 0.5);
          const auto zps = rand_bytes(size_t(numel(zshape)), seed++);
          const int64_t g = s.gather_axis < 0 ? s.gather_axis + r : s.gather_axis;
          const int64_t dim = s.logical[size_t(g)];
          contract::SplitMix64 rng{seed++};
          std::vector<int64_t> v64(size_t(numel(s.idx_shape)));
          for (auto& v : v64) v = int64_t(rng.next() % uint64_t(2 * dim)) - dim;  // negatives too
          std::vector<int32_t> v32(v64.begin(), v64.end());
          twin::GbqInputs in{data, dshape, std::span<const int64_t>(v64), s.idx_shape, scales, sshape, {}, {}};
          if (!i64) in.indices = std::span<const int32_t>(v32);
          if (zp) in.zero_points = zps, in.zero_points_shape = zshape;
          const twin::GbqSpec spec{s.bits, s.block_size, s.gather_axis, -1};
          const auto plan = twin::gbq_plan(in, spec);
          // Chunked every other time: slices of a few rows per binding.
          Options opt;
          if (seed % 2) opt.max_binding_bytes = 4 * uint64_t(plan.inner) * 4;
          GbqGpu k(ctx, in, spec, out, i64 ? IndexType::I64 : IndexType::I32, v64.size(), opt);
          k.set_indices(in.indices, s.idx_shape);
          ASSERT_EQ(k.out_shape(), plan.out_shape);
          k.poison();
          gpu::Recorder rec(ctx);
          k.record(rec);
          rec.submit();
          std::vector<double> ref(plan.out_elems);
          twin::gather_block_quantized_ref(in, spec, ref);
          std::vector<float> got, tw(plan.out_elems);
          if (out == OutType::F16) {
            const auto h = k.read_f16();
            std::vector<uint16_t> th(plan.out_elems);
            twin::gather_block_quantized_f16(in, spec, th);
            for (size_t o = 0; o < th.size(); ++o) {
              ASSERT_NE(h[o], 0x7dad) << "poison left at " << o;
              // WGSL lets pack2x16float round either way: one f16 ulp at most.
              ASSERT_LE(std::abs(int(h[o]) - int(th[o])), 1) << o;
            }
            got = kernels::f16_to_floats(h);
            tw = kernels::f16_to_floats(th);
          } else {
            got = k.read_f32();
            twin::gather_block_quantized(in, spec, tw);
            for (size_t o = 0; o < tw.size(); ++o) ASSERT_EQ(got[o], tw[o]) << o;  // one exact product
          }
          const double e_twin = kernels::max_rel(got, tw), e_ref = kernels::max_rel(got, ref);
          EXPECT_LE(e_ref, out == OutType::F16 ? 1e-3 : 1e-7);
          RecordProperty("max_rel", std::to_string(e_twin) + " " + std::to_string(e_ref));
          ++checked;
        }
  std::printf("GatherBlockQuantized sweep: %d configurations, bit-exact f32, <= 1 ulp f16\n", checked);
}

TEST(GatherBlockQuantizedGpu, OutOfRangeIndexIsAnErrorBeforeDispatch) {
  gpu::Context& ctx = test_context();
  const auto data = rand_bytes(10 * 16, 7);
  const auto scales = rand_floats(10, 8, -1, 1);
  const std::vector<int64_t> ok = {1, -10, 9};
  twin::GbqInputs in{data, {10, 16}, std::span<const int64_t>(ok), {3}, scales, {10, 1}, {}, {}};
  const twin::GbqSpec spec{4, 32, 0, 1};
  GbqGpu k(ctx, in, spec, OutType::F32, IndexType::I64, 4);
  k.set_indices(in.indices, {3});
  k.poison();
  const std::vector<int64_t> bad = {3, 2, 1, 10};
  try {
    k.set_indices(std::span<const int64_t>(bad), {2, 2});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 10 at indices[1, 1] (flat position 3)"), std::string::npos)
        << e.what();
  }
  const std::vector<int32_t> neg = {-11};
  GbqGpu k32(ctx, in, spec, OutType::F32, IndexType::I32, 1);
  EXPECT_THROW(k32.set_indices(std::span<const int32_t>(neg), {1}), Error);
  // Nothing was dispatched: the output still holds the poison.
  for (float v : ctx.download<float>(k.out(), 0, 3)) EXPECT_TRUE(std::isnan(v));
}

// A Q8_0 table just over the binding limit of the low-end profile (128 MiB):
// 140000 x 1024 (152 MB), rows from a fast per-row generator; only the
// gathered rows are checked. Chunks are forced under any profile.
TEST(EmbeddingGpu, TableOverTheBindingLimitIsChunked) {
  gpu::Context& ctx = test_context();
  const twin::EmbedSpec spec{Format::Q8_0, 140000, 1024};
  std::vector<uint8_t> table(row_bytes(spec.format, spec.n_embd) * spec.n_vocab);
  contract::random_rows(spec.format, spec.n_vocab, spec.n_embd, 77, -0.02, 0.02, table);
  std::vector<int32_t> ids = {0, 139999, 70000, 123456, 1, 123455, 65535, 99999};
  for (int i = 0; i < 24; ++i) ids.push_back(int32_t((uint64_t(i) * 2654435761u) % spec.n_vocab));
  const uint64_t binding = std::min<uint64_t>(ctx.limits().maxStorageBufferBindingSize, ctx.limits().maxBufferSize);
  EmbedGpu g(ctx, table, spec, ids.size());
  if (table.size() > binding) {
    EXPECT_GE(g.layout().chunks.size(), 2u);
  }
  std::printf("table %zu bytes, binding limit %llu: %zu chunk(s)\n", table.size(), (unsigned long long)binding,
              g.layout().chunks.size());
  g.set_ids(ids);
  g.poison();
  gpu::Recorder rec(ctx);
  g.record(rec);
  rec.submit();
  const auto got = g.read();
  std::vector<float> tw(got.size());
  std::vector<double> ref(got.size());
  twin::embed_rows(table, ids, tw, spec);
  twin::embed_rows_ref(table, ids, ref, spec);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], tw[i]) << i;
  EXPECT_LE(kernels::max_rel(got, ref), 1e-7);
  EXPECT_THROW(g.set_ids(std::vector<int32_t>{5, 140000}), Error);
}

// More workgroups than one grid dimension allows: the grid wraps into y.
TEST(EmbeddingGpu, WrappedGrid) {
  gpu::Context& ctx = test_context();
  const twin::EmbedSpec spec{Format::F16, 1000, 1024};
  std::vector<uint8_t> table(row_bytes(spec.format, spec.n_embd) * spec.n_vocab);
  contract::random_rows(spec.format, spec.n_vocab, spec.n_embd, 5, -1, 1, table);
  Options opt;
  opt.workgroup_size = 32;
  const uint64_t need = uint64_t(ctx.limits().maxComputeWorkgroupsPerDimension) * 32 / spec.n_embd + 3;
  std::vector<int32_t> ids(need);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t((i * 7919) % spec.n_vocab);
  EmbedGpu g(ctx, table, spec, ids.size(), opt);
  g.set_ids(ids);
  g.poison();
  gpu::Recorder rec(ctx);
  g.record(rec);
  rec.submit();
  const auto got = g.read();
  std::vector<float> tw(got.size());
  twin::embed_rows(table, ids, tw, spec);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], tw[i]) << i;
}

// The exported Program, replayed natively, gives what the runner classes give.
TEST(GatherProgram, NativeReplayMatchesTwin) {
  register_kernels();
  gpu::Context& ctx = test_context();
  for (const char* id : {"com.microsoft.GatherBlockQuantized", "blockq.Embedding"}) {
    const auto& e = kernels::find_kernel(id);
    for (const auto& tc : kernels::load_tests(e).cases) {
      if (!tc.expect_error.empty() || std::find(tc.tags.begin(), tc.tags.end(), "large") != tc.tags.end()) continue;
      SCOPED_TRACE(tc.name);
      const kernels::Program p = e.export_case(ctx, tc);
      const auto outs = kernels::run_program(ctx, p);
      ASSERT_EQ(outs.size(), p.outputs.size());
      for (size_t i = 0; i < outs.size(); ++i)
        EXPECT_LE(kernels::max_rel(outs[i], p.outputs[i].expected), p.outputs[i].tolerance);
    }
  }
}

}  // namespace
}  // namespace blockq::gather
