// CPU twin of the matvec kernel, driven by the same KernelSpec, and its
// float64 reference.
//
// Shapes: x [m, k] f32, W [n, k] (ggml blocks or ONNX), y [m, n] f32.
// Block decode: each element is decoded in f32 exactly as ggml's (or ONNX
// Runtime's) reference dequantizer does it (e.g. Q8_0: d * q; Q4_K:
// (d * sc) * q - (dmin * m)), which is what the fmt/*.wgsl chunk functions
// compute. Summation order, per (token, row):
//   1. the input is staged x' = x, or (x * s) * nw with s = 1 / sqrt(ss / k +
//      eps) and ss the strided sum of x^2 over spec.wg invocations, tree-added;
//   2. lane l (0 <= l < tpr) of the row walks the tiles in order; in the tile
//      of units [u0, u1) it takes u = u0 + l, u0 + l + tpr, ... and, for each
//      unit, each 8-element chunk c in order:
//        acc = acc + (dot(w[0..4], x'[0..4]) + dot(w[4..8], x'[4..8]))
//      where dot(a, b) = ((a0 b0 + a1 b1) + a2 b2) + a3 b3;
//   3. the tpr lane sums are added by a tree (s = tpr/2, ..., 1:
//      p[i] = p[i] + p[i + s]), which the subgroup butterfly also yields;
//   4. the epilogue: + bias, then store, accumulate, silu(a) * b, or RoPE
//      with the pair partner (theta = (pos * scale) * base^(-2i / n_rot)).
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

// Dequantized rows [row0, row0 + rows) of w, each padded with zeros to
// unit_info(kind, k).kp elements.
std::vector<float> dequantize_rows(const HostWeight& w, uint32_t row0, uint32_t rows);

}  // namespace blockq::matvec
