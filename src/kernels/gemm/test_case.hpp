// The gemm tests' harness (gemm_test.cpp, int8_test.cpp): one case on the
// test adapter, random data, poisoned outputs, the kernel against its CPU twin
// and float64, each case's errors printed.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>

#include "kernels/gemm/op.hpp"
#include "kernels/gemm/twin.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace blockq::gemm::test_cases {

namespace ts = blockq::testing_support;

inline const Format kFormats[] = {Format::Q8_0, Format::Q4_0, Format::Q4_1, Format::Q5_0, Format::Q5_1, Format::Q2_K,
                                  Format::Q3_K, Format::Q4_K, Format::Q5_K, Format::Q6_K, Format::IQ4_NL,
                                  Format::IQ4_XS, Format::F16, Format::BF16};
inline constexpr int kNumFormats = 14;
static_assert(std::size(kFormats) == kNumFormats);
// The formats the int8 gemm reads (int8_reads).
inline const Format kInt8Formats[] = {Format::Q8_0, Format::Q4_0, Format::Q4_1, Format::Q5_0, Format::Q5_1,
                                      Format::Q2_K, Format::Q3_K, Format::Q4_K, Format::Q5_K, Format::Q6_K, Format::IQ4_NL,
                                      Format::IQ4_XS};

inline WeightKind kind_of(Format f) {
  WeightKind w;
  w.format = f;
  return w;
}

// k: two blocks of 32, or one 256-element super-block.
inline uint32_t small_k(Format f) { return traits(f).block_elems >= 256 ? 256 : 64; }

inline Hooks hook(const std::string& name) {
  Hooks h;
  if (name == "acc") h.epilogue = Epilogue::Acc;
  if (name == "silu") h.epilogue = Epilogue::SiluGate;
  return h;
}

struct Case {
  Format f;
  Hooks hooks;
  uint32_t n, k, m;
  std::optional<Tiling> tiling;
  uint64_t max_chunk_bytes = 0;  // matvec::upload's chunking (0: the binding limit)
  uint32_t row_granularity = 256;
  bool int8 = false;  // plan_int8 (features.dot4)
};

struct Errors {
  double vs_ref, vs_twin;
};

// Moves each x value whose int8 code (x * 127 / amax of its block of 32) lies
// within 0.01 of a rounding tie 0.02 of a code toward zero. The GPU's 127 /
// amax may differ from the twin's in the last bit (an unfused fma on
// SwiftShader), which moves the code of a value at a tie by one, and the
// twin bound is for the gemm's sums, not the quantizer's ties.
inline void off_ties(std::vector<float>& x) {
  for (size_t b = 0; b + 32 <= x.size(); b += 32) {
    float am = 0;
    for (size_t i = b; i < b + 32; ++i) am = std::max(am, std::abs(x[i]));
    if (am == 0) continue;
    const float inv = 127.f / am;
    for (size_t i = b; i < b + 32; ++i) {
      const float v = std::abs(x[i]) * inv;
      if (std::abs(v - std::floor(v) - 0.5f) < 0.01f) x[i] -= std::copysign(0.02f / inv, x[i]);
    }
  }
}

// int8 (Case::int8): plan_int8 and its looser bound of the twin against
// float64 (x quantized to 8 bits).
inline Errors run_case(const Case& c, uint32_t seed) {
  auto& ctx = ts::test_context();
  const bool silu = c.hooks.epilogue == Epilogue::SiluGate;
  const WeightKind kind = kind_of(c.f);
  auto va = ts::random_normal(size_t{c.n} * c.k, seed, 0.f, 0.5f);
  auto vb = ts::random_normal(size_t{c.n} * c.k, seed + 7, 0.f, 0.5f);
  auto qa = quantize(c.f, va), qb = quantize(c.f, vb);
  matvec::HostWeight ha{kind, c.n, c.k, qa}, hb{kind, c.n, c.k, qb};
  const KernelSpec spec = c.int8 ? plan_int8(limits_of(ctx), kind, c.n, c.k, c.m, c.hooks, c.tiling)
                                 : plan(ctx, kind, c.n, c.k, c.m, c.hooks, c.tiling);
  auto x = ts::random_normal(size_t{c.m} * c.k, seed + 1, 0.f, 1.f);
  if (c.int8) off_ties(x);
  auto y_in = ts::random_floats(size_t{c.m} * c.n, seed + 4, -1.f, 1.f);
  matvec::UploadOptions uo;
  uo.max_chunk_bytes = c.max_chunk_bytes;
  uo.row_granularity = c.row_granularity;
  matvec::Weights ga = matvec::upload(ctx, ha, "test.a", uo);
  matvec::Weights gb;
  if (silu) gb = matvec::upload(ctx, hb, "test.b", uo);
  if (c.max_chunk_bytes) {
    EXPECT_GT(ga.chunks.size(), 1u) << "the case should split the weight";
  }
  auto xb = ctx.storage<float>(x, "x");
  auto yb = ctx.create_buffer(y_in.size() * 4, gpu::kStorage, "y");
  if (c.hooks.epilogue == Epilogue::Acc) {
    ctx.upload<float>(yb, y_in);
  } else {
    std::vector<float> poison(y_in.size());
    ts::poison(poison);
    ctx.upload<float>(yb, poison);
  }
  Prepared p = prepare(ctx, spec, {&ga, silu ? &gb : nullptr, &xb, &yb, c.m});
  gpu::Recorder rec(ctx);
  p.record(rec);
  rec.submit();
  auto y = ctx.download<float>(yb, 0, y_in.size());
  EXPECT_EQ(ts::first_poisoned(y), -1) << spec.key();
  TwinInputs in{&ha, silu ? &hb : nullptr, x, y_in, c.m};
  auto tw = twin(spec, in);
  auto ref = reference(spec, in);
  Errors e{ts::max_rel_err(y, ref), ts::max_rel_err(y, tw)};
  std::printf("  %-58s m=%-3u vs f64 %.2e  vs twin %.2e  twin vs f64 %.2e\n", spec.key().c_str(), c.m, e.vs_ref,
              e.vs_twin, ts::max_rel_err(tw, ref));
  EXPECT_LT(ts::max_rel_err(tw, ref), c.int8 ? 2e-2 : 5e-4) << "twin vs float64, " << spec.key();
  return e;
}

}  // namespace blockq::gemm::test_cases
