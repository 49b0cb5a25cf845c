// CPU twin of the RoPE kernel (rotary position embedding, in place, f32) and
// its float64 reference, with ggml's pair conventions.
//
// Shapes: x [tokens, heads, head_dim] row-major, pos [tokens] (int32).
// For token t at position p = pos[t], pair index i in [0, n_rot/2):
//   ex      = (-2.0f * (float)i) / (float)n_rot
//   inv     = powf(theta_base, ex)
//   tp      = (float)p * inv
//   tp      = tp / freq_factors[i]     (only with freq_factors: Llama 3.1's
//                                        rope_freqs.weight; ggml: theta_extrap)
//   theta   = freq_scale * tp          (ggml: freq_scale * theta_extrap)
//   c, s    = cosf(theta), sinf(theta)
// and the pair (a, b) of the row becomes
//   a' = (a * c) - (b * s),   b' = (a * s) + (b * c)
// (each product and sum one rounded f32 op). The pair is
//   Normal (ggml mode 0, LLaMA):  (2i, 2i+1)
//   Neox   (ggml mode 2, Qwen2):  (i, i + n_rot/2)
// Dims n_rot .. head_dim-1 pass through unchanged. No YaRN / ext_factor or
// attn_factor (ggml's mscale is 1 here).
// Note: ggml's CPU op builds inv by repeated multiplication (theta *= scale);
// blockq computes powf per pair, which a GPU can do without a serial chain.
#pragma once
#include <cstdint>
#include <span>

#include "kernels/common/spec.hpp"  // blockq::RopeMode {Normal, Neox}

namespace blockq::twin {

struct RopeSpec {
  uint32_t n_rot = 0;                // rotated dims per head: even, <= head_dim
  float theta_base = 10000.0f;       // ggml freq_base
  float freq_scale = 1.0f;           // linear position scaling (1 = none)
  RopeMode mode = RopeMode::Normal;  // Normal: ggml mode 0; Neox: ggml mode 2
  // [n_rot / 2] divisors of each pair's angle (ggml's freq_factors, the
  // rope_freqs.weight tensor of Llama 3.1-style scaling); empty: none.
  std::span<const float> freq_factors = {};
};

// Shape of the rows: x is [tokens, heads, head_dim].
struct RopeShape {
  uint32_t tokens = 0;
  uint32_t heads = 0;
  uint32_t head_dim = 0;
};

// Rotates x in place; pos: [tokens].
void rope(std::span<float> x, std::span<const int32_t> pos, const RopeShape& shape,
          const RopeSpec& spec);

// Float64 reference: inv = base^(-2i/n_rot), theta = p * freq_scale * inv
// (/ freq_factors[i]), all in double; x is read as f32, y [tokens, heads, head_dim] written in double.
void rope_ref(std::span<const float> x, std::span<double> y, std::span<const int32_t> pos,
              const RopeShape& shape, const RopeSpec& spec);

}  // namespace blockq::twin
