// Single-query attention on the GPU over an f32 KV cache (the decode step of
// the GPU forward pass): q [n_head, head_dim], k/v cache [n_ctx, n_kv_head,
// head_dim], out [n_head, head_dim]; one workgroup per query head, positions
// 0..pos[0] visible. Same order as twin::attention_decode (softmax/twin.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::model {

struct GpuAttentionShape {
  uint32_t n_head = 0, n_kv_head = 0, head_dim = 0;
  uint32_t n_ctx = 0;  // cache positions (the row stride of the scores)
};

// op Attention: n = n_head, k = head_dim, tile = n_ctx, variant = n_kv_head,
// wg = invocations per head (a power of two, <= 64 and the device's limit).
KernelSpec attention_spec(const gpu::Context& ctx, const GpuAttentionShape& s);
std::string attention_wgsl(const KernelSpec& spec);

struct GpuAttentionArgs {
  const gpu::Buffer* q = nullptr;       // [n_head, head_dim] f32
  const gpu::Buffer* k = nullptr;       // [n_ctx, n_kv_head, head_dim] f32
  const gpu::Buffer* v = nullptr;       // [n_ctx, n_kv_head, head_dim] f32
  const gpu::Buffer* pos = nullptr;     // [1] u32
  const gpu::Buffer* scores = nullptr;  // [n_head, n_ctx] f32 scratch
  const gpu::Buffer* out = nullptr;     // [n_head, head_dim] f32
};

// A bound attention dispatch: made once, recorded per token.
class GpuAttention {
 public:
  GpuAttention() = default;
  GpuAttention(const gpu::Context& ctx, const GpuAttentionShape& s, const GpuAttentionArgs& a);
  void record(gpu::Recorder& rec) const;
  const KernelSpec& spec() const { return spec_; }

 private:
  KernelSpec spec_;
  const gpu::Kernel* kernel_ = nullptr;
  gpu::BindGroup group_;
};

// Stores k and v [n_kv_head * head_dim] into their caches [n_ctx, n_kv_head *
// head_dim] at row pos[0] (op Copy: k = row length, tile = n_ctx).
class GpuKvStore {
 public:
  GpuKvStore() = default;
  GpuKvStore(const gpu::Context& ctx, uint32_t row, uint32_t n_ctx, const gpu::Buffer& k, const gpu::Buffer& v,
             const gpu::Buffer& pos, const gpu::Buffer& k_cache, const gpu::Buffer& v_cache);
  void record(gpu::Recorder& rec) const;

 private:
  KernelSpec spec_;
  const gpu::Kernel* kernel_ = nullptr;
  gpu::BindGroup group_;
  gpu::Grid grid_;
};

}  // namespace blockq::model
