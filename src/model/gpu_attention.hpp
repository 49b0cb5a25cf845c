// Attention on the GPU over an f32 or f16 KV cache (the GPU forward pass): q
// [m, n_head, head_dim], k/v cache [n_ctx, n_kv_head, head_dim] (f16: packed
// two per u32), out [m, n_head, head_dim]; one workgroup per query head and token, token t seeing positions
// 0..pos[t]. Same order as twin::attention_decode (softmax/twin.hpp).
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
  uint32_t m = 1;      // query tokens
  Format kv = Format::F32;  // the cache's element type: F32 or F16
  // Where token t's query [n_head * head_dim] starts in the q buffer:
  // element q_off + t * q_stride (q_stride 0: n_head * head_dim, a q of its
  // own). A fused QKV projection leaves q at offset 0 of rows of
  // n_head * head_dim + 2 * n_kv_head * head_dim.
  uint32_t q_off = 0, q_stride = 0;
  uint32_t q_row() const { return q_stride ? q_stride : n_head * head_dim; }
};

// Bytes of one k or v cache of n values of type kv (F32 or F16).
uint64_t kv_cache_bytes(Format kv, uint64_t n);

// op Attention: n = n_head, k = head_dim, m = tokens, tile = n_ctx, variant = n_kv_head,
// weight.format = the cache type,
// wg = invocations per head (a power of two, <= 64 and the device's limit),
// offsets.q = q_off, offsets.row = the q row stride (when not n_head * head_dim).
KernelSpec attention_spec(const gpu::Context& ctx, const GpuAttentionShape& s);
std::string attention_wgsl(const KernelSpec& spec);

struct GpuAttentionArgs {
  const gpu::Buffer* q = nullptr;       // [m, n_head, head_dim] f32 at q_off, rows q_row() apart
  const gpu::Buffer* k = nullptr;       // [n_ctx, n_kv_head, head_dim] f32 or f16
  const gpu::Buffer* v = nullptr;       // [n_ctx, n_kv_head, head_dim] f32 or f16
  const gpu::Buffer* pos = nullptr;     // [m] u32
  const gpu::Buffer* scores = nullptr;  // [m, n_head, n_ctx] f32 scratch
  const gpu::Buffer* out = nullptr;     // [m, n_head, head_dim] f32
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

 private:
  KernelSpec spec_;
  const gpu::Kernel* kernel_ = nullptr;
  gpu::BindGroup group_;
  gpu::Grid grid_;
};

}  // namespace blockq::model
