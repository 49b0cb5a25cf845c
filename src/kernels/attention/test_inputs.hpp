// The attention tests' inputs: random q rows [m, q_row] and caches [n_ctx,
// n_kv_head, head_dim] (f16 caches rounded, so the host values are the
// device's), their device buffers, the positions, an output poisoned first,
// and the most positions a token sees.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpu/context.hpp"
#include "kernels/attention/attention.hpp"
#include "quant/half.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"

namespace blockq::attention::testing {

struct Inputs {
  std::vector<float> q, k, v;  // host values
  gpu::Buffer bq, bk, bv, bpos, out;
  uint32_t visible = 0;
  Args args() const { return {&bq, &bk, &bv, &bpos, &out}; }
};

// Seeds seed, seed + 1, seed + 2 for q, k and v.
inline Inputs make_inputs(const gpu::Context& ctx, const Shape& s, const std::vector<uint32_t>& pos, uint64_t seed) {
  Inputs in;
  const uint32_t nkv = s.n_kv_head * s.head_dim;
  in.q = testing_support::random_floats(size_t(s.m) * s.q_row(), seed, -2.f, 2.f);
  in.k = testing_support::random_floats(size_t(s.n_ctx) * nkv, seed + 1);
  in.v = testing_support::random_floats(size_t(s.n_ctx) * nkv, seed + 2, -3.f, 3.f);
  auto cache = [&](std::vector<float>& x, const char* name) {
    if (s.kv == Format::F32) return ctx.storage<float>(x, name);
    std::vector<uint16_t> h(x.size());
    for (size_t i = 0; i < x.size(); ++i) h[i] = f32_to_f16(x[i]), x[i] = f16_to_f32(h[i]);
    return ctx.storage<uint16_t>(h, name);
  };
  in.bq = ctx.storage<float>(in.q, "q");
  in.bk = cache(in.k, "k");
  in.bv = cache(in.v, "v");
  in.bpos = ctx.storage<uint32_t>(pos, "pos");
  std::vector<float> poison(size_t(s.m) * s.n_head * s.head_dim);
  testing_support::poison(poison);
  in.out = ctx.storage<float>(poison, "out");
  for (uint32_t p : pos) in.visible = std::max(in.visible, p == 0xffffffffu ? 0u : std::min(p + 1, s.n_ctx));
  return in;
}

}  // namespace blockq::attention::testing
