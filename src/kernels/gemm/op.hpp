// The gemm operation on the GPU: a prepared dispatch (pipeline, bind groups,
// per-chunk params and grids made once, recorded per prompt with no
// allocation) over a weight uploaded once by matvec::upload (the gemm reads
// the matvec layout, row chunk by row chunk, so one copy serves both kernels).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/split_sum.hpp"
#include "kernels/gemm/generator.hpp"
#include "kernels/matvec/op.hpp"
#include "kernels/matvec/xquant.hpp"

namespace blockq::gemm {

struct Args {
  const matvec::Weights* a = nullptr;  // the weight (gate for SiluGate)
  const matvec::Weights* b = nullptr;  // SiluGate: up
  const gpu::Buffer* x = nullptr;      // [m, k] f32
  const gpu::Buffer* y = nullptr;      // [m, n] f32
  uint32_t m = 0;                      // tokens
  // Split-k: a scratch for the partials (split_sum::partial_bytes), which
  // callers that run one kernel at a time may share; null: prepare makes one.
  const gpu::Buffer* part = nullptr;
  // The int8 gemm (spec.features.dot4): a scratch of int8_x_bytes(m, k) for
  // x quantized, which callers that run one kernel at a time may share;
  // null: prepare makes one.
  const gpu::Buffer* xq = nullptr;
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
  gpu::Buffer own_part_;                    // split-k partials when Args::part is null
  std::optional<split_sum::Prepared> sum_;  // split-k: adds the slices, runs the epilogue
  gpu::Buffer own_xq_;                                // int8: xq when Args::xq is null
  std::optional<matvec::xquant::Prepared> quant_;   // int8: x -> xq, recorded first
};

// Compiles (or finds in the cache) spec's kernel and binds args, one bind
// group per row chunk of the matvec upload (whatever rows each chunk has).
// Throws blockq::Error on mismatched shapes.
Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const Args& args);

}  // namespace blockq::gemm
