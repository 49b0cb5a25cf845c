// The matvec operation on the GPU: a weight uploaded once in the kernel's
// layout (split by rows into chunks that each fit a binding), and a prepared
// dispatch (pipeline, bind groups and grids made once, recorded per token
// with no allocation).
#pragma once
#include <string>
#include <vector>

#include <memory>
#include <optional>

#include "gpu/arena.hpp"
#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/split_sum.hpp"
#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/layout.hpp"
#include "kernels/matvec/xquant.hpp"

namespace blockq::matvec {

// A weight in the matvec layout, in slices of a GPU arena: the caller's
// (a model's, shared by all its tensors) or its own.
struct Weights {
  WeightKind kind;
  uint32_t n = 0, k = 0;
  std::string label;
  struct Chunk {
    uint32_t row0 = 0, rows = 0;
    gpu::Slice main, side;  // side empty for formats without one
    gpu::Buffer params;     // uniform {row0, rows, side_off, 0}
  };
  std::vector<Chunk> chunks;
  std::unique_ptr<gpu::Arena> own;  // the arena of a weight uploaded alone
  uint64_t bytes() const;  // main + side bytes on the device
};

struct UploadOptions {
  uint32_t row_granularity = 256;  // chunk rows are a multiple (keep RPW and head_dim | it)
  uint64_t max_chunk_bytes = 0;    // 0: the binding / buffer limit
  // Where the chunks go: this arena, which the caller flushes before binding
  // the weight; nullptr: an arena of the weight's own, flushed on return.
  gpu::Arena* arena = nullptr;
};

// Repacks and uploads w; a weight past the binding limit is split by rows.
Weights upload(const gpu::Context& ctx, const HostWeight& w, const std::string& label,
               const UploadOptions& opt = {});

struct Args {
  const Weights* a = nullptr;      // the weight (gate for SiluGate)
  const Weights* b = nullptr;      // SiluGate: up
  const gpu::Buffer* x = nullptr;  // [m, k] f32
  const gpu::Buffer* y = nullptr;  // [m, n] f32
  gpu::Binding norm_w;                  // [k] f32 (RmsNorm): a buffer or an arena slice
  gpu::Binding bias;                    // [n] f32
  const gpu::Buffer* pos = nullptr;     // [m] u32 (RoPE)
  // The KV store (Hooks::kv_n): caches [kv_ctx, kv_n] f32, or u32 f16 pairs.
  const gpu::Buffer* k_cache = nullptr;
  const gpu::Buffer* v_cache = nullptr;
  // Split-k: a scratch for the partial sums (split_sum::partial_bytes), which
  // callers that record one kernel at a time may share; null: prepare makes one.
  const gpu::Buffer* part = nullptr;
  // x pre-quantized (x_prequantized): a scratch for the quantized x
  // (xquant::bytes), which callers that record one kernel at a time may
  // share; null: prepare makes one.
  const gpu::Buffer* xq = nullptr;
};

class Prepared {
 public:
  KernelSpec spec;
  void record(gpu::Recorder& rec) const;

 private:
  friend Prepared prepare(const gpu::Context&, const KernelSpec&, const Args&);
  const gpu::Kernel* kernel_ = nullptr;
  std::vector<gpu::BindGroup> groups_;
  std::vector<gpu::Grid> grids_;
  gpu::Buffer part_;                      // split-k without Args::part: [splits][weights][m][n] partial sums
  std::optional<split_sum::Prepared> sum_;  // split-k: adds them, runs the epilogue
  gpu::Buffer xq_;                          // x pre-quantized without Args::xq: the quantized x
  std::optional<xquant::Prepared> quant_;   // x pre-quantized: quantizes x before the matvec
};

// Compiles (or finds in the cache) spec's kernel and binds args, one bind
// group per row chunk (with split-k, also a partial-sum buffer and the
// split_sum kernel; with x pre-quantized, the quantize kernel, recorded
// first). Throws blockq::Error on mismatched shapes.
Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const Args& args);

}  // namespace blockq::matvec
