// CPU twin of the matvec kernel, driven by the same KernelSpec, and its
// float64 reference.
//
// Shapes: x [m, k] f32, W [n, k] (ggml blocks or ONNX), y [m, n] f32.
// Block decode (raw.hpp): each element is a raw code (q, or q minus the
// format's offset or zero point, exact in f32) in a scale group with a scale
// and, for Q4_1/Q5_1/Q4_K/Q5_K, a min, computed in f32 as the fmt/*.wgsl
// snippets do (e.g. Q4_K: scale d * sc, min -(dmin * m)); the float formats
// have their values and no scale. Summation order, per (token, row):
//   1. the input is staged x' = x, or (x * s) * nw with s = 1 / sqrt(ss / k +
//      eps) and ss = rms_sum_squares(x, k, spec.wg) (with kRmsLate x' = x * nw,
//      and step 3's sum times s);
//      with a min, sx[g] = sum of x' over group g: s4 = v0 + v1 + ... over its
//      vec4s, then (s4.x + s4.y) + (s4.z + s4.w);
//   2. lane l (0 <= l < tpr) of the row walks the tiles in order; in the tile
//      of units [u0, u1) it takes u = u0 + l, u0 + l + tpr, ... and, for each
//      unit, each group g in order (chunks c of 8 elements within it):
//        p = d(c0); p = p + d(c1); ...  with d(c) = dot(q[0..4], x'[0..4]) + dot(q[4..8], x'[4..8])
//        acc = acc + scale[g] * p;  then, with a min, acc = acc + min[g] * sx[g]
//      (float formats: acc = acc + d(c) per chunk), where
//      dot(a, b) = ((a0 b0 + a1 b1) + a2 b2) + a3 b3;
//   3. the tpr lane sums are added by a tree (s = tpr/2, ..., 1:
//      p[i] = p[i] + p[i + s]), which the subgroup butterfly also yields;
//      with split-k (spec.splits = S) steps 2 and 3 run per slice of
//      ceil(units / S) units, and the slice sums are added in order
//      (v = p0; v = v + p1; ...); with kRmsLate, v = v * s (each weight's);
//   4. the epilogue: + bias, then store, accumulate, silu(a) * b, or RoPE
//      with the pair partner (theta = (pos * scale) * base^(-2i / n_rot)).
// With int8 activations (spec.features.dot4), step 1 also quantizes x' per
// block b of 32 elements: amax = max |x'|, inv = qinv(amax) (three fma Newton
// steps towards 1 / amax from a bit-trick seed, times 127; 0 below
// kInt8Tiny), codes q = clamp(round_half_even(x' * inv), -127, 127), scale
// dx[b] = amax * kInv127, code sums per 16 elements; and step 2 becomes, per
// group g (block b):  i = sum of code * q (exact integers);
//   acc = acc + (scale[g] * dx[b]) * f32(i);  then, with a min,
//   acc = acc + min[g] * (dx[b] * f32(sum of q over g)).
// The GPU may contract a * b + c into one FMA, so parity is checked to a
// tolerance, not bit for bit.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/spec.hpp"
#include "kernels/matvec/layout.hpp"

namespace blockq::matvec {

struct TwinInputs {
  const HostWeight* a = nullptr;       // the weight (gate for SiluGate)
  const HostWeight* b = nullptr;       // SiluGate: the up weight
  std::span<const float> x;            // [m, k]
  std::span<const float> norm_w;       // [k] (RmsNorm prologue)
  std::span<const float> bias;         // [n] (bias hook)
  std::span<const uint32_t> pos;       // [m] (RoPE)
  std::span<const float> y_in;         // [m, n] (Acc: the values added to)
};

// y: [m, n], in f32, in the kernel's order.
std::vector<float> twin(const KernelSpec& spec, const TwinInputs& in);
// The same in float64 from the reference dequantization, for error measures.
std::vector<double> reference(const KernelSpec& spec, const TwinInputs& in);

// The int8 quantization of one staged x row (features.dot4), as the kernel
// does it; x.size() a multiple of 32.
struct QuantX {
  std::vector<int8_t> q;     // codes
  std::vector<float> scale;  // per block of 32
  std::vector<int32_t> sum;  // code sums per 16
};
QuantX quantize_x(std::span<const float> x);

// The RMSNorm prologue's sum of squares of x [k] in rms_scale.wgsl's order:
// partial i (0 <= i < wg) adds, over the vec4s i, i + wg, ... of x, (x0^2 +
// x1^2) + (x2^2 + x3^2) to itself; sum j (0 <= j < RL = min(wg, 32)) adds
// partials j * wg / RL .. (j + 1) * wg / RL - 1 in order; the RL sums are
// added in order. k a multiple of 4, wg a power of two.
float rms_sum_squares(const float* x, uint32_t k, uint32_t wg);

// Dequantized rows [row0, row0 + rows) of w, each padded with zeros to
// unit_info(kind, k).kp elements.
std::vector<float> dequantize_rows(const HostWeight& w, uint32_t row0, uint32_t rows);

}  // namespace blockq::matvec
