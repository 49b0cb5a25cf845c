// The KV cache of the GPU forward pass: k/v caches [n_ctx, n_kv_head,
// head_dim] of f32 or f16 (packed two per u32) and the kernel that stores a
// step's k and v rows into them (attention itself: kernels/attention).
#pragma once
#include <cstdint>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::model {

// Bytes of one k or v cache of n values of type kv (F32 or F16).
uint64_t kv_cache_bytes(Format kv, uint64_t n);

// Where the k and v rows of token t start in their buffers (elements):
// k_off + t * stride and v_off + t * stride; stride 0: the row length (k and
// v buffers of their own). A fused QKV projection's rows [q | k | v] give
// k_off = n_q, v_off = n_q + n_kv, stride = n_q + 2 * n_kv, one buffer bound
// twice (read-only aliasing is allowed). Element offsets rather than binding
// offsets: a binding offset must be a multiple of
// minStorageBufferOffsetAlignment (256 bytes by default), which n_q * 4 need
// not be, and a batch's rows interleave q, k and v anyway.
struct KvRows {
  uint32_t k_off = 0, v_off = 0, stride = 0;
};

// Stores k and v [m, n_kv_head * head_dim] (f32, placed as `rows` says) into
// their caches [n_ctx, n_kv_head * head_dim] of type kv (F32, or F16 rounded
// by pack2x16float) at rows pos[t], skipping positions >= n_ctx (op Copy: k =
// row length, m = tokens, tile = n_ctx, weight.format = kv, offsets.k / .v /
// .row = rows.k_off / v_off / stride).
class GpuKvStore {
 public:
  GpuKvStore() = default;
  GpuKvStore(const gpu::Context& ctx, uint32_t row, uint32_t n_ctx, uint32_t m, const gpu::Buffer& k, const gpu::Buffer& v,
             const gpu::Buffer& pos, const gpu::Buffer& k_cache, const gpu::Buffer& v_cache, Format kv = Format::F32,
             KvRows rows = {});
  void record(gpu::Recorder& rec) const;
  explicit operator bool() const { return kernel_ != nullptr; }  // made (not default-constructed)

 private:
  KernelSpec spec_;
  const gpu::Kernel* kernel_ = nullptr;
  gpu::BindGroup group_;
  gpu::Grid grid_;
};

}  // namespace blockq::model
