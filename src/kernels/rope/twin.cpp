// RoPE CPU twin and float64 reference (see twin.hpp for the op order).
#include "kernels/rope/twin.hpp"

#include <cmath>

#include "util/error.hpp"

namespace blockq::twin {
namespace {

void check(size_t x_size, size_t pos_size, const RopeShape& sh, const RopeSpec& spec) {
  const size_t total = size_t(sh.tokens) * sh.heads * sh.head_dim;
  BQ_ASSERT(x_size >= total && pos_size >= sh.tokens, "rope: x {} pos {} for [{}, {}, {}]", x_size,
            pos_size, sh.tokens, sh.heads, sh.head_dim);
  BQ_ASSERT(spec.n_rot % 2 == 0 && spec.n_rot <= sh.head_dim, "rope: n_rot {} head_dim {}",
            spec.n_rot, sh.head_dim);
  BQ_ASSERT(spec.mode == RopeMode::Normal || spec.mode == RopeMode::Neox, "rope: mode {}",
            int(spec.mode));
  BQ_ASSERT(spec.freq_factors.empty() || spec.freq_factors.size() == spec.n_rot / 2,
            "rope: {} freq factors for n_rot {}", spec.freq_factors.size(), spec.n_rot);
}

// Offsets of the two elements of pair i within a head row.
inline void pair_offsets(RopeMode mode, uint32_t n_rot, uint32_t i, uint32_t& a, uint32_t& b) {
  if (mode == RopeMode::Normal) {
    a = 2 * i;
    b = 2 * i + 1;
  } else {
    a = i;
    b = i + n_rot / 2;
  }
}

}  // namespace

void rope(std::span<float> x, std::span<const int32_t> pos, const RopeShape& sh,
          const RopeSpec& spec) {
  check(x.size(), pos.size(), sh, spec);
  const uint32_t half = spec.n_rot / 2;
  for (uint32_t t = 0; t < sh.tokens; ++t) {
    const float p = static_cast<float>(pos[t]);
    for (uint32_t i = 0; i < half; ++i) {
      const float ex = (-2.0f * static_cast<float>(i)) / static_cast<float>(spec.n_rot);
      const float inv = std::pow(spec.theta_base, ex);
      float tp = p * inv;
      if (!spec.freq_factors.empty()) tp = tp / spec.freq_factors[i];
      const float theta = spec.freq_scale * tp;
      const float c = std::cos(theta);
      const float s = std::sin(theta);
      uint32_t ia, ib;
      pair_offsets(spec.mode, spec.n_rot, i, ia, ib);
      for (uint32_t h = 0; h < sh.heads; ++h) {
        float* row = x.data() + (size_t(t) * sh.heads + h) * sh.head_dim;
        const float a = row[ia];
        const float b = row[ib];
        const float ac = a * c;
        const float bs = b * s;
        const float as = a * s;
        const float bc = b * c;
        row[ia] = ac - bs;
        row[ib] = as + bc;
      }
    }
  }
}

void rope_ref(std::span<const float> x, std::span<double> y, std::span<const int32_t> pos,
              const RopeShape& sh, const RopeSpec& spec) {
  check(x.size(), pos.size(), sh, spec);
  const size_t total = size_t(sh.tokens) * sh.heads * sh.head_dim;
  BQ_ASSERT(y.size() >= total, "rope_ref: y {} < {}", y.size(), total);
  for (size_t k = 0; k < total; ++k) y[k] = x[k];
  const uint32_t half = spec.n_rot / 2;
  for (uint32_t t = 0; t < sh.tokens; ++t) {
    for (uint32_t i = 0; i < half; ++i) {
      const double inv = std::pow(double(spec.theta_base), -2.0 * i / double(spec.n_rot));
      double theta = double(pos[t]) * double(spec.freq_scale) * inv;
      if (!spec.freq_factors.empty()) theta /= double(spec.freq_factors[i]);
      const double c = std::cos(theta), s = std::sin(theta);
      uint32_t ia, ib;
      pair_offsets(spec.mode, spec.n_rot, i, ia, ib);
      for (uint32_t h = 0; h < sh.heads; ++h) {
        const size_t base = (size_t(t) * sh.heads + h) * sh.head_dim;
        const double a = x[base + ia], b = x[base + ib];
        y[base + ia] = a * c - b * s;
        y[base + ib] = a * s + b * c;
      }
    }
  }
}

}  // namespace blockq::twin
