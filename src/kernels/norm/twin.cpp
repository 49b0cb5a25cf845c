// RMSNorm CPU twin and float64 reference (see twin.hpp for the op order).
#include "kernels/norm/twin.hpp"

#include <cmath>

#include "kernels/common/reduce_twin.hpp"
#include "util/error.hpp"

namespace blockq::twin {

void rmsnorm(std::span<const float> x, std::span<const float> w, std::span<float> y,
             uint32_t tokens, uint32_t n, const RmsNormSpec& spec) {
  const size_t total = static_cast<size_t>(tokens) * n;
  BQ_ASSERT(n > 0 && x.size() >= total && y.size() >= total && w.size() >= n,
            "rmsnorm: tokens {} n {}: x {} w {} y {}", tokens, n, x.size(), w.size(), y.size());
  for (uint32_t t = 0; t < tokens; ++t) {
    const float* xr = x.data() + static_cast<size_t>(t) * n;
    float* yr = y.data() + static_cast<size_t>(t) * n;
    const float ss = strided_sum(
        [xr](size_t k) {
          const float sq = xr[k] * xr[k];
          return sq;
        },
        n, spec.wg);
    const float mean = ss / static_cast<float>(n);
    const float shift = mean + spec.eps;
    const float root = std::sqrt(shift);
    const float scale = 1.0f / root;
    for (uint32_t k = 0; k < n; ++k) {
      const float xs = xr[k] * scale;
      yr[k] = xs * w[k];
    }
  }
}

void rmsnorm_ref(std::span<const float> x, std::span<const float> w, std::span<double> y,
                 uint32_t tokens, uint32_t n, float eps) {
  const size_t total = static_cast<size_t>(tokens) * n;
  BQ_ASSERT(n > 0 && x.size() >= total && y.size() >= total && w.size() >= n,
            "rmsnorm_ref: tokens {} n {}: x {} w {} y {}", tokens, n, x.size(), w.size(), y.size());
  for (uint32_t t = 0; t < tokens; ++t) {
    const float* xr = x.data() + static_cast<size_t>(t) * n;
    double ss = 0.0;
    for (uint32_t k = 0; k < n; ++k) ss += static_cast<double>(xr[k]) * xr[k];
    const double scale = 1.0 / std::sqrt(ss / n + static_cast<double>(eps));
    for (uint32_t k = 0; k < n; ++k) {
      y[static_cast<size_t>(t) * n + k] = static_cast<double>(xr[k]) * scale * w[k];
    }
  }
}

}  // namespace blockq::twin
