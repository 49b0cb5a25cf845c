// Row gather from the matvec layout (op "rows"): the embedding lookup of a
// model whose token table is uploaded once, in the matvec layout, so a tied
// lm_head and the lookup read the same upload. Planning, WGSL (rows.wgsl),
// the prepared dispatch and the CPU twin.
//
// Shapes: ids [m] u32, W [n, k] (any matvec format), y [m, k] f32.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"
#include "kernels/matvec/op.hpp"

namespace blockq::matvec {

// Gathering m rows of an n x k weight of `kind`; the workgroup size comes
// from the device's invocation limits.
KernelSpec plan_rows(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m);
std::string rows_wgsl(const KernelSpec& spec);
// One invocation per (token, 8-element chunk); the same grid for every row chunk.
gpu::Grid rows_grid(const KernelSpec& spec);

class PreparedRows {
 public:
  KernelSpec spec;
  void record(gpu::Recorder& rec) const;  // one dispatch per row chunk of the weight
  // Only row chunk c (a caller that knows which chunks hold its ids).
  void record_chunk(gpu::Recorder& rec, size_t c) const;
  size_t chunks() const { return groups_.size(); }

 private:
  friend PreparedRows prepare_rows(const gpu::Context&, const KernelSpec&, const Weights&, const gpu::Buffer&,
                                   const gpu::Buffer&);
  const gpu::Kernel* kernel_ = nullptr;
  std::vector<gpu::BindGroup> groups_;
  gpu::Grid grid_;
};

// ids: [spec.m] u32, each < n (the caller checks them; the kernel leaves a
// row with an id past every chunk unwritten). y: [spec.m, k] f32.
PreparedRows prepare_rows(const gpu::Context& ctx, const KernelSpec& spec, const Weights& w, const gpu::Buffer& ids,
                          const gpu::Buffer& y);

// CPU twin: y [ids.size(), k], each element scale * code + min in f32 from
// raw_rows (the decode the kernel's snippets perform). Throws blockq::Error on
// an id >= n.
std::vector<float> rows_twin(const HostWeight& w, std::span<const uint32_t> ids);
// float64 reference: the same codes, scales and mins combined in double.
std::vector<double> rows_reference(const HostWeight& w, std::span<const uint32_t> ids);

}  // namespace blockq::matvec
