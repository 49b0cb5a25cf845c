// CPU twin of the gemm kernel and its float64 reference.
//
// Shapes: x [m, k] f32, W [n, k] raw ggml blocks, y [m, n] f32.
// Block decode: each row is decoded by traits(format).dequantize (ggml's
// reference dequantizer, in f32), which the fmt/*.wgsl dq4 functions compute
// from the same blocks repacked into the matvec layout (the repacking moves
// bytes, it changes no value).
// Summation order, per output (t, r): over the k tiles in order, within a
// tile over k in order, acc = acc + w[e] * x[t, e] (a separate multiply and
// add; the tiling does not change the order, so this is one pass over k).
// With split-k each slice of whole k tiles is such a pass from 0, and the
// slices' sums are added in slice order.
// The int8 kernel (features.dot4; Q8_0, Q4_x, Q5_x, K-quants): each token's x
// quantized as matvec::quantize_x does (codes qx, scales dx per block of 32,
// code sums per 16), the weight's raw codes c, scales and mins per block of
// 32 as matvec::raw_rows gives them (Q4_0: c = q - 8; Q5_0: q - 16; Q4_K,
// Q5_K: scale d * sc, min -(dmin * m)); per output, blocks b in k order: acc
// = acc + (scale * dx) * f32(i), i = sum of c * qx over the block (exact),
// then with a min acc = acc + min * (dx * f32(sum of qx)); Q6_K (c = q - 32,
// a scale per 16) and Q3_K (c = q - 4, likewise) sum and fold each half of a
// block on its own. (The
// kernel sums q * qx and takes 8, 16 or 32 times the sum of qx off: the same
// integer.)
// Its float64 reference is the f32 kernel's (x not quantized).
// Epilogue: store, y = y + acc, or silu(acc_gate) * acc_up with silu(v) =
// v / (1 + exp(-v)). The GPU may contract a * b + c into one FMA, so parity
// is checked to a tolerance.
#pragma once
#include <span>
#include <vector>

#include "kernels/common/spec.hpp"
#include "kernels/gemm/op.hpp"

namespace blockq::gemm {

struct TwinInputs {
  const matvec::HostWeight* a = nullptr;  // the weight (gate for SiluGate), raw ggml rows
  const matvec::HostWeight* b = nullptr;  // SiluGate: up
  std::span<const float> x;       // [m, k]
  std::span<const float> y_in;    // [m, n] (Acc: the values added to)
  uint32_t m = 0;
};

// y: [m, n] in f32, in the kernel's order.
std::vector<float> twin(const KernelSpec& spec, const TwinInputs& in);
// The same in float64 from the reference dequantization.
std::vector<double> reference(const KernelSpec& spec, const TwinInputs& in);

}  // namespace blockq::gemm
