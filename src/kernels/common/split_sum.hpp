// The split-k sum kernel (split_sum.wgsl): adds the S partial sums a split-k
// matvec or gemm wrote to p [S][W][m][n] in slice order, then runs the
// epilogue (bias, Store, Acc or SiluGate) into y [m, n]. The producing
// kernel's twin reproduces the order (see sum_slices).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::split_sum {

// Weights (partial sets) a split-k producer writes: 2 for SiluGate, else 1.
uint32_t partial_sets(const Hooks& hooks);
// Bytes of the partial buffer for S slices, m tokens and n rows.
uint64_t partial_bytes(uint32_t splits, const Hooks& hooks, uint32_t m, uint32_t n);

// Op::SplitSum spec for `splits` slices and the producer's hooks (prologue
// ignored; Rope is not supported and throws blockq::Error).
KernelSpec plan(const gpu::Context& ctx, uint32_t splits, const Hooks& hooks);
std::string wgsl(const KernelSpec& s);

// The kernel bound to its buffers, recorded once per call.
class Prepared {
 public:
  void record(gpu::Recorder& rec) const;

 private:
  friend Prepared prepare(const gpu::Context&, const KernelSpec&, const gpu::Buffer&, const gpu::Buffer&,
                          gpu::Binding, uint32_t, uint32_t);
  const gpu::Kernel* kernel_ = nullptr;
  gpu::Buffer params_;
  gpu::BindGroup group_;
  gpu::Grid grid_;
};

// Where a split-k producer (its spec, m tokens) writes its partials: the
// caller's scratch `part` when given, else `own`, created here with `label`.
// Throws blockq::Error when the partials pass the binding limit or `part` is
// too small for them.
const gpu::Buffer& partials_buffer(const gpu::Context& ctx, const KernelSpec& producer, uint32_t m,
                                   const gpu::Buffer* part, gpu::Buffer& own, const std::string& label);

// part: the producer's partials (partial_bytes); y: [m, n] f32; bias: [n]
// when the hooks have one. Throws blockq::Error on short buffers.
Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const gpu::Buffer& part, const gpu::Buffer& y,
                 gpu::Binding bias, uint32_t m, uint32_t n);

// The twin's order for one output: v = p[0]; v = v + p[1]; ... (f32).
inline float sum_slices(std::span<const float> p) {
  float v = p[0];
  for (size_t s = 1; s < p.size(); ++s) v = v + p[s];
  return v;
}

}  // namespace blockq::split_sum
