// GPU gather kernels: com.microsoft.GatherBlockQuantized (uint8 block-quantized
// data, 2/4/8 bits, f32 or f16 output) and embedding lookup from ggml tables
// (Q8_0, Q4_0, Q4_1, Q6_K, F16, F32). Weights are uploaded once, split by whole
// slices / rows into chunks that each fit one storage binding; indices are
// checked on the host before any dispatch; one dispatch per chunk holding a
// requested row. Also the Program form of a call, for export to the browser.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/registry.hpp"
#include "kernels/common/spec.hpp"
#include "kernels/gather/twin.hpp"

namespace blockq::gather {

enum class IndexType : uint8_t { I32, I64 };  // int64: uploaded as (lo, hi) u32 pairs
enum class OutType : uint8_t { F32, F16 };    // f16: two per u32, pack2x16float

struct Options {
  uint32_t workgroup_size = 0;     // 0: min(256, the device's invocation limits)
  uint64_t max_binding_bytes = 0;  // 0: the device's binding/buffer limits (tests force chunks)
};

// The largest chunk (bytes) one storage binding may hold on this device.
uint64_t chunk_limit(const gpu::Context& ctx, const Options& o);
uint32_t pick_workgroup_size(const gpu::Context& ctx, const Options& o);

// ---- GatherBlockQuantized
// Data viewed as [outer * axis_dim slices][inner logical elements]; slice
// s = m * axis_dim + index. Chunk c holds slices [slice_lo, slice_hi): the
// data bytes, scales and zero-point bytes of their rows (a data row = cols
// logical values; rows_per_slice = inner / cols).
struct GbqChunk {
  uint64_t slice_lo = 0, slice_hi = 0;
  uint64_t data_off = 0, data_bytes = 0;      // into data
  uint64_t scales_off = 0, scales_count = 0;  // into scales (f32)
  uint64_t zp_off = 0, zp_bytes = 0;          // into zero_points
};

struct GbqLayout {
  twin::GbqPlan plan;  // weight geometry (n_indices 0)
  KernelSpec spec;     // n = axis_dim, k = inner, tile = cols, variant bit0 int64, bit1 f16
  std::vector<GbqChunk> chunks;
  bool has_zp = false;
};

GbqLayout gbq_layout(const gpu::Context& ctx, const twin::GbqInputs& w, const twin::GbqSpec& spec,
                     OutType out, IndexType idx, const Options& o);
std::string gbq_wgsl(const GbqLayout& l, const twin::GbqSpec& spec);
// Throws blockq::Error naming the first index outside [-axis_dim, axis_dim),
// its flat position and coordinates; returns the normalised indices.
std::vector<int64_t> gbq_check_indices(const twin::IndexSpan& idx, const twin::Shape& shape,
                                       const twin::GbqPlan& p);
// Bytes a call must move: the gathered data, scales and zero points, the
// indices, and the output.
uint64_t gbq_bytes_moved(const GbqLayout& l, const twin::GbqSpec& spec, uint64_t n_indices,
                         IndexType idx, OutType out);

class GbqGpu {
 public:
  // w: data, scales, zero points and their shapes (indices ignored). Uploads
  // each chunk; indices buffer for up to max_indices indices.
  GbqGpu(gpu::Context& ctx, const twin::GbqInputs& w, const twin::GbqSpec& spec, OutType out,
         IndexType idx, uint64_t max_indices, const Options& o = {});
  ~GbqGpu();
  // Checks the indices (before anything is dispatched), uploads them and the
  // per-chunk parameters, and sizes the output: out_shape().
  void set_indices(const twin::IndexSpan& idx, const twin::Shape& shape);
  // One dispatch per chunk holding a requested slice.
  void record(gpu::Recorder& r) const;
  // Fills the output with the poison word (f32: NaN 0x7fc0dead; f16: 0x7dad pairs).
  void poison() const;
  std::vector<float> read_f32() const;      // OutType::F32
  std::vector<uint16_t> read_f16() const;   // OutType::F16
  const twin::Shape& out_shape() const { return out_shape_; }
  const GbqLayout& layout() const { return layout_; }
  size_t dispatches() const;
  const gpu::Buffer& out() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  GbqLayout layout_;
  twin::Shape out_shape_;
};

// The Program of one call (export and native replay): same WGSL and chunks.
kernels::Program gbq_program(const gpu::Context& ctx, const twin::GbqInputs& in,
                             const twin::GbqSpec& spec, OutType out, const Options& o);

// ---- Embedding lookup
struct EmbedChunk {
  uint64_t row_lo = 0, row_hi = 0;  // table rows held
  uint64_t byte_off = 0, bytes = 0;
};

struct EmbedLayout {
  KernelSpec spec;  // op Embed, weight.format, n = n_vocab, k = n_embd
  size_t row_bytes = 0;
  std::vector<EmbedChunk> chunks;
};

EmbedLayout embed_layout(const gpu::Context& ctx, const twin::EmbedSpec& spec, const Options& o);
std::string embed_wgsl(const EmbedLayout& l);
uint64_t embed_bytes_moved(const EmbedLayout& l, uint64_t n_ids);

class EmbedGpu {
 public:
  // table: n_vocab rows of row_bytes(format, n_embd) raw ggml bytes.
  EmbedGpu(gpu::Context& ctx, std::span<const uint8_t> table, const twin::EmbedSpec& spec,
           uint64_t max_ids, const Options& o = {});
  ~EmbedGpu();
  // Checks ids in [0, n_vocab) (blockq::Error naming the id and its position).
  void set_ids(std::span<const int32_t> ids);
  void record(gpu::Recorder& r) const;
  void poison() const;
  std::vector<float> read() const;  // [n_ids, n_embd]
  const EmbedLayout& layout() const { return layout_; }
  size_t dispatches() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  EmbedLayout layout_;
};

kernels::Program embed_program(const gpu::Context& ctx, std::span<const uint8_t> table,
                               const twin::EmbedSpec& spec, std::span<const int32_t> ids,
                               const Options& o);

inline constexpr uint32_t kPoisonF32 = 0x7fc0deadu;
inline constexpr uint32_t kPoisonF16x2 = 0x7dad7dadu;

}  // namespace blockq::gather
