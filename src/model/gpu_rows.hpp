// Row-wise kernels of the GPU prompt pass, where the projections run through
// gemm::matmul, which has no RMSNorm prologue, bias or RoPE epilogue:
// GpuRmsNorm (x [m, n] -> y [m, n], the twin::rmsnorm order) and GpuRope (in
// place on y [m, heads, head_dim]: + bias, then RoPE in the twin::rope order,
// optionally with Llama 3.1's freq factors). Also used for single tokens when
// the model has rope_freqs (the matvec RoPE epilogue has no freq factors).
#pragma once
#include <cstdint>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::model {

// op RmsNorm: k = n, m = rows, wg = invocations per row (a power of two <= 64
// and the device's limit), hooks.eps.
KernelSpec rmsnorm_spec(const gpu::Context& ctx, uint32_t n, uint32_t m, float eps);

class GpuRmsNorm {
 public:
  GpuRmsNorm() = default;
  // x, y: [m, n] f32 (distinct); w: [n] f32.
  GpuRmsNorm(const gpu::Context& ctx, uint32_t n, uint32_t m, float eps, const gpu::Buffer& x, gpu::Binding w,
             const gpu::Buffer& y);
  void record(gpu::Recorder& rec) const;
  const KernelSpec& spec() const { return spec_; }

 private:
  KernelSpec spec_;
  const gpu::Kernel* kernel_ = nullptr;
  gpu::BindGroup group_;
};

struct GpuRopeShape {
  uint32_t m = 1;         // tokens
  uint32_t heads = 0;     // heads per token
  uint32_t head_dim = 0;  // even
  uint32_t n_rot = 0;     // rotated dims per head: even, <= head_dim
  float base = 10000.0f, scale = 1.0f;
  blockq::RopeMode mode = blockq::RopeMode::Normal;
  bool rope = true;  // false: the bias only
  // Heads [rope_heads, heads) of each token get the bias only (0: none):
  // a fused QKV output [q | k | v] is heads = n_head + 2 n_kv of which the
  // first n_head + n_kv are rotated.
  uint32_t rope_heads = 0;
};

struct GpuRopeArgs {
  const gpu::Buffer* y = nullptr;     // [m, heads, head_dim] f32, in place
  const gpu::Buffer* pos = nullptr;   // [m] u32; 0xffffffff: a padding token, not rotated
  gpu::Binding bias;  // [heads * head_dim] f32, or none
  gpu::Binding freq;  // [n_rot / 2] f32 freq factors, or none
};

// op Rope: n = heads, k = head_dim, m = tokens, hooks (mode, n_rot, base,
// scale, bias, rope_rows = rope_heads * head_dim), variant = 1 + 2 (rope) + 4
// (freq factors).
KernelSpec rope_spec(const gpu::Context& ctx, const GpuRopeShape& s, bool bias, bool freq);
std::string rope_wgsl(const KernelSpec& spec);

class GpuRope {
 public:
  GpuRope() = default;
  GpuRope(const gpu::Context& ctx, const GpuRopeShape& s, const GpuRopeArgs& a);
  void record(gpu::Recorder& rec) const;
  const KernelSpec& spec() const { return spec_; }

 private:
  KernelSpec spec_;
  const gpu::Kernel* kernel_ = nullptr;
  gpu::BindGroup group_;
  gpu::Grid grid_;
};

}  // namespace blockq::model
