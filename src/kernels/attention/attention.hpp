// Attention of query tokens over a KV cache on the GPU, split over positions
// (attention.wgsl, then combine.wgsl when more than one chunk is dispatched):
// q [m, n_head, head_dim] (rows of a fused QKV output allowed), k/v caches
// [n_ctx, n_kv_head, head_dim] in f32 or f16 (packed two per u32), out
// [m, n_head, head_dim]; token t sees positions 0..pos[t] (a padding
// token's 0xffffffff sees none and gets zeros). The order is twin.hpp's.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// A plan for steps whose tokens see at most `positions` positions. There the
// work is too small to fill the device, and workgroups of one head, sized to
// the positions (one chunk where they fit), finish sooner (H200,
// docs/perf/2026-12-04-session28-h200.md and -session32-h200.md).
struct Tier {
  uint32_t positions = 0;
  uint32_t max_wg = 128, max_heads = 1, k_quads = 32, v_loads = 8;
};

// The prompt kernel (rows.wgsl): a workgroup takes a tile of tokens times
// the query heads of one kv head and reads each tile of keys and values once
// for all of them, where the per-token kernel reads the cache once per token.
struct RowsOptions {
  // Attention runs it for shapes of at least this many tokens (0: never). At
  // 16 tokens it lost to the per-token kernel below about 1000 positions on
  // smollm2-360m's heads, and in the models' 32-row passes from position 0;
  // it won at 128 tokens everywhere (H100, session 40).
  uint32_t min_rows = 64;
  // Fewer tokens, from min_rows_far on (0: never), run it in the steps that
  // see more than far_positions positions, the per-token plans in the others
  // (a chat turn's few tokens after a long history). At 16 tokens (H100,
  // session 40) it won from 1024 positions on on llama-3-8b's and
  // llama-3.2-1b's heads and at 4096 on smollm2-360m's, where it lost by
  // 1.8 us at 1024 and by 12.7 at 512.
  uint32_t min_rows_far = 16;
  uint32_t far_positions = 512;
  uint32_t max_wg = 256;      // the largest workgroup to plan (256 beat 128 and 64 on the H100)
  uint32_t rows = 32;         // query rows (tokens x heads) a workgroup takes, at most
  uint32_t keys = 32;         // keys a tile (a power of two >= 4; fewer where workgroup memory is short)
  uint32_t max_heads = 8;     // the most query heads of a kv head's group a workgroup takes
  uint32_t min_groups = 256;  // chunks of positions are cut until the grid has this many workgroups
  uint32_t min_chunk = 256;   // positions a chunk keeps at least
};

struct Options {
  uint32_t max_wg = 256;  // the largest workgroup to plan (the adapter's limits may cut it)
  uint32_t chunk = 0;     // positions per workgroup (a multiple of the planned wg); 0: the wg
  uint32_t max_heads = 8; // the most query heads a workgroup takes (of one kv head's group)
  // Loads in flight: the most quads of a k row loaded before their sums (the
  // largest power of two up to it dividing head_dim / 4 is taken), and the
  // positions of a V group loaded before their sums. Neither changes the
  // order of a sum.
  uint32_t k_quads = 8, v_loads = 16;
  // By ascending positions: a step runs the first tier that covers the
  // positions its tokens see, else the plan above. Empty: that plan always.
  std::vector<Tier> tiers = {{.positions = 64, .max_wg = 128},
                             {.positions = 128, .max_wg = 256},
                             {.positions = 256, .max_wg = 512},
                             {.positions = 2048, .max_wg = 128, .v_loads = 16}};
  RowsOptions rows;  // the prompt kernel, for shapes of rows.min_rows tokens or more
  // The options of tier t's plan (no tiers of their own).
  Options tier_plan(const Tier& t) const {
    return {.max_wg = t.max_wg, .max_heads = t.max_heads, .k_quads = t.k_quads, .v_loads = t.v_loads, .tiers = {},
            .rows = {.min_rows = 0}};
  }
};

// op Attention: n = n_head, k = head_dim, m = tokens, tile = n_ctx, variant =
// n_kv_head, weight.format = the cache type, wg = invocations (a power of
// two), tile_n = chunk (positions per workgroup, a multiple of wg), tile_m =
// query heads per workgroup (a divisor of the GQA group, <= o.max_heads), offsets.q =
// q_off, offsets.row = the q row stride (when not n_head * head_dim), unroll
// = k quads in flight, rpl = V loads in flight. Sized from the adapter's
// invocation and workgroup-storage limits.
KernelSpec plan(const gpu::Context& ctx, const Shape& s, const Options& o = {});
// Workgroup memory the kernel declares for hg heads, head_dim, chunk and wg, in bytes.
uint64_t shared_bytes(uint32_t hg, uint32_t head_dim, uint32_t chunk, uint32_t wg);
// Chunks of the cache: ceil(n_ctx / chunk).
uint32_t chunks(const KernelSpec& spec);
// Bytes of the partials' scratch [m, n_head, chunks, 2 + head_dim] f32 (16
// where one chunk covers the cache and there are none); with Options, the
// largest of its plans' (tiers and the plan beyond them).
uint64_t scratch_bytes(const KernelSpec& spec);
uint64_t scratch_bytes(const gpu::Context& ctx, const Shape& s, const Options& o = {});
std::string wgsl(const KernelSpec& spec);
// The plan a step whose tokens see at most `visible` positions runs: the
// first of o.tiers covering them, else plan(ctx, s, o).
KernelSpec plan_for(const gpu::Context& ctx, const Shape& s, const Options& o, uint32_t visible);
// Chunks dispatched for `visible` positions: ceil(visible / chunk), 1 to chunks(spec).
uint32_t dispatched_chunks(const KernelSpec& spec, uint32_t visible);
// Whether Attention runs the prompt kernel for this shape alone (s.m >=
// o.rows.min_rows > 0), or besides the per-token plans for steps that see
// more than o.rows.far_positions positions (s.m >= o.rows.min_rows_far > 0,
// n_ctx beyond far_positions).
bool uses_rows(const Shape& s, const Options& o);
bool uses_rows_far(const Shape& s, const Options& o);
// op AttentionRows: n = n_head, k = head_dim, m = tokens, tile = n_ctx,
// variant = n_kv_head, weight.format = the cache type, wg, tile_m = query
// heads per workgroup HG, reg_m = tokens per workgroup TQ, reg_n = keys per
// tile BK, tile_n = chunk (positions per workgroup z, a multiple of BK),
// offsets as plan()'s. Sized from the adapter's invocation, workgroup-storage,
// binding and grid limits. Grid: (n_head / HG, ceil(m / TQ), chunks).
KernelSpec plan_rows(const gpu::Context& ctx, const Shape& s, const RowsOptions& o = {});
// Workgroup memory of the prompt kernel for qr query rows, bk keys a tile,
// head_dim and wg invocations, in bytes.
uint64_t rows_shared_bytes(uint32_t qr, uint32_t bk, uint32_t head_dim, uint32_t wg);
// The lanes that score and sum each query row of a prompt kernel: the
// largest power of two <= wg / (query rows) and <= the keys a tile.
uint32_t rows_lanes(const KernelSpec& spec);
std::string rows_wgsl(const KernelSpec& spec);
namespace detail {
// The WGSL functions k_quad(i) and v_quad(i) -> elements i .. i + 3 (i a
// multiple of 4) of the k and v caches (f16: packed two per u32, read as
// vec2<u32>; f32: vec4f), for both kernels.
std::string kv_funcs(bool f16);
// What both kernels check of a shape (a bad one throws, naming the field),
// and the spec fields they share: op, n = n_head, k = head_dim, m, tile =
// n_ctx, variant = n_kv_head, the KV cache format, q's offset and row
// stride, the grid's limit.
KernelSpec shape_spec(Op op, const Shape& s, const WGPULimits& lim);
}  // namespace detail
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
  const Plan& pick(uint32_t visible) const;
  void bind(const gpu::Context& ctx, Plan& p, const Args& a, const gpu::Buffer& part);
  Plan long_;
  std::vector<std::pair<uint32_t, Plan>> tiers_;  // (positions, plan), ascending
  Plan far_;                // the prompt kernel for steps beyond far_positions_ (uses_rows_far)
  uint32_t far_positions_ = 0;
  gpu::Buffer part_;
};

}  // namespace blockq::attention
