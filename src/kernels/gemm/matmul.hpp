// One entry point for y = x·Wᵀ over m tokens (x [m, k] f32, W [n, k], y [m, n]
// f32): the matvec kernel for m <= the adapter's crossover, the gemm above.
// The crossover is measured per adapter (both kernels timed at m in {1, 2, 4,
// 8, 16, 32} on a representative shape; the largest m where matvec is faster)
// and cached with the tuner's results (tune.hpp).
//
// Linking: this file uses blockq_k_matvec; a binary that calls it must link
// that library too (the blockq tool does).
#pragma once
#include <cstdint>
#include <variant>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/gemm/op.hpp"
#include "kernels/gemm/tune.hpp"
#include "kernels/matvec/op.hpp"

namespace blockq::gemm {

struct CrossoverOptions {
  uint32_t n = 4096, k = 4096;  // the representative shape
  int samples = 5;
  bool use_cache = true, force = false, verbose = false;
};

// The largest m in {1, 2, 4, 8, 16, 32} where matvec beats the (default)
// gemm on (kind, n, k); 0 when the gemm is faster even at m = 1.
uint32_t crossover(const gpu::Context& ctx, const WeightKind& kind, const CrossoverOptions& opt = {});

// Both layouts of one weight (and of the up weight for SiluGate); either may
// be null when the caller knows which kernel m selects.
struct MatmulArgs {
  const matvec::Weights* mv_a = nullptr;
  const matvec::Weights* mv_b = nullptr;
  const Weights* gm_a = nullptr;
  const Weights* gm_b = nullptr;
  const gpu::Buffer* x = nullptr;  // [m, k] f32
  const gpu::Buffer* y = nullptr;  // [m, n] f32
  uint32_t m = 0;
  Hooks hooks;                       // Store, Acc or SiluGate
  std::optional<uint32_t> crossover;  // unset: crossover(ctx, kind) (cached)
  bool tuned = true;                  // gemm: the tuner's tiling (cached), else the default
};

class Matmul {
 public:
  bool uses_gemm() const { return std::holds_alternative<Prepared>(p_); }
  const KernelSpec& spec() const;
  void record(gpu::Recorder& rec) const;

 private:
  friend Matmul matmul(const gpu::Context&, const MatmulArgs&);
  std::variant<matvec::Prepared, Prepared> p_;
};

// Chooses, plans and prepares the kernel (not a hot-path call: it may time
// kernels once per adapter when the cache is cold). Throws blockq::Error when
// the layout the choice needs is missing.
Matmul matmul(const gpu::Context& ctx, const MatmulArgs& args);

}  // namespace blockq::gemm
