// CPU twin of the workgroup reduction order every blockq reduction kernel
// follows, so that a twin and its GPU kernel add the same numbers in the same
// order and agree bit for bit.
//
// The convention, for a length-n vector reduced by one workgroup of WG
// invocations (WG a power of two, 1 <= WG <= kMaxTwinWg):
//   1. Invocation i (0 <= i < WG) keeps an f32 partial, starting from the
//      identity (0.0f for a sum, -FLT_MAX for a max: WGSL has no infinity
//      literal), and folds in the terms i, i+WG, i+2WG, ... < n in increasing
//      order: acc = acc + term (sum) or acc = max(acc, term) (max).
//      Invocations with i >= n keep the identity.
//   2. The WG partials p[0..WG) go to workgroup memory and are combined by a
//      tree: for s = WG/2, WG/4, ..., 1: p[i] = p[i] op p[i+s] for i < s
//      (one barrier per level). The result is p[0].
// Every step is a separate f32 operation; nothing may be fused (see the
// NoFpContraction tests, which fail if the compiler forms an FMA).
#pragma once
#include <algorithm>
#include <array>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <span>

#include "util/error.hpp"

namespace blockq::twin {

// The largest workgroup a twin models (WebGPU adapters report at most 1024
// invocations per workgroup).
inline constexpr uint32_t kMaxTwinWg = 1024;

constexpr bool is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

namespace detail {

struct SumOp {
  static constexpr float identity() { return 0.0f; }
  static float apply(float a, float b) {
    const float r = a + b;
    return r;
  }
};

struct MaxOp {
  static constexpr float identity() { return -FLT_MAX; }
  // Matches WGSL max() for non-NaN operands.
  static float apply(float a, float b) { return std::max(a, b); }
};

// The tree of step 2 on a scratch copy: p[i] = op(p[i], p[i+s]).
template <class Op>
float tree_reduce(std::span<const float> partials) {
  const size_t wg = partials.size();
  BQ_ASSERT(is_pow2(wg) && wg <= kMaxTwinWg, "tree of {} partials: need a power of two <= {}", wg,
            kMaxTwinWg);
  std::array<float, kMaxTwinWg> p;
  std::copy(partials.begin(), partials.end(), p.begin());
  for (size_t s = wg / 2; s >= 1; s /= 2) {
    for (size_t i = 0; i < s; ++i) p[i] = Op::apply(p[i], p[i + s]);
  }
  return p[0];
}

// Steps 1 and 2: term(k) gives the f32 term k of the vector, 0 <= k < n.
template <class Op, class F>
float strided_reduce(F&& term, size_t n, uint32_t wg) {
  BQ_ASSERT(is_pow2(wg) && wg <= kMaxTwinWg, "workgroup size {}: need a power of two <= {}", wg,
            kMaxTwinWg);
  std::array<float, kMaxTwinWg> p;
  for (uint32_t i = 0; i < wg; ++i) {
    float acc = Op::identity();
    for (size_t k = i; k < n; k += wg) {
      const float t = term(k);
      acc = Op::apply(acc, t);
    }
    p[i] = acc;
  }
  return tree_reduce<Op>(std::span<const float>(p.data(), wg));
}

}  // namespace detail

// Step 2 alone: partials.size() is the workgroup size (a power of two).
inline float tree_reduce_sum(std::span<const float> partials) {
  return detail::tree_reduce<detail::SumOp>(partials);
}
inline float tree_reduce_max(std::span<const float> partials) {
  return detail::tree_reduce<detail::MaxOp>(partials);
}

// Sum of term(0..n-1) in the workgroup order above. term(k) -> float must be
// the exact f32 expression the kernel evaluates for element k.
template <class F>
float strided_sum(F&& term, size_t n, uint32_t wg) {
  return detail::strided_reduce<detail::SumOp>(term, n, wg);
}

// Max of term(0..n-1) in the same order (the order does not change a max of
// non-NaN values, but the identity -FLT_MAX does show for n == 0). A masked
// element's term is -FLT_MAX.
template <class F>
float strided_max(F&& term, size_t n, uint32_t wg) {
  return detail::strided_reduce<detail::MaxOp>(term, n, wg);
}

// a * b + c as two rounded f32 operations. Tests call it through volatile
// operands to check that the build does not contract products and sums into
// FMAs (which would break twin/kernel parity for every twin).
[[gnu::noinline]] inline float mul_then_add(float a, float b, float c) {
  const float p = a * b;
  const float s = p + c;
  return s;
}

}  // namespace blockq::twin
