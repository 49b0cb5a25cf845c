// The gemm operation on the GPU: a weight uploaded once as raw ggml rows (split
// by rows into chunks that each fit a binding), and a prepared dispatch
// (pipeline, bind groups, per-chunk params and grids made once, recorded per
// prompt with no allocation).
#pragma once
#include <span>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/gemm/generator.hpp"

namespace blockq::gemm {

// A weight as it arrives on the host: n rows of k elements as raw ggml blocks.
struct HostWeight {
  WeightKind kind;
  uint32_t n = 0, k = 0;
  std::span<const uint8_t> ggml;  // n * row_bytes(format, k) bytes
};

struct Weights {
  WeightKind kind;
  uint32_t n = 0, k = 0;
  std::string label;
  struct Chunk {
    uint32_t row0 = 0, rows = 0;
    gpu::Buffer raw;  // rows * row_bytes bytes of blocks, then 4 bytes of padding
  };
  std::vector<Chunk> chunks;
  uint64_t bytes() const;
};

struct UploadOptions {
  uint64_t max_chunk_bytes = 0;  // 0: the binding / buffer limit
};

// Checks w (format, k, byte count) and uploads it; past the binding limit it
// is split by rows. Throws blockq::Error naming the label.
Weights upload(const gpu::Context& ctx, const HostWeight& w, const std::string& label,
               const UploadOptions& opt = {});

struct Args {
  const Weights* a = nullptr;      // the weight (gate for SiluGate)
  const Weights* b = nullptr;      // SiluGate: up
  const gpu::Buffer* x = nullptr;  // [m, k] f32
  const gpu::Buffer* y = nullptr;  // [m, n] f32
  uint32_t m = 0;                  // tokens
};

class Prepared {
 public:
  KernelSpec spec;
  uint32_t m = 0;
  void record(gpu::Recorder& rec) const;

 private:
  friend Prepared prepare(const gpu::Context&, const KernelSpec&, const Args&);
  const gpu::Kernel* kernel_ = nullptr;
  std::vector<gpu::Buffer> params_;  // uniform {row0, rows, m, n} per chunk
  std::vector<gpu::BindGroup> groups_;
  std::vector<gpu::Grid> grids_;
};

// Compiles (or finds in the cache) spec's kernel and binds args, one bind
// group per row chunk. Throws blockq::Error on mismatched shapes.
Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const Args& args);

}  // namespace blockq::gemm
