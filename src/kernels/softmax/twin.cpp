// The softmax CPU twin and its float64 reference (see twin.hpp for the op
// order).
#include "kernels/softmax/twin.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "kernels/common/reduce_twin.hpp"
#include "util/error.hpp"

namespace blockq::twin {
namespace {

// One row: columns 0..visible-1 take part, the rest are masked (y = 0).
void softmax_row(const float* x, float* y, uint32_t n, uint32_t visible, uint32_t wg, float scale) {
  const float m = strided_max(
      [&](size_t j) {
        if (j >= visible) return -FLT_MAX;
        const float v = x[j] * scale;
        return v;
      },
      n, wg);
  for (uint32_t j = 0; j < n; ++j) {
    if (j >= visible) {
      y[j] = 0.0f;
      continue;
    }
    const float v = x[j] * scale;
    const float d = v - m;
    y[j] = std::exp(d);
  }
  const float s = strided_sum([&](size_t j) { return y[j]; }, n, wg);
  for (uint32_t j = 0; j < n; ++j) {
    const float q = y[j] / s;
    y[j] = q;
  }
}

uint32_t visible_cols(uint32_t row, uint32_t n, SoftmaxMask mask) {
  if (!mask.causal) return n;
  const uint64_t v = uint64_t(mask.n_past) + row + 1;
  return static_cast<uint32_t>(std::min<uint64_t>(v, n));
}

}  // namespace

void softmax(std::span<const float> x, std::span<float> y, uint32_t rows, uint32_t n,
             const SoftmaxSpec& spec, float scale, SoftmaxMask mask) {
  const size_t total = size_t(rows) * n;
  BQ_ASSERT(n > 0 && x.size() >= total && y.size() >= total, "softmax: [{}, {}] x {} y {}", rows, n,
            x.size(), y.size());
  for (uint32_t r = 0; r < rows; ++r) {
    softmax_row(x.data() + size_t(r) * n, y.data() + size_t(r) * n, n, visible_cols(r, n, mask),
                spec.wg, scale);
  }
}

void softmax_ref(std::span<const float> x, std::span<double> y, uint32_t rows, uint32_t n,
                 float scale, SoftmaxMask mask) {
  const size_t total = size_t(rows) * n;
  BQ_ASSERT(n > 0 && x.size() >= total && y.size() >= total, "softmax_ref: [{}, {}] x {} y {}",
            rows, n, x.size(), y.size());
  for (uint32_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + size_t(r) * n;
    double* yr = y.data() + size_t(r) * n;
    const uint32_t vis = visible_cols(r, n, mask);
    double m = -INFINITY;
    for (uint32_t j = 0; j < vis; ++j) m = std::max(m, double(xr[j]) * scale);
    double s = 0.0;
    for (uint32_t j = 0; j < n; ++j) {
      yr[j] = j < vis ? std::exp(double(xr[j]) * scale - m) : 0.0;
      s += yr[j];
    }
    for (uint32_t j = 0; j < n; ++j) yr[j] /= s;
  }
}

}  // namespace blockq::twin
