// The quantize kernel of the int8 matvec that reads x from global memory
// (features.dot4 with kGlobalX, x_prequantized): x [m, k] f32 to int8 blocks
// of 32 in a scratch buffer xq (layout in xquant.wgsl), one dispatch before
// the matvec's. Its codes, scales and code sums are the staged kernel's
// (stage_i8.wgsl), so the twin's quantize_x describes both.
#pragma once
#include <cstdint>
#include <string>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::matvec::xquant {

// Op::QuantX spec for the int8 global-x matvec spec `mv`: k = K, n = KP (K
// padded to the matvec's units), m = M, tokens = the matvec's tokens per
// workgroup (xq holds whole chunks: MT = ceil(M / tokens) * tokens rows).
// With the RMSNorm prologue: one invocation a block (xquant_block.wgsl) in
// the matvec's wg, so the prologue reduces in the twin's order; else, where
// the matvec has subgroups, quads of subgroup lanes (xquant_quad.wgsl).
KernelSpec plan(const KernelSpec& mv);
std::string wgsl(const KernelSpec& s);
// Bytes of xq: MT * KP / 16 code vec4s and MT * KP / 32 meta vec4s.
uint64_t bytes(const KernelSpec& s);
gpu::Grid grid(const KernelSpec& s);

// The kernel bound to x, xq and (RMSNorm) the norm weight, recorded once per call.
class Prepared {
 public:
  void record(gpu::Recorder& rec) const;

 private:
  friend Prepared prepare(const gpu::Context&, const KernelSpec&, const gpu::Buffer&, const gpu::Buffer&,
                          gpu::Binding);
  const gpu::Kernel* kernel_ = nullptr;
  gpu::BindGroup group_;
  gpu::Grid grid_;
};

// x: [m, k] f32; xq: bytes(spec); norm_w: [k] f32 with the RMSNorm prologue.
// Throws blockq::Error on short or missing buffers.
Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const gpu::Buffer& x, const gpu::Buffer& xq,
                 gpu::Binding norm_w);

}  // namespace blockq::matvec::xquant
