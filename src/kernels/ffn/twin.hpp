// CPU twin of the FFN gate kernel (SiLU(g) * u, elementwise f32) and its
// float64 reference.
//
// Shapes: g, u, h [tokens, n_ff] (any flat length n). For each element:
//   nv = min(-v, 88.0f)    (v = g[k]; keeps exp finite: WGSL gives no inf)
//   e  = expf(nv)
//   d  = 1.0f + e
//   s  = v / d             (silu; a true division, not v * (1/d))
//   h  = s * u[k]
// each one rounded f32 op. The clamp changes silu only for v < -88, where the
// exact value is below 1.5e-36 in magnitude and the twin gives v / 1.65e38.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace blockq::twin {

// Elementwise: the result does not depend on the spec; wg only sets the
// dispatch of the GPU kernel (one element per invocation).
struct SiluGateSpec {
  uint32_t wg = 256;
};

// h[k] = silu(g[k]) * u[k] for k < n; h may alias g or u.
void silu_gate(std::span<const float> g, std::span<const float> u, std::span<float> h,
               const SiluGateSpec& spec);

// Float64 reference: g / (1 + exp(-g)) * u in double.
void silu_gate_ref(std::span<const float> g, std::span<const float> u, std::span<double> h);

}  // namespace blockq::twin
