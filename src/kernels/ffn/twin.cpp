// SiLU-gate CPU twin and float64 reference (see twin.hpp for the op order).
#include "kernels/ffn/twin.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace blockq::twin {

void silu_gate(std::span<const float> g, std::span<const float> u, std::span<float> h,
               const SiluGateSpec& spec) {
  BQ_ASSERT(g.size() == u.size() && h.size() == g.size(), "silu_gate: g {} u {} h {}", g.size(),
            u.size(), h.size());
  BQ_ASSERT(spec.wg > 0, "silu_gate: wg 0");
  for (size_t k = 0; k < g.size(); ++k) {
    const float v = g[k];
    const float nv = std::min(-v, 88.0f);
    const float e = std::exp(nv);
    const float d = 1.0f + e;
    const float s = v / d;
    h[k] = s * u[k];
  }
}

void silu_gate_ref(std::span<const float> g, std::span<const float> u, std::span<double> h) {
  BQ_ASSERT(g.size() == u.size() && h.size() == g.size(), "silu_gate_ref: g {} u {} h {}", g.size(),
            u.size(), h.size());
  for (size_t k = 0; k < g.size(); ++k) {
    const double v = g[k];
    h[k] = v / (1.0 + std::exp(-v)) * u[k];
  }
}

}  // namespace blockq::twin
