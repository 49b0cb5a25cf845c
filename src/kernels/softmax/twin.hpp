// CPU twin of the softmax kernel (rows, optional scale and causal mask), with
// its float64 reference (the attention twin is kernels/attention/twin.hpp).
//
// Softmax of a row x[0..n) (one workgroup of spec.wg invocations per row; the
// reductions follow kernels/common/reduce_twin.hpp):
//   v[j] = x[j] * scale                      (f32 product)
//   m    = strided_max(j -> v[j], n, wg)     (masked j: term -FLT_MAX)
//   e[j] = expf(v[j] - m)                    (masked j: 0.0f)
//   s    = strided_sum(j -> e[j], n, wg)
//   y[j] = e[j] / s                          (a true division; masked j: 0.0f)
// Causal mask: row r may see columns j <= n_past + r; the others are masked.
#pragma once
#include <cstdint>
#include <span>

namespace blockq::twin {

struct SoftmaxSpec {
  uint32_t wg = 64;  // invocations per row (power of two); sets the reduction order
};

// Mask of a [rows, n] score block. With causal set, row r sees columns
// 0..n_past+r (a prompt of `rows` tokens after n_past cached ones).
struct SoftmaxMask {
  bool causal = false;
  uint32_t n_past = 0;
};

// x, y: [rows, n]; y may alias x.
void softmax(std::span<const float> x, std::span<float> y, uint32_t rows, uint32_t n,
             const SoftmaxSpec& spec, float scale = 1.0f, SoftmaxMask mask = {});

// Float64 reference of the same (max-subtracted, in double); y: [rows, n].
void softmax_ref(std::span<const float> x, std::span<double> y, uint32_t rows, uint32_t n,
                 float scale = 1.0f, SoftmaxMask mask = {});

}  // namespace blockq::twin
