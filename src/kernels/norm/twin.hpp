// CPU twin of the RMSNorm kernel (same summation order, f32) and its float64
// reference.
//
// Shapes: x [tokens, n] row-major, w [n], y [tokens, n]. One workgroup of
// spec.wg invocations normalises one token row:
//   ss    = strided_sum(k -> x[k] * x[k], n, wg)   (common/reduce_twin.hpp order)
//   mean  = ss / (float)n
//   shift = mean + eps
//   root  = sqrtf(shift)
//   scale = 1.0f / root
//   y[k]  = (x[k] * scale) * w[k]
// each line one rounded f32 operation (no FMA, no rsqrt approximation).
#pragma once
#include <cstdint>
#include <span>

namespace blockq::twin {

struct RmsNormSpec {
  uint32_t wg = 64;   // invocations per row (power of two); sets the order of ss
  float eps = 1e-5f;  // added to the mean of squares
};

// x, y: [tokens, n]; w: [n]. y may alias x (in place).
void rmsnorm(std::span<const float> x, std::span<const float> w, std::span<float> y,
             uint32_t tokens, uint32_t n, const RmsNormSpec& spec);

// Float64 reference: y = x / sqrt(sum(x^2)/n + eps) * w, all in double.
void rmsnorm_ref(std::span<const float> x, std::span<const float> w, std::span<double> y,
                 uint32_t tokens, uint32_t n, float eps);

}  // namespace blockq::twin
