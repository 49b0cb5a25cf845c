// Attention of query tokens over a KV cache on the GPU, split over positions
// (attention.wgsl, then combine.wgsl when more than one chunk is dispatched):
// q [m, n_head, head_dim] (rows of a fused QKV output allowed), k/v caches
// [n_ctx, n_kv_head, head_dim] in f32 or f16 (packed two per u32), out
// [m, n_head, head_dim]; token t sees positions 0..pos[t] (a padding
// token's 0xffffffff sees none and gets zeros). The order is twin.hpp's.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::attention {

struct Shape {
  uint32_t n_head = 0, n_kv_head = 0, head_dim = 0;
  uint32_t n_ctx = 0;       // cache positions
  uint32_t m = 1;           // query tokens
  Format kv = Format::F32;  // the cache's element type: F32 or F16
  // Where token t's query [n_head * head_dim] starts in the q buffer:
  // element q_off + t * q_stride (q_stride 0: n_head * head_dim, a q of its
  // own). A fused QKV projection leaves q at offset 0 of rows of
  // n_head * head_dim + 2 * n_kv_head * head_dim.
  uint32_t q_off = 0, q_stride = 0;
  uint32_t q_row() const { return q_stride ? q_stride : n_head * head_dim; }
};

struct Options {
  uint32_t max_wg = 256;  // the largest workgroup to plan (the adapter's limits may cut it)
  uint32_t chunk = 0;     // positions per workgroup (a multiple of the planned wg); 0: the wg
  uint32_t max_heads = 8; // the most query heads a workgroup takes (of one kv head's group)
  // Steps whose tokens see at most short_positions positions run a second
  // plan of their own (0: none), with these limits: there the work is too
  // small to fill the device, and smaller workgroups, each of fewer heads,
  // finish sooner (H200, docs/perf/2026-12-04-session28-h200.md).
  uint32_t short_positions = 2048;
  uint32_t short_max_wg = 128, short_max_heads = 1;
  Options short_plan() const { return {short_max_wg, 0, short_max_heads, 0}; }
};

// op Attention: n = n_head, k = head_dim, m = tokens, tile = n_ctx, variant =
// n_kv_head, weight.format = the cache type, wg = invocations (a power of
// two), tile_n = chunk (positions per workgroup, a multiple of wg), tile_m =
// query heads per workgroup (a divisor of the GQA group, <= o.max_heads), offsets.q =
// q_off, offsets.row = the q row stride (when not n_head * head_dim). Sized
// from the adapter's invocation and workgroup-storage limits.
KernelSpec plan(const gpu::Context& ctx, const Shape& s, const Options& o = {});
// Chunks of the cache: ceil(n_ctx / chunk).
uint32_t chunks(const KernelSpec& spec);
// Bytes of the partials' scratch [m, n_head, chunks, 2 + head_dim] f32 (16
// where one chunk covers the cache and there are none); with Options, the
// larger of its two plans'.
uint64_t scratch_bytes(const KernelSpec& spec);
uint64_t scratch_bytes(const gpu::Context& ctx, const Shape& s, const Options& o = {});
std::string wgsl(const KernelSpec& spec);
// The plan a step whose tokens see at most `visible` positions runs: the
// short plan up to o.short_positions (where it differs), else plan(ctx, s, o).
KernelSpec plan_for(const gpu::Context& ctx, const Shape& s, const Options& o, uint32_t visible);
// Chunks dispatched for `visible` positions: ceil(visible / chunk), 1 to chunks(spec).
uint32_t dispatched_chunks(const KernelSpec& spec, uint32_t visible);
// op AttentionCombine of the same shape.
KernelSpec combine_spec(const gpu::Context& ctx, const KernelSpec& spec);
std::string combine_wgsl(const KernelSpec& spec);

struct Args {
  const gpu::Buffer* q = nullptr;    // [m, n_head, head_dim] f32 at q_off, rows q_row() apart
  const gpu::Buffer* k = nullptr;    // [n_ctx, n_kv_head, head_dim] f32 or f16
  const gpu::Buffer* v = nullptr;    // [n_ctx, n_kv_head, head_dim] f32 or f16
  const gpu::Buffer* pos = nullptr;  // [m] u32
  const gpu::Buffer* out = nullptr;  // [m, n_head, head_dim] f32
  // The partials' scratch (scratch_bytes), which attentions recorded one
  // after another may share; null: the attention makes its own.
  const gpu::Buffer* part = nullptr;
};

// A bound attention: pipelines, bind groups (and the partials' scratch, when
// not given) made once; recorded per step.
class Attention {
 public:
  Attention() = default;
  Attention(const gpu::Context& ctx, const Shape& s, const Args& a, const Options& o = {});
  // Records the dispatches for tokens that see at most `visible` positions
  // (the largest min(pos[t] + 1, n_ctx) of the step): ceil(visible / chunk)
  // chunks, then the combine when that is more than one. Tokens that see
  // more than `visible` would be cut short.
  void record(gpu::Recorder& rec, uint32_t visible) const;
  // The plan record() runs for `visible` positions.
  const KernelSpec& spec(uint32_t visible = ~0u) const { return pick(visible).spec; }

 private:
  struct Plan {  // one planned kernel, its combine, and their bind groups
    KernelSpec spec, comb;
    const gpu::Kernel* kernel = nullptr;
    const gpu::Kernel* combine = nullptr;
    gpu::BindGroup group, comb_group;
  };
  const Plan& pick(uint32_t visible) const { return visible <= short_positions_ && short_ ? *short_ : long_; }
  void bind(const gpu::Context& ctx, Plan& p, const Args& a, const gpu::Buffer& part);
  Plan long_;
  std::optional<Plan> short_;
  uint32_t short_positions_ = 0;
  gpu::Buffer part_;
};

}  // namespace blockq::attention
